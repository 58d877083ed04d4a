// `npm run bench`: every benchmark of test/bench, one after the other (they share the machine's cores, so
// never at once), in quick mode unless `--full`, then one summary table: bench, what, this run's figures,
// target, and the recorded baseline (full runs on a quiet machine, docs/benchmarks.md).
//   npm run bench [-- --full] [-- --only sip-parse,forward]
// Each bench runs as a child process in its own process group with a time limit (quick 4 min, 12 for
// keepalive-callgrind, 8 for edge-callgrind, fleet and memory-per-device, 10 for fleet-kill, 6 for edge and
// register-storm; full 20 min, 90 for fleet-kill)
// and ends with one `bench-summary:` line (summary.ts). A bench that crashes, overruns or prints no
// summary is a failed row and makes the exit code 1; a target not met in quick mode is only reported
// (quick figures are indicative). keepalive-callgrind needs valgrind (`npm run bench` installs it through
// scripts/setup.sh --bench); without it the row says "not run: valgrind missing".
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseSummary, type BenchSummary } from './summary.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');

interface Bench {
  readonly name: string;
  /** Binaries it needs beyond what `npm test` installs. */
  readonly needs?: readonly string[];
  /** The recorded figure of a full run (docs/benchmarks.md). */
  readonly baseline: string;
  /** Time limit in quick mode, when longer than the default (valgrind runs the server ~50× slower). */
  readonly quickLimitMin?: number;
  /** Time limit in full mode, when longer than the default 20 min (fleet-kill: 300,000 devices registering at 500/s). */
  readonly fullLimitMin?: number;
}

const BENCHES: readonly Bench[] = [
  { name: 'sip-parse', baseline: '6.6 µs CPU, 157k msg/s' },
  { name: 'keepalive', baseline: '15,000/s held; 39.8–55.3 µs CPU per keepalive at 10–15k/s' },
  { name: 'keepalive-callgrind', needs: ['valgrind', 'callgrind_control', 'kamailio'], baseline: '42.7–43.3k instructions per keepalive, Kamailio 25.2–25.3k (1.69–1.72×), echo 22.0–22.4k (0.87–0.89×); --redis: 53.4–54.7k (2.12–2.16×)', quickLimitMin: 12 },
  { name: 'renewal-callgrind', needs: ['valgrind', 'callgrind_control'], baseline: 'per renewed device, platform + redis-server: batch 10 5.8–6.5k + 14.7k, batch 500 2.2k + 11.5k' },
  { name: 'register-callgrind', needs: ['valgrind', 'callgrind_control', 'kamailio'], baseline: '1.87–2.31M instructions per REGISTER + digest, Kamailio 92.9k (20–25×)', quickLimitMin: 12 },
  { name: 'forward', baseline: 'p99 +0.66–0.93 ms pinned; 0.66–0.70× direct (bare proxy 0.70–0.77×)' },
  { name: 'invite', baseline: '2,000 held, play p50 8–12 ms sequential, RSS 218 MB' },
  { name: 'device-flood', baseline: '25–33 ms CPU per 61.6 KiB catalog, flat to 105,000 channels (load 18–24: event-loop max 270–530 ms wall)' },
  { name: 'routing', baseline: '1M rules: decide 1.29/3.49 µs, 74.7 MB, SWRR 0.38 µs; sliced build 3.65 s CPU (loaded machine)' },
  { name: 'routing-warm-rss', baseline: 'idle kept-warm build thread: +32.9 MB RSS, median of 3 (thread alone +32.7 MB), load 11–13' },
  { name: 'routing-mysql', baseline: '1M rules from MariaDB, kept build thread: 14.7 s wall at load 14 (2.3 s CPU of the build thread, reading 10.7 s)' },
  { name: 'memory-per-device', needs: ['kamailio'], baseline: '1.30 KB RSS per device at 100,000 standalone (Kamailio 0.92 KB)', quickLimitMin: 8 },
  { name: 'recovery', baseline: '200/200 live sessions recovered after kill -9, one INVITE each; all RTP back 32.9 s after the kill (window 15 s)' },
  { name: 'register-storm', needs: ['sipp'], baseline: '100,000 at load 3-17: all registered in 752 s, 0 lost, keepalive p99 1.2 s, none offline (load 15-24: 60,799 by 900 s); 10,000: 0 lost, p99 260 ms at load 5', quickLimitMin: 6 },
  { name: 'fleet', needs: ['kamailio', 'sipp'], baseline: 'quick at load ~20: keepalive 4.9× Kamailio (4.5× with Redis), REGISTER 23×, clean rate 0 vs ≥ 4,000/s; storm: 0 keepalives lost', quickLimitMin: 8 },
  { name: 'fleet-kill', needs: ['sipp'], baseline: 'not run in full yet (300,000 devices); quick 5,000 at load 4-10: 1,604 devices of the killed shard back in 58.8 s, 0 lost, 0 survivors offline', quickLimitMin: 10, fullLimitMin: 90 },
  { name: 'edge', needs: ['kamailio', 'sipp'], baseline: 'full at load ~15–18: edge 99.8 vs Kamailio 51.6 µs (1.94×); shard 54.0 µs through edge vs 50.3 direct; 2× ceiling: 0 of 60,000 lost, probes all answered, p99 49–55 ms', quickLimitMin: 6 },
  { name: 'edge-callgrind', needs: ['valgrind', 'callgrind_control', 'kamailio'], baseline: 'steady state, 4 runs: edge 99,048–103,888 vs Kamailio 62,040 instructions per forwarded keepalive (1.60–1.67×; GC 2–5 %, JIT 0 %)', quickLimitMin: 8 },
  { name: 'fuzz', baseline: '1,000,000 inputs over 9 parsers, 0 crashes (docs/chaos.md)' },
];
/** Files of test/bench that are not benchmarks of their own. */
const HELPERS = new Set(['run-all.ts', 'summary.ts', 'bare-proxy.ts', 'register-driver.ts', 'main-thread-cpu.ts', 'routing-table.ts', 'callgrind-v8.ts', 'redis-callgrind.ts']);

const { values: args } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const FULL = args.full === true;
const ONLY = args.only === undefined ? null : new Set(args.only.split(','));
const limitMs = (b: Bench): number => (FULL ? (b.fullLimitMin ?? 20) : (b.quickLimitMin ?? 4)) * 60_000;

interface Row {
  readonly name: string;
  readonly what: string;
  readonly figures: string;
  readonly target: string;
  readonly baseline: string;
  readonly failed: boolean;
}

const onPath = (bin: string): boolean => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;

/** Runs one bench, its output passed through indented; its summary, or why there is none. */
async function run(bench: Bench): Promise<{ summary?: BenchSummary; error?: string; seconds: number }> {
  const name = bench.name;
  const limit = limitMs(bench);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, `${name}.ts`), ...(FULL ? [] : ['--quick'])], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: a timeout ends what it started too
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  let output = '';
  let errors = '';
  const pass = (chunk: Buffer, into: 'out' | 'err'): void => {
    const text = chunk.toString();
    if (into === 'out') output += text;
    else errors = (errors + text).slice(-4000);
    process.stdout.write(text.replace(/^(?=.)/gm, '    '));
  };
  child.stdout.on('data', (c: Buffer) => pass(c, 'out'));
  child.stderr.on('data', (c: Buffer) => pass(c, 'err'));
  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // already gone
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup('SIGTERM');
    setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
  }, limit);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  const summary = parseSummary(output);
  if (timedOut) return { error: `over the ${limit / 60_000} min limit`, seconds };
  if (code !== 0) return { error: `exit ${code}: ${lastLine(errors) || lastLine(output)}`, seconds };
  if (summary === undefined) return { error: 'printed no summary', seconds };
  return { summary, seconds };
}

const lastLine = (text: string): string => text.trim().split('\n').at(-1)?.trim().slice(0, 120) ?? '';

async function main(): Promise<void> {
  const present = readdirSync(HERE).filter((f) => f.endsWith('.ts') && !HELPERS.has(f)).map((f) => f.slice(0, -3));
  const known = new Set(BENCHES.map((b) => b.name));
  const rows: Row[] = [];
  // a bench added to the folder but not to the table above is reported, not silently left out
  for (const name of present.filter((n) => !known.has(n))) {
    rows.push({ name, what: '', figures: 'not run: not in run-all.ts BENCHES', target: '', baseline: '', failed: true });
  }
  const selected = BENCHES.filter((b) => ONLY === null || ONLY.has(b.name));
  const t0 = performance.now();
  for (const bench of selected) {
    const missing = (bench.needs ?? []).filter((b) => !onPath(b));
    if (missing.length > 0) {
      process.stdout.write(`\n== ${bench.name}: not run, ${missing.join(', ')} missing (scripts/setup.sh --bench installs it)\n`);
      rows.push({ name: bench.name, what: '', figures: `not run: ${missing.join(', ')} missing`, target: '', baseline: bench.baseline, failed: false });
      continue;
    }
    process.stdout.write(`\n== ${bench.name} (${FULL ? 'full' : 'quick'})\n`);
    const r = await run(bench);
    const s = r.summary;
    rows.push(
      s === undefined
        ? { name: bench.name, what: '', figures: `FAILED: ${r.error ?? ''}`, target: '', baseline: bench.baseline, failed: true }
        : {
            name: bench.name,
            what: s.what,
            figures: `${s.figures} (${r.seconds.toFixed(0)} s)`,
            target: s.target === '' ? '—' : `${s.target}: ${s.met === true ? 'met' : 'not met'}`,
            baseline: bench.baseline,
            failed: false,
          },
    );
  }
  const header: Row = { name: 'bench', what: 'what', figures: `this run (${FULL ? 'full' : 'quick'})`, target: 'target', baseline: 'baseline (recorded, full)', failed: false };
  const cells = (r: Row): string[] => [r.name, r.what, r.figures, r.target, r.baseline];
  process.stdout.write(`\nbenchmarks, ${((performance.now() - t0) / 1000).toFixed(0)} s in all${FULL ? '' : '; quick mode: smaller counts, indicative figures (--full for the recorded method)'}\n\n`);
  for (const [i, r] of [header, ...rows].entries()) {
    process.stdout.write(`| ${cells(r).map((c) => c.replaceAll('|', '/')).join(' | ')} |\n`);
    if (i === 0) process.stdout.write(`|${cells(r).map(() => '---').join('|')}|\n`);
  }
  if (rows.some((r) => r.failed)) process.exitCode = 1;
}

await main();
