// Owner-forwarding benchmark (SPEC ROUTE-3..5): the same control request sent directly to the device's
// owner (node-a) and to another instance (node-b) that forwards it, on loopback, with real Redis,
// MariaDB and two signaling instances as child processes.
// Run from the repository root: npx tsx test/bench/forward.ts [--count N] [--concurrency C] [--runs R] [--quick]
//   (quick: 300 requests, one run, ~1 min with the stores' start)
//   [--cpu-prof DIR]   (V8 CPU profiles of both instances, written to DIR/node-a, DIR/node-b at the end)
//
// Endpoint: GET /vms/device/catalog/sync?deviceId= (catalog progress, routed by device). Its handler
// reads the device row (MariaDB) and the owner's own state and sends no SIP, so the figures measure
// routing: direct = auth + owner lookup (self) + handler; forwarded = the same on the owner, plus auth,
// owner lookup and one keep-alive HTTP exchange on node-b. The owner is seeded in Redis, as a device's
// REGISTER would write it.
//
// Method (the machine is shared, so latency is noisy; see README "Performance"):
//  - latency: one request at a time, direct and forwarded requests interleaved one by one (the order
//    of each pair alternates), so both paths see the same moments of the machine; per run p50 / p99 of
//    each path; R runs, the median run and the range are printed. Each run is made twice: with the
//    processes on all CPUs, and with every process of the bench pinned to one CPU (taskset). On this
//    VM a hand-off between processes on different vCPUs (client → node → MariaDB → node → client)
//    waits for the other vCPU to wake, 0.1–2 ms at random: unpinned, direct requests alone show p90
//    1.5 ms for a p50 of 0.66 ms, pinned p90 0.7 ms. Pinned latency measures the code; the target is
//    judged on it, and the unpinned figures are printed beside it;
//  - throughput: C requests in flight, direct, forwarded and bare-proxied runs alternating, median and
//    range of R. "Bare" is a baseline in the same run: a bare node:http + undici proxy (bare-proxy.ts,
//    no framework, no routing, same forward headers) in front of node-a, the floor for any Node.js
//    forwarder; node-b's CPU per request above it is the platform's own routing work;
//  - CPU per request of every process on the path, from the kernel's counters: node-a and node-b
//    (/proc), this client (process.cpuUsage) and redis-server (INFO cpu). MariaDB serves the same query
//    on both paths and is left out. The CPU-bound ratio (direct CPU / forwarded CPU, all processes
//    summed) is what the throughput ratio becomes when the cores are saturated by this bench alone:
//    it is far less noisy than req/s on a busy machine.
//  - separate hosts: each instance on its own machine (as deployed) serves at most 1 / (its CPU per
//    request) requests per second per core; the forwarded path is bounded by its busiest process. The
//    estimate from the CPU figures above is printed, labelled as an estimate: one 2-core machine cannot
//    give node-a, node-b and the client a core each.
// Targets (issue #4): p99 overhead ≤ 1 ms; forwarded throughput ≥ 0.7 × direct.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { freePort } from '@vms/harness';
import { isQuick, printSummary } from './summary.ts';
import { api, SECRET, seedDevice, seedOwner, startInstance, startStores, token, type Instance, type Stores } from '../integration/routing-cluster.ts';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string' },
    concurrency: { type: 'string', default: '16' },
    runs: { type: 'string' },
    'cpu-prof': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
const QUICK = args.quick === true || isQuick();
const PROFILE_DIR = args['cpu-prof'] === undefined ? null : resolve(args['cpu-prof']);
const COUNT = Number(args.count ?? (QUICK ? '300' : '3000'));
const CONCURRENCY = Number(args.concurrency);
const RUNS = Number(args.runs ?? (QUICK ? '1' : '3'));
const WARMUP = QUICK ? 300 : 1000;
const DEV = '34020000001320000001';
const PATH = `/vms/device/catalog/sync?deviceId=${DEV}`;
const OK = Buffer.from('{"code":200,');
const TARGET_P99_OVERHEAD_MS = 1;
const TARGET_THROUGHPUT_RATIO = 0.7;
// Request logs at info would be written twice on the forwarded path; the bench measures routing.
const QUIET = { LOG_LEVEL: 'warn' };

async function once(pool: Pool, auth: string): Promise<number> {
  const s = performance.now();
  const res = await pool.request({ method: 'GET', path: PATH, headers: { 'blade-auth': auth } });
  const body = Buffer.from(await res.body.arrayBuffer());
  const ms = performance.now() - s;
  if (res.statusCode !== 200 || !body.subarray(0, OK.length).equals(OK)) throw new Error(`unexpected answer ${res.statusCode} ${body.toString()}`);
  return ms;
}

/** `count` requests, `concurrency` in flight; wall time in ms. */
async function flood(pool: Pool, auth: string, count: number, concurrency: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      await once(pool, auth);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - t0;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const CLK_TCK = 100; // Linux USER_HZ

/** utime + stime of a process, ms (/proc/<pid>/stat fields 14 and 15); NaN where /proc is missing. */
function procCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** redis-server's own CPU, ms (INFO cpu: used_cpu_sys + used_cpu_user, seconds). */
async function redisCpuMs(stores: Stores): Promise<number> {
  const info = await stores.redisClient.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return (field('used_cpu_sys') + field('used_cpu_user')) * 1000;
}

interface CpuSample {
  a: number;
  b: number;
  /** The bare proxy (baseline). */
  bare: number;
  client: number;
  redis: number;
}

interface Pids {
  a: number | undefined;
  b: number | undefined;
  bare: number | undefined;
}

async function cpuNow(pids: Pids, stores: Stores): Promise<CpuSample> {
  const self = process.cpuUsage();
  return { a: procCpuMs(pids.a), b: procCpuMs(pids.b), bare: procCpuMs(pids.bare), client: (self.user + self.system) / 1000, redis: await redisCpuMs(stores) };
}

interface Throughput {
  rps: number;
  /** CPU ms per request, per process. */
  cpu: CpuSample;
}

const total = (c: CpuSample): number => c.a + c.b + c.bare + c.client + c.redis;

interface Range {
  median: number;
  min: number;
  max: number;
}

const range = (xs: readonly number[]): Range => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const fmtRange = (r: Range, d: number): string => `${r.median.toFixed(d)} (${r.min.toFixed(d)}–${r.max.toFixed(d)})`;

/** This process and all its descendants (the stores and instances it started), from /proc. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number): void => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** Pins every thread of the bench's process tree to `cpus` (taskset list syntax, e.g. "0" or "0-1"). */
function pinTree(cpus: string): void {
  for (const pid of processTree(process.pid)) spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

const ALL_CPUS = `0-${cpus().length - 1}`;

/** Latency: one request at a time, direct and forwarded interleaved one by one. */
async function latency(direct: Pool, forwarded: Pool, auth: string, count: number): Promise<{ d: number[]; f: number[] }> {
  const d: number[] = [];
  const f: number[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      d.push(await once(direct, auth));
      f.push(await once(forwarded, auth));
    } else {
      f.push(await once(forwarded, auth));
      d.push(await once(direct, auth));
    }
  }
  return { d, f };
}

interface LatencyRuns {
  dP50: number[];
  dP99: number[];
  fP50: number[];
  fP99: number[];
  o50: number[];
  o99: number[];
}

function latencyRun(into: LatencyRuns, r: { d: number[]; f: number[] }): void {
  const [d, f] = [[...r.d].sort((x, y) => x - y), [...r.f].sort((x, y) => x - y)];
  into.dP50.push(quantile(d, 0.5));
  into.dP99.push(quantile(d, 0.99));
  into.fP50.push(quantile(f, 0.5));
  into.fP99.push(quantile(f, 0.99));
  into.o50.push(quantile(f, 0.5) - quantile(d, 0.5));
  into.o99.push(quantile(f, 0.99) - quantile(d, 0.99));
}

const emptyRuns = (): LatencyRuns => ({ dP50: [], dP99: [], fP50: [], fP99: [], o50: [], o99: [] });

async function throughput(pool: Pool, pids: Pids, stores: Stores, auth: string, count: number, concurrency: number): Promise<Throughput> {
  const c0 = await cpuNow(pids, stores);
  const wallMs = await flood(pool, auth, count, concurrency);
  const c1 = await cpuNow(pids, stores);
  const per = (k: keyof CpuSample): number => (c1[k] - c0[k]) / count;
  return { rps: (count / wallMs) * 1000, cpu: { a: per('a'), b: per('b'), bare: per('bare'), client: per('client'), redis: per('redis') } };
}

/** The baseline forwarder (bare-proxy.ts) in front of `origin`, as a child process. */
async function startBareProxy(origin: string): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = fork(fileURLToPath(new URL('./bare-proxy.ts', import.meta.url)), [String(port), origin, SECRET], { execArgv: ['--import', 'tsx'] });
  await new Promise<void>((ok, fail) => {
    proc.once('message', () => ok());
    proc.once('exit', (code) => fail(new Error(`bare proxy exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, proc };
}

async function main(): Promise<void> {
  process.stdout.write('starting redis-server, mariadbd, two signaling instances and the bare proxy...\n');
  const stores = await startStores();
  const instances: Instance[] = [];
  const pools: Pool[] = [];
  let bare: { url: string; proc: ChildProcess } | null = null;
  const nodeArgs = (code: string): string[] => (PROFILE_DIR === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE_DIR, code)}`]);
  try {
    const a = await startInstance(stores, 'node-a', { env: QUIET, nodeArgs: nodeArgs('node-a') });
    instances.push(a);
    const b = await startInstance(stores, 'node-b', { env: QUIET, nodeArgs: nodeArgs('node-b') });
    instances.push(b);
    bare = await startBareProxy(a.httpUrl);
    await seedDevice(stores, DEV);
    await seedOwner(stores, DEV, 'node-a', 3_600_000);
    const direct = await api(a, PATH);
    const viaB = await api(b, PATH);
    if (direct.json.code !== 200 || !direct.bytes.equals(viaB.bytes)) throw new Error(`sanity check failed: ${direct.bytes.toString()} / ${viaB.bytes.toString()}`);

    const auth = `bearer ${await token()}`;
    const mk = (url: string, connections: number): Pool => {
      const p = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
      pools.push(p);
      return p;
    };
    const [da, fb, bp] = [mk(a.httpUrl, CONCURRENCY), mk(b.httpUrl, CONCURRENCY), mk(bare.url, CONCURRENCY)];
    // warm-up: JIT, connection pools on every side
    for (const p of [da, fb, bp]) await flood(p, auth, WARMUP, CONCURRENCY);

    process.stdout.write(`latency: ${COUNT} requests per path one at a time, direct and forwarded interleaved, ${RUNS} runs, on all CPUs and on one\n`);
    const shared = emptyRuns();
    const pinned = emptyRuns();
    try {
      for (let i = 0; i < RUNS; i++) {
        latencyRun(shared, await latency(da, fb, auth, COUNT));
        pinTree('0');
        latencyRun(pinned, await latency(da, fb, auth, COUNT));
        pinTree(ALL_CPUS);
      }
    } finally {
      pinTree(ALL_CPUS);
    }

    process.stdout.write(`throughput: ${COUNT} requests, ${CONCURRENCY} in flight, ${RUNS} alternating runs per path\n`);
    const pids: Pids = { a: a.proc.pid, b: b.proc.pid, bare: bare.proc.pid };
    const thr = { d: [] as Throughput[], f: [] as Throughput[], bare: [] as Throughput[] };
    for (let i = 0; i < RUNS; i++) {
      thr.d.push(await throughput(da, pids, stores, auth, COUNT, CONCURRENCY));
      thr.f.push(await throughput(fb, pids, stores, auth, COUNT, CONCURRENCY));
      thr.bare.push(await throughput(bp, pids, stores, auth, COUNT, CONCURRENCY));
    }

    // the forwarded path really crossed: with the owner gone, node-b answers "owner node offline"
    if (PROFILE_DIR === null) await a.proc.kill();
    else await a.proc.stop(); // a clean exit writes the profile
    const after = await api(b, PATH);
    if (after.json.code !== 4603) throw new Error(`node-b did not forward: ${after.bytes.toString()}`);

    const ratios = thr.f.map((f, i) => f.rps / (thr.d[i] as Throughput).rps);
    const cpuRatios = thr.f.map((f, i) => total((thr.d[i] as Throughput).cpu) / total(f.cpu));
    // separate hosts: every process on its own cores; a path is bounded by its busiest process
    const busiest = (c: CpuSample): number => Math.max(c.a, c.b, c.client);
    const hostRatios = thr.f.map((f, i) => busiest((thr.d[i] as Throughput).cpu) / busiest(f.cpu));
    const cpuLine = (name: string, xs: Throughput[], forwarder: 'b' | 'bare' | null): string => {
      const r = (k: keyof CpuSample): string => fmtRange(range(xs.map((x) => x.cpu[k])), 3);
      const fwd = forwarder === null ? '' : `  ${forwarder === 'b' ? 'node-b' : 'bare proxy'} ${r(forwarder)}`;
      return `${name}  node-a ${r('a')}${fwd}  client ${r('client')}  redis ${r('redis')}  total ${fmtRange(range(xs.map((x) => total(x.cpu))), 3)}`;
    };
    const latencyLines = (title: string, l: LatencyRuns): string[] => [
      `latency, 1 in flight, ${title}, ms: median run (range over ${RUNS} runs)`,
      `  direct (node-a)    p50 ${fmtRange(range(l.dP50), 3)}   p99 ${fmtRange(range(l.dP99), 3)}`,
      `  forwarded (b→a)    p50 ${fmtRange(range(l.fP50), 3)}   p99 ${fmtRange(range(l.fP99), 3)}`,
      `  overhead           p50 +${fmtRange(range(l.o50), 3)}   p99 +${fmtRange(range(l.o99), 3)}`,
    ];
    const o99 = range(pinned.o99);
    const ratio = range(ratios);
    const nodeB = range(thr.f.map((x) => x.cpu.b));
    const bareCpu = range(thr.bare.map((x) => x.cpu.bare));
    const lines = [
      '',
      ...latencyLines('every process pinned to one CPU', pinned),
      ...latencyLines('processes on all CPUs (wake-ups across vCPUs included)', shared),
      `throughput, ${CONCURRENCY} in flight, req/s`,
      `  direct (node-a)    ${fmtRange(range(thr.d.map((x) => x.rps)), 0)}`,
      `  forwarded (b→a)    ${fmtRange(range(thr.f.map((x) => x.rps)), 0)}`,
      `  bare proxy (→a)    ${fmtRange(range(thr.bare.map((x) => x.rps)), 0)}   (baseline: node:http + undici, no framework, no routing)`,
      `CPU ms per request (${CONCURRENCY} in flight)`,
      cpuLine('  direct    ', thr.d, null),
      cpuLine('  forwarded ', thr.f, 'b'),
      cpuLine('  bare proxy', thr.bare, 'bare'),
      `machine: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on the machine competes for the same CPUs)`,
      '',
      `forwarding overhead (pinned): p50 +${fmtRange(range(pinned.o50), 3)} ms, p99 +${fmtRange(o99, 3)} ms (target ≤ ${TARGET_P99_OVERHEAD_MS} ms): ${o99.median <= TARGET_P99_OVERHEAD_MS ? 'met' : 'NOT met'}`,
      `forwarded / direct throughput: ${fmtRange(ratio, 2)} (target ≥ ${TARGET_THROUGHPUT_RATIO}): ${ratio.median >= TARGET_THROUGHPUT_RATIO ? 'met' : 'NOT met'}`,
      `CPU-bound ratio (direct CPU / forwarded CPU, all processes on these cores): ${fmtRange(range(cpuRatios), 2)}`,
      `forwarding node vs the bare-proxy floor: node-b ${nodeB.median.toFixed(3)} ms vs ${bareCpu.median.toFixed(3)} ms CPU per request (${(nodeB.median / bareCpu.median).toFixed(2)}×)`,
      `separate-hosts estimate (each process on its own cores, bounded by the busiest): ${fmtRange(range(hostRatios), 2)} (an estimate from the CPU figures, not a measurement)`,
      PROFILE_DIR === null ? '' : `CPU profiles: ${PROFILE_DIR}/node-a, ${PROFILE_DIR}/node-b`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
    printSummary({
      bench: 'forward',
      what: 'control request direct vs forwarded to the owner, loopback',
      figures:
        `overhead p50 +${range(pinned.o50).median.toFixed(2)} / p99 +${o99.median.toFixed(2)} ms pinned; ` +
        `throughput ${ratio.median.toFixed(2)}× direct (bare proxy ${range(thr.bare.map((x, i) => x.rps / (thr.d[i] as Throughput).rps)).median.toFixed(2)}×); ` +
        `node-b ${nodeB.median.toFixed(2)} ms CPU/req = ${(nodeB.median / bareCpu.median).toFixed(2)}× bare`,
      target: `p99 ≤ +${TARGET_P99_OVERHEAD_MS} ms; ≥ ${TARGET_THROUGHPUT_RATIO}× direct`,
      met: o99.median <= TARGET_P99_OVERHEAD_MS && ratio.median >= TARGET_THROUGHPUT_RATIO,
    });
  } finally {
    await Promise.all(pools.map((p) => p.destroy()));
    bare?.proc.kill();
    await Promise.all(instances.map((i) => i.proc.stop()));
    await stores.stop();
  }
}

await main();
