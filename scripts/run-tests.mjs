#!/usr/bin/env node
// Runs one package's node:test files through tsx. Usage: run-tests.mjs [dir-or-file ...] (default: src test)
// Files named *.test.ts are found recursively; the spec reporter prints the "ℹ pass N" lines scripts/test.sh sums.
//
// A test run must end, whatever a test does: a test that hangs is cancelled after VMS_TEST_FILE_TIMEOUT_MS
// (node's --test-timeout), a file whose tests are done but whose process stays alive (a handle left open)
// fails a grace period later, naming what is open (test-file-exit.mjs; not --test-force-exit, which loses
// results: nodejs/node#64833), and the whole package is killed, process group and all, after
// VMS_TEST_PACKAGE_TIMEOUT_MS, naming what it was doing. CI then reports a failure instead of timing out.
//
// Test files run in separate processes; a suite that reports across files (the chaos table, test/chaos)
// writes `*.txt` reports into VMS_TEST_REPORT_DIR, a fresh directory per run, printed here at the end.
import { readdirSync, statSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn, spawnSync } from 'node:child_process';

const fileTimeoutMs = Number(process.env.VMS_TEST_FILE_TIMEOUT_MS ?? 300_000);
const packageTimeoutMs = Number(process.env.VMS_TEST_PACKAGE_TIMEOUT_MS ?? 30 * 60_000);

const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith('--'));
const roots = dirs.length > 0 ? dirs : ['src', 'test'];
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full);
    else if (name.endsWith('.test.ts')) files.push(full);
  }
};
for (const root of roots) {
  if (!existsSync(root)) continue;
  if (statSync(root).isDirectory()) walk(root);
  else files.push(root); // a single test file
}
files.sort();
if (files.length === 0) {
  console.log('no test files');
  process.exit(0);
}

const reportDir = mkdtempSync(join(tmpdir(), 'vms-test-report-'));
const printReports = () => {
  try {
    for (const name of readdirSync(reportDir).sort()) {
      if (name.endsWith('.txt')) process.stdout.write(readFileSync(join(reportDir, name), 'utf8'));
    }
    rmSync(reportDir, { recursive: true, force: true });
  } catch {
    // a report is a convenience; the test results stand without it
  }
};

const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    '--import',
    join(dirname(fileURLToPath(import.meta.url)), 'test-file-exit.mjs'),
    `--test-timeout=${fileTimeoutMs}`,
    ...passthrough,
    ...files,
  ],
  // its own process group, so a timeout kills the test files' processes and what they started
  { stdio: 'inherit', env: { ...process.env, FORCE_COLOR: '0', VMS_TEST_REPORT_DIR: reportDir }, detached: true },
);

const killGroup = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
};
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    killGroup('SIGTERM');
    setTimeout(() => killGroup('SIGKILL'), 5000).unref();
  });
}

const watchdog = setTimeout(() => {
  console.log(`\nrun-tests: the tests of ${process.cwd()} ran over ${packageTimeoutMs} ms; killing them`);
  console.log('ℹ fail 1');
  // name what was still running: the test file processes and what they started
  const ps = spawnSync('ps', ['-o', 'pid,etime,args', '-g', String(child.pid)], { encoding: 'utf8' });
  console.log(ps.stdout ?? '');
  killGroup('SIGTERM');
  setTimeout(() => killGroup('SIGKILL'), 5000).unref();
}, packageTimeoutMs);
watchdog.unref();

child.on('exit', (code, signal) => {
  clearTimeout(watchdog);
  killGroup('SIGKILL'); // anything a test file left behind in the group
  printReports();
  process.exit(code ?? (signal ? 1 : 0));
});
