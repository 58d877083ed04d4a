// Memory per registered device (issue 11 target 3: ≤ 2 KB per device at 100,000 and 1,000,000), the
// platform beside Kamailio in the same run.
// Run from the repository root: npx tsx test/bench/memory-per-device.ts [--devices 100000,1000000]
//   [--modes standalone,redis] [--settle 40] [--no-kamailio] [--heap-snapshot DIR]
//   [--trace-gc | --trace-gc-verbose] (the instance runs with V8's --trace-gc; its collections during the
//   settle are printed; verbose adds the memory reducer's decisions, "Memory reducer: low/high alloc")
//   [--node-args "FLAGS"] (extra Node/V8 flags for the instance, space-separated: for experiments)
//   [--cpu-prof DIR] (the instance writes a V8 CPU profile of its whole run to DIR when it stops)
//   [--quick]  (20,000 devices, standalone + Redis ownership, Kamailio: ~3 min)
//
// For each device count N and mode:
//  1. starts an instance as `npm run signaling` does (embedded SQLite store in a fresh data directory, no
//     device password; mode `redis` adds a redis-server and REDIS_URL, so every REGISTER also claims the
//     device's ownership in Redis, SPEC §3; keepalive interval 3600 s so no device goes offline or loses
//     its lease during the run), waits 5 s after it is ready, then reads its RSS
//     (/proc/<pid>/status VmRSS) and heap used (its own /metrics, nodejs_heap_size_used_bytes);
//  2. registers N distinct 20-digit device ids with the closed-loop UDP driver of register-driver.ts (the
//     REGISTER of test/sipp/register-only.xml, at most 100 outstanding, each id resent until its 200, over
//     16 source ports). SIPp was the first driver: at a fixed rate above the server's pace (5,000/s on
//     this shared 2-core machine) it lost most registrations and each pass had to start over, so 1,000,000
//     was out of reach; the closed loop runs at whatever pace the server answers;
//  3. waits `--settle` seconds (default 40: RFC 3261 §17.2.2 Timer J is 64·T1 = 32 s for the UDP server
//     transactions, so none is left) with no traffic, then reads RSS and heap used again.
// The figure is (RSS after − RSS before) / N. No forced GC: RSS growth is what the operator pays, and V8
// keeps garbage between collections the same way in production; heap used is printed beside it as an
// indication of the live JS objects (it includes the garbage not yet collected).
// The bench forces nothing; the instance itself gives its heap back 3 s and 32 s into the calm after a
// storm, as it does in production (services/signaling/src/memory/storm-release.ts).
// Kamailio (Debian package, /usr/sbin/kamailio, test/bench/kamailio/registrar.cfg: usrloc in memory, no
// auth) gets the same N registrations from the same scenario in the same run; its figure is the growth
// of the PSS summed over all its processes (/proc/<pid>/smaps_rollup, shared memory counted once), the
// method of the reference harness (mem-per-device.sh).
// `--heap-snapshot DIR` writes a V8 heap snapshot of the standalone instance after the settle
// (--heapsnapshot-signal), for reading its retainers in Chrome DevTools (docs/benchmarks.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, requireBinary, sleep, startRedis, waitFor, type RedisServer } from '@vms/harness';
import { formatBreakdown, memoryBreakdown } from './memory-breakdown.ts';
import { registerDevices } from './register-driver.ts';
import { startBenchPlatform } from './bench-platform.ts';
import { isQuick, printSummary } from './summary.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SERVER_ID = '34020000002000000001';
const REALM = SERVER_ID.slice(0, 10);
const KAMAILIO = '/usr/sbin/kamailio';
const TARGET_BYTES = 2048;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}
const QUICK = isQuick();
const COUNTS = arg('devices', QUICK ? '20000' : '100000,1000000').split(',').map(Number);
const MODES = arg('modes', 'standalone,redis').split(',').filter((m): m is 'standalone' | 'redis' => m === 'standalone' || m === 'redis');
const SETTLE_S = Number(arg('settle', '40'));
const WITH_KAMAILIO = !process.argv.includes('--no-kamailio');
const SNAPSHOT_DIR = process.argv.includes('--heap-snapshot') ? arg('heap-snapshot', '') : null;
const TRACE_GC = process.argv.includes('--trace-gc') || process.argv.includes('--trace-gc-verbose');
const TRACE_GC_VERBOSE = process.argv.includes('--trace-gc-verbose');
const NODE_ARGS = arg('node-args', '').split(' ').filter((a) => a !== '');
const CPU_PROF_DIR = process.argv.includes('--cpu-prof') ? arg('cpu-prof', '') : null;

const kib = (pid: number, file: string, key: string): number => {
  const line = readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\n').find((l) => l.startsWith(`${key}:`));
  return Number(line?.split(/\s+/)[1] ?? NaN);
};
const rssKiB = (pid: number): number => kib(pid, 'status', 'VmRSS');

const deviceIds = (n: number): string[] => Array.from({ length: n }, (_, i) => `3402${String(i + 1).padStart(16, '0')}`);

/** Registers every id at host:port (register-driver.ts), printing how it went; the seconds it took. */
async function registerAll(port: number, ids: readonly string[]): Promise<number> {
  // The driver's default 30 min give-up is ~550/s at 1,000,000; this shared machine has answered 190–300/s.
  const timeoutMs = Math.max(30 * 60_000, ids.length * 6);
  const r = await registerDevices({ host: '127.0.0.1', port, deviceIds: ids, serverId: SERVER_ID, realm: REALM, timeoutMs });
  process.stdout.write(`  registered ${r.registered} in ${r.seconds.toFixed(1)} s (${(r.registered / r.seconds).toFixed(0)}/s, ${r.retransmissions} retransmissions)\n`);
  return r.seconds;
}

async function heapBytes(httpPort: string, metric: 'used' | 'total' = 'used'): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`nodejs_heap_size_${metric}_bytes `));
  return Number(line?.split(' ')[1] ?? NaN);
}

interface Row {
  readonly server: string;
  readonly devices: number;
  readonly seconds: number;
  readonly beforeKiB: number;
  readonly afterKiB: number;
  readonly heapBefore: number;
  readonly heapAfter: number;
}
const perDevice = (r: Row): number => ((r.afterKiB - r.beforeKiB) * 1024) / r.devices;

async function measureProject(n: number, mode: 'standalone' | 'redis', ids: readonly string[]): Promise<Row> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vms-memory-bench-'));
  let redis: RedisServer | undefined;
  const snapshot = SNAPSHOT_DIR !== null && SNAPSHOT_DIR !== '' && mode === 'standalone';
  try {
    if (mode === 'redis') redis = await startRedis();
    const server = await startBenchPlatform({
      name: `signaling-${mode}`,
      dataDir,
      nodeArgs: [...(snapshot ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAPSHOT_DIR}`] : []), ...(TRACE_GC ? ['--trace-gc'] : []), ...(TRACE_GC_VERBOSE ? ['--trace-gc-verbose'] : []), ...(CPU_PROF_DIR === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`]), ...NODE_ARGS],
      env: {
        VMS_AUTH_SIGNING_KEY: 'memory-bench-signing-key-0123456789abcdef',
        VMS_GB28181_SIP_PASSWORD: '',
        REDIS_URL: redis?.url ?? '',
        VMS_GB28181_SIP_INSTANCE_ID: mode === 'redis' ? 'bench-a' : undefined,
        // The driver sends no keepalives; a one-hour expected interval keeps every device online and its
        // ownership lease live for the whole run (1,000,000 take longer than the default 3 × 60 s window),
        // as keepalives would. Left at 60 s, the first devices went offline and lost their leases mid-run.
        VMS_GB28181_SIP_KEEPALIVE_INTERVAL: '3600',
        LOG_LEVEL: 'warn',
      },
      startTimeoutMs: 60_000,
    });
    try {
      const pid = server.pid;
      if (pid === undefined) throw new Error('no server pid');
      const httpPort = server.env['SERVER_PORT'] ?? '';
      await sleep(5000);
      const beforeKiB = rssKiB(pid);
      const heapBefore = await heapBytes(httpPort);
      const breakdown = async (): Promise<string> => formatBreakdown(memoryBreakdown(pid, await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text()));
      process.stdout.write(`  before: ${await breakdown()}\n`);
      const seconds = await registerAll(Number(server.env['VMS_GB28181_SIP_PORT']), ids);
      const tailAtEnd = server.output().slice(-300); // the output is kept as its last 256 KiB: find where the settle starts by its text
      // What the settle does to each part, every 10 s (each /metrics read is a small allocation of its own)
      for (let t = 0; t < SETTLE_S; t += 10) {
        process.stdout.write(`  +${t} s: ${await breakdown()}\n`);
        await sleep(Math.min(10, SETTLE_S - t) * 1000);
      }
      if (TRACE_GC) {
        // the collections of the settle 
        const out = server.output();
        const lines = out.slice(tailAtEnd === '' ? 0 : out.lastIndexOf(tailAtEnd) + tailAtEnd.length).split('\n').filter((l) => /Mark-Compact|Scavenge|Minor|Memory reducer/.test(l));
        process.stdout.write(`  collections during the settle (--trace-gc): ${lines.length}\n${lines.map((l) => `    ${l.trim()}\n`).join('')}`);
        const fulls = out.split('\n').filter((l) => l.includes('Mark-Compact'));
        process.stdout.write(`  the last mark-compacts kept in the output:\n${fulls.slice(-12).map((l) => `    ${l.trim()}\n`).join('')}`);
      }
      const afterKiB = rssKiB(pid);
      const heapAfter = await heapBytes(httpPort);
      // What V8 holds committed after the settle (heap used is what is live or not yet collected in it):
      // RSS above it is the allocator's (Buffers, SQLite, native) and the code.
      process.stdout.write(`  after the settle: ${await breakdown()}\n`);
      if (snapshot) {
        const before = new Set(readdirSync(SNAPSHOT_DIR));
        process.kill(pid, 'SIGUSR2');
        await waitFor(() => readdirSync(SNAPSHOT_DIR).some((f) => !before.has(f) && f.endsWith('.heapsnapshot')), { timeoutMs: 300_000 });
        // The file appears empty and grows while V8 writes it: stopping the server after a fixed 5 s
        // left an empty file at 100,000 devices. Done when its size has held for 5 s.
        const file = join(SNAPSHOT_DIR, readdirSync(SNAPSHOT_DIR).find((f) => !before.has(f) && f.endsWith('.heapsnapshot')) ?? '');
        let size = -1;
        await waitFor(
          () => {
            const now = statSync(file).size;
            const held = now > 0 && now === size;
            size = now;
            return held;
          },
          { timeoutMs: 600_000, intervalMs: 5000 },
        );
        process.stdout.write(`  heap snapshot written to ${SNAPSHOT_DIR}\n`);
      }
      return { server: mode === 'redis' ? 'project + Redis ownership' : 'project standalone', devices: n, seconds, beforeKiB, afterKiB, heapBefore, heapAfter };
    } finally {
      await server.stop({ timeoutMs: 20_000 });
    }
  } finally {
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** PSS of Kamailio's processes (the main one and its children), KiB. */
function kamailioPssKiB(main: number): number {
  const kids = readFileSync(`/proc/${main}/task/${main}/children`, 'utf8').trim().split(/\s+/).filter((s) => s !== '').map(Number);
  return [main, ...kids].reduce((sum, p) => sum + kib(p, 'smaps_rollup', 'Pss'), 0);
}

async function measureKamailio(n: number, ids: readonly string[]): Promise<Row> {
  const port = await freePort({ udp: true });
  const run = mkdtempSync(join(tmpdir(), 'vms-memory-bench-kam-'));
  const shmMb = Math.max(256, Math.ceil(n / 1000) * 2); // usrloc keeps ~1 KB per contact in shared memory
  const kam: ChildProcess = spawn(
    KAMAILIO,
    ['-f', join(HERE, 'kamailio', 'registrar.cfg'), '-DD', '-E', '-m', String(shmMb), '-M', '8', '-n', '2', '-x', 'fm', '-P', join(run, 'kamailio.pid'), '-A', `BENCH_LISTEN=udp:127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  kam.stderr?.on('data', (c: Buffer) => (errors = (errors + c.toString()).slice(-4000)));
  try {
    const pid = kam.pid;
    if (pid === undefined) throw new Error('kamailio did not start');
    await waitFor(() => readFileSync('/proc/net/udp', 'utf8').includes(`:${port.toString(16).toUpperCase().padStart(4, '0')} `), { timeoutMs: 10_000 }).catch(() => {
      throw new Error(`kamailio did not listen:\n${errors}`);
    });
    await sleep(2000);
    const beforeKiB = kamailioPssKiB(pid);
    const seconds = await registerAll(port, ids);
    await sleep(5000); // stateless replies: nothing to drain
    const afterKiB = kamailioPssKiB(pid);
    return { server: 'Kamailio (usrloc)', devices: n, seconds, beforeKiB, afterKiB, heapBefore: NaN, heapAfter: NaN };
  } finally {
    kam.kill('SIGTERM');
    await new Promise((r) => (kam.exitCode !== null ? r(null) : kam.once('exit', r)));
    rmSync(run, { recursive: true, force: true });
  }
}

/** One line per measurement as soon as it is taken (a later failure does not lose it). */
function report(r: Row | undefined): void {
  if (r === undefined) return;
  const heap = Number.isNaN(r.heapBefore) ? '' : `, heap used ${((r.heapAfter - r.heapBefore) / r.devices).toFixed(0)} B/device`;
  process.stdout.write(`  ${r.server}: ${(r.beforeKiB / 1024).toFixed(0)} → ${(r.afterKiB / 1024).toFixed(0)} MB, ${perDevice(r).toFixed(0)} B/device${heap}\n`);
}

async function main(): Promise<void> {
  if (MODES.includes('redis')) requireBinary('redis-server', 'redis-server');
  if (WITH_KAMAILIO && !existsSync(KAMAILIO)) throw new Error(`${KAMAILIO} missing: run \`npm run setup -- --bench\` (apt package kamailio)`);
  const rows: Row[] = [];
  for (const n of COUNTS) {
    const ids = deviceIds(n);
    for (const mode of MODES) {
      process.stdout.write(`${n} devices, project ${mode}:\n`);
      rows.push(await measureProject(n, mode, ids));
      report(rows.at(-1));
    }
    if (WITH_KAMAILIO) {
      process.stdout.write(`${n} devices, Kamailio:\n`);
      rows.push(await measureKamailio(n, ids));
      report(rows.at(-1));
    }
  }

  const mb = (kb: number): string => (kb / 1024).toFixed(0);
  const cell = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
  process.stdout.write(`\nmemory per registered device (RSS growth; Kamailio: PSS of all its processes), ${SETTLE_S} s after the last registration, no forced GC\n`);
  process.stdout.write(`${cell(['server', 'devices', 'registered in', 'RSS before → after', 'bytes/device', 'heap used before → after', 'heap bytes/device', 'ratio to Kamailio'])}\n|---|---|---|---|---|---|---|---|\n`);
  for (const r of rows) {
    const kam = rows.find((k) => k.server.startsWith('Kamailio') && k.devices === r.devices);
    const heap = Number.isNaN(r.heapBefore) ? '–' : `${(r.heapBefore / 2 ** 20).toFixed(0)} → ${(r.heapAfter / 2 ** 20).toFixed(0)} MB`;
    const heapPer = Number.isNaN(r.heapBefore) ? '–' : ((r.heapAfter - r.heapBefore) / r.devices).toFixed(0);
    const ratio = kam === undefined || kam === r ? '–' : `${(perDevice(r) / perDevice(kam)).toFixed(1)}×`;
    process.stdout.write(`${cell([r.server, r.devices, `${r.seconds.toFixed(0)} s`, `${mb(r.beforeKiB)} → ${mb(r.afterKiB)} MB`, perDevice(r).toFixed(0), heap, heapPer, ratio])}\n`);
  }
  const project = rows.filter((r) => !r.server.startsWith('Kamailio'));
  const worst = project.length === 0 ? NaN : Math.max(...project.map(perDevice));
  printSummary({
    bench: 'memory-per-device',
    what: `RSS growth per registered device, ${COUNTS.join('/')} devices`,
    figures: project.map((r) => `${r.server.replace('project ', '')} ${r.devices}: ${perDevice(r).toFixed(0)} B`).join('; ') +
      rows.filter((r) => r.server.startsWith('Kamailio')).map((r) => `; Kamailio ${r.devices}: ${perDevice(r).toFixed(0)} B`).join(''),
    target: `≤ ${TARGET_BYTES} B/device`,
    met: project.length === 0 ? null : worst <= TARGET_BYTES,
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
