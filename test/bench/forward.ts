// Owner-forwarding benchmark (SPEC ROUTE-3..5): the same control request sent directly to the device's
// owner (node-a) and to another instance (node-b) that forwards it, on loopback, with real Redis,
// MariaDB and two signaling instances as child processes.
// Run from the repository root: npx tsx test/bench/forward.ts [--count N] [--concurrency C] [--runs R]
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
//    each path; R runs, the median run and the range are printed;
//  - throughput: C requests in flight, direct and forwarded runs alternating, median and range of R;
//  - CPU per request of every process on the path, from the kernel's counters: node-a and node-b
//    (/proc), this client (process.cpuUsage) and redis-server (INFO cpu). MariaDB serves the same query
//    on both paths and is left out. The CPU-bound ratio (direct CPU / forwarded CPU, all processes
//    summed) is what the throughput ratio becomes when the cores are saturated by this bench alone:
//    it is far less noisy than req/s on a busy machine.
// Targets (issue #4): p99 overhead ≤ 1 ms; forwarded throughput ≥ 0.7 × direct.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { api, seedDevice, seedOwner, startInstance, startStores, token, type Instance, type Stores } from '../integration/routing-cluster.ts';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '16' },
    runs: { type: 'string', default: '3' },
    'cpu-prof': { type: 'string' },
  },
});
const PROFILE_DIR = args['cpu-prof'] === undefined ? null : resolve(args['cpu-prof']);
const COUNT = Number(args.count);
const CONCURRENCY = Number(args.concurrency);
const RUNS = Number(args.runs);
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
  client: number;
  redis: number;
}

async function cpuNow(pids: { a: number | undefined; b: number | undefined }, stores: Stores): Promise<CpuSample> {
  const self = process.cpuUsage();
  return { a: procCpuMs(pids.a), b: procCpuMs(pids.b), client: (self.user + self.system) / 1000, redis: await redisCpuMs(stores) };
}

interface Throughput {
  rps: number;
  /** CPU ms per request, per process. */
  cpu: CpuSample;
}

const total = (c: CpuSample): number => c.a + c.b + c.client + c.redis;

interface Range {
  median: number;
  min: number;
  max: number;
}

const range = (xs: readonly number[]): Range => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const fmtRange = (r: Range, d: number): string => `${r.median.toFixed(d)} (${r.min.toFixed(d)}–${r.max.toFixed(d)})`;

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

async function throughput(
  pool: Pool,
  pids: { a: number | undefined; b: number | undefined },
  stores: Stores,
  auth: string,
  count: number,
  concurrency: number,
): Promise<Throughput> {
  const c0 = await cpuNow(pids, stores);
  const wallMs = await flood(pool, auth, count, concurrency);
  const c1 = await cpuNow(pids, stores);
  const per = (k: keyof CpuSample): number => (c1[k] - c0[k]) / count;
  return { rps: (count / wallMs) * 1000, cpu: { a: per('a'), b: per('b'), client: per('client'), redis: per('redis') } };
}

async function main(): Promise<void> {
  process.stdout.write('starting redis-server, mariadbd and two signaling instances...\n');
  const stores = await startStores();
  const instances: Instance[] = [];
  const pools: Pool[] = [];
  const nodeArgs = (code: string): string[] => (PROFILE_DIR === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE_DIR, code)}`]);
  try {
    const a = await startInstance(stores, 'node-a', { env: QUIET, nodeArgs: nodeArgs('node-a') });
    instances.push(a);
    const b = await startInstance(stores, 'node-b', { env: QUIET, nodeArgs: nodeArgs('node-b') });
    instances.push(b);
    await seedDevice(stores, DEV);
    await seedOwner(stores, DEV, 'node-a', 3_600_000);
    const direct = await api(a, PATH);
    const viaB = await api(b, PATH);
    if (direct.json.code !== 200 || !direct.bytes.equals(viaB.bytes)) throw new Error(`sanity check failed: ${direct.bytes.toString()} / ${viaB.bytes.toString()}`);

    const auth = `bearer ${await token()}`;
    const mk = (i: Instance, connections: number): Pool => {
      const p = new Pool(i.httpUrl, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
      pools.push(p);
      return p;
    };
    const [da, fb] = [mk(a, CONCURRENCY), mk(b, CONCURRENCY)];
    // warm-up: JIT, connection pools on both sides
    await flood(da, auth, 1000, CONCURRENCY);
    await flood(fb, auth, 1000, CONCURRENCY);

    process.stdout.write(`latency: ${COUNT} requests per path one at a time, direct and forwarded interleaved, ${RUNS} runs\n`);
    const lat = { dP50: [] as number[], dP99: [] as number[], fP50: [] as number[], fP99: [] as number[], o50: [] as number[], o99: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      const r = await latency(da, fb, auth, COUNT);
      const [d, f] = [[...r.d].sort((x, y) => x - y), [...r.f].sort((x, y) => x - y)];
      lat.dP50.push(quantile(d, 0.5));
      lat.dP99.push(quantile(d, 0.99));
      lat.fP50.push(quantile(f, 0.5));
      lat.fP99.push(quantile(f, 0.99));
      lat.o50.push(quantile(f, 0.5) - quantile(d, 0.5));
      lat.o99.push(quantile(f, 0.99) - quantile(d, 0.99));
    }

    process.stdout.write(`throughput: ${COUNT} requests, ${CONCURRENCY} in flight, ${RUNS} alternating runs per path\n`);
    const pids = { a: a.proc.pid, b: b.proc.pid };
    const thr = { d: [] as Throughput[], f: [] as Throughput[] };
    for (let i = 0; i < RUNS; i++) {
      thr.d.push(await throughput(da, pids, stores, auth, COUNT, CONCURRENCY));
      thr.f.push(await throughput(fb, pids, stores, auth, COUNT, CONCURRENCY));
    }

    // the forwarded path really crossed: with the owner gone, node-b answers "owner node offline"
    if (PROFILE_DIR === null) await a.proc.kill();
    else await a.proc.stop(); // a clean exit writes the profile
    const after = await api(b, PATH);
    if (after.json.code !== 4603) throw new Error(`node-b did not forward: ${after.bytes.toString()}`);

    const ratios = thr.f.map((f, i) => f.rps / (thr.d[i] as Throughput).rps);
    const cpuRatios = thr.f.map((f, i) => total((thr.d[i] as Throughput).cpu) / total(f.cpu));
    const cpuLine = (name: string, xs: Throughput[]): string => {
      const r = (k: keyof CpuSample): string => fmtRange(range(xs.map((x) => x.cpu[k])), 3);
      return `${name}  node-a ${r('a')}  node-b ${r('b')}  client ${r('client')}  redis ${r('redis')}  total ${fmtRange(range(xs.map((x) => total(x.cpu))), 3)}`;
    };
    const o99 = range(lat.o99);
    const ratio = range(ratios);
    const lines = [
      '',
      `latency, 1 in flight, ms: median run (range over ${RUNS} runs)`,
      `  direct (node-a)    p50 ${fmtRange(range(lat.dP50), 3)}   p99 ${fmtRange(range(lat.dP99), 3)}`,
      `  forwarded (b→a)    p50 ${fmtRange(range(lat.fP50), 3)}   p99 ${fmtRange(range(lat.fP99), 3)}`,
      `throughput, ${CONCURRENCY} in flight, req/s`,
      `  direct (node-a)    ${fmtRange(range(thr.d.map((x) => x.rps)), 0)}`,
      `  forwarded (b→a)    ${fmtRange(range(thr.f.map((x) => x.rps)), 0)}`,
      `CPU ms per request (${CONCURRENCY} in flight)`,
      cpuLine('  direct   ', thr.d),
      cpuLine('  forwarded', thr.f),
      `machine: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on the machine competes for the same CPUs)`,
      '',
      `forwarding overhead: p50 +${fmtRange(range(lat.o50), 3)} ms, p99 +${fmtRange(o99, 3)} ms (target ≤ ${TARGET_P99_OVERHEAD_MS} ms): ${o99.median <= TARGET_P99_OVERHEAD_MS ? 'met' : 'NOT met'}`,
      `forwarded / direct throughput: ${fmtRange(ratio, 2)} (target ≥ ${TARGET_THROUGHPUT_RATIO}): ${ratio.median >= TARGET_THROUGHPUT_RATIO ? 'met' : 'NOT met'}`,
      `CPU-bound ratio (direct CPU / forwarded CPU, all processes): ${fmtRange(range(cpuRatios), 2)}`,
      PROFILE_DIR === null ? '' : `CPU profiles: ${PROFILE_DIR}/node-a, ${PROFILE_DIR}/node-b`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    await Promise.all(pools.map((p) => p.destroy()));
    await Promise.all(instances.map((i) => i.proc.stop()));
    await stores.stop();
  }
}

await main();
