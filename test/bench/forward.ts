// Owner-forwarding benchmark (SPEC ROUTE-3..5): the same control request sent directly to the device's
// owner (node-a) and to another instance (node-b) that forwards it, on loopback, with real Redis,
// MariaDB and two signaling instances as child processes.
// Run from the repository root: npx tsx test/bench/forward.ts [--count N] [--concurrency C]
//
// Endpoint: GET /vms/device/catalog/sync?deviceId= (catalog progress, routed by device). Its handler
// reads the device row and the owner's own state and sends no SIP, so the figures measure routing:
// direct = auth + owner lookup (self) + handler; forwarded = the same on the owner, plus auth, owner
// lookup and one keep-alive HTTP exchange on node-b.
// Latency: one request at a time (p50 / p99 per request). Throughput: C requests in flight.
// Each measurement alternates direct / forwarded runs and keeps the median run (the machine is shared).
// Targets (task brief): p99 overhead ≤ 1 ms; forwarded throughput ≥ 0.7 × direct.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { api, seedDevice, seedOwner, startInstance, startStores, token, type Instance } from '../integration/routing-cluster.ts';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '16' },
    runs: { type: 'string', default: '3' },
  },
});
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

interface RunResult {
  latenciesMs: number[];
  wallMs: number;
}

async function run(pool: Pool, auth: string, count: number, concurrency: number): Promise<RunResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      const s = performance.now();
      const res = await pool.request({ method: 'GET', path: PATH, headers: { 'blade-auth': auth } });
      const body = Buffer.from(await res.body.arrayBuffer());
      latenciesMs.push(performance.now() - s);
      if (res.statusCode !== 200 || !body.subarray(0, OK.length).equals(OK)) throw new Error(`unexpected answer ${res.statusCode} ${body.toString()}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latenciesMs, wallMs: performance.now() - t0 };
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

interface Figures {
  p50: number;
  p99: number;
  rps: number;
  /** CPU ms per request spent in node-a and node-b (user + system, from /proc). */
  cpuA: number;
  cpuB: number;
}

const CLK_TCK = 100; // Linux USER_HZ

/** utime + stime of a process, ms (/proc/<pid>/stat fields 14 and 15); NaN where /proc is missing. */
function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** Alternates direct / forwarded runs; per figure, the median over runs. */
async function measure(
  direct: Pool,
  forwarded: Pool,
  pids: { a: number | undefined; b: number | undefined },
  auth: string,
  count: number,
  concurrency: number,
): Promise<{ direct: Figures; forwarded: Figures }> {
  const acc = { direct: [] as Figures[], forwarded: [] as Figures[] };
  for (let i = 0; i < RUNS; i++) {
    for (const [name, pool] of [['direct', direct], ['forwarded', forwarded]] as const) {
      const [a0, b0] = [cpuMs(pids.a), cpuMs(pids.b)];
      const r = await run(pool, auth, count, concurrency);
      const [a1, b1] = [cpuMs(pids.a), cpuMs(pids.b)];
      const sorted = [...r.latenciesMs].sort((a, b) => a - b);
      acc[name].push({
        p50: quantile(sorted, 0.5),
        p99: quantile(sorted, 0.99),
        rps: (count / r.wallMs) * 1000,
        cpuA: (a1 - a0) / count,
        cpuB: (b1 - b0) / count,
      });
    }
  }
  const med = (xs: Figures[]): Figures => ({
    p50: median(xs.map((x) => x.p50)),
    p99: median(xs.map((x) => x.p99)),
    rps: median(xs.map((x) => x.rps)),
    cpuA: median(xs.map((x) => x.cpuA)),
    cpuB: median(xs.map((x) => x.cpuB)),
  });
  return { direct: med(acc.direct), forwarded: med(acc.forwarded) };
}

const fmt = (n: number, d = 2): string => n.toFixed(d).padStart(9);

async function main(): Promise<void> {
  process.stdout.write('starting redis-server, mariadbd and two signaling instances...\n');
  const stores = await startStores();
  const instances: Instance[] = [];
  const pools: Pool[] = [];
  try {
    const a = await startInstance(stores, 'node-a', { env: QUIET });
    instances.push(a);
    const b = await startInstance(stores, 'node-b', { env: QUIET });
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
    await run(da, auth, 1000, CONCURRENCY);
    await run(fb, auth, 1000, CONCURRENCY);

    process.stdout.write(`latency: ${COUNT} requests one at a time, ${RUNS} alternating runs per path (median run)\n`);
    const pids = { a: a.proc.pid, b: b.proc.pid };
    const lat = await measure(da, fb, pids, auth, COUNT, 1);
    process.stdout.write(`throughput: ${COUNT} requests, ${CONCURRENCY} in flight, ${RUNS} alternating runs per path (median run)\n`);
    const thr = await measure(da, fb, pids, auth, COUNT, CONCURRENCY);

    // the forwarded path really crossed: with the owner gone, node-b answers "owner node offline"
    await a.proc.kill();
    const after = await api(b, PATH);
    if (after.json.code !== 4603) throw new Error(`node-b did not forward: ${after.bytes.toString()}`);

    const overheadP50 = lat.forwarded.p50 - lat.direct.p50;
    const overheadP99 = lat.forwarded.p99 - lat.direct.p99;
    const ratio = thr.forwarded.rps / thr.direct.rps;
    const lines = [
      '',
      `                      p50 ms    p99 ms   (1 in flight)     req/s (${CONCURRENCY} in flight)   p50 ms    p99 ms`,
      `direct (node-a)   ${fmt(lat.direct.p50, 3)} ${fmt(lat.direct.p99, 3)}                   ${fmt(thr.direct.rps, 0)}              ${fmt(thr.direct.p50)} ${fmt(thr.direct.p99)}`,
      `forwarded (b→a)   ${fmt(lat.forwarded.p50, 3)} ${fmt(lat.forwarded.p99, 3)}                   ${fmt(thr.forwarded.rps, 0)}              ${fmt(thr.forwarded.p50)} ${fmt(thr.forwarded.p99)}`,
      '',
      `CPU per request (${CONCURRENCY} in flight): direct node-a ${thr.direct.cpuA.toFixed(3)} ms; forwarded node-b ${thr.forwarded.cpuB.toFixed(3)} ms + node-a ${thr.forwarded.cpuA.toFixed(3)} ms`,
      `machine: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on the machine competes for the same CPUs)`,
      '',
      `forwarding overhead: p50 +${overheadP50.toFixed(3)} ms, p99 +${overheadP99.toFixed(3)} ms (target ≤ ${TARGET_P99_OVERHEAD_MS} ms): ${overheadP99 <= TARGET_P99_OVERHEAD_MS ? 'met' : 'NOT met'}`,
      `forwarded / direct throughput: ${ratio.toFixed(2)} (target ≥ ${TARGET_THROUGHPUT_RATIO}): ${ratio >= TARGET_THROUGHPUT_RATIO ? 'met' : 'NOT met'}`,
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
