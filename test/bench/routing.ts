// Routing engine benchmark (SPEC §10, issue #13 figures): a table of 1,000,000 prefix rules on 20-digit
// GB28181 codes — compile time, memory, decision latency (median / p99, beside a bare Map.get on the same
// keys and an empty timer pair, all in this run), build on a worker thread and swap under load (the main
// thread's longest block in CPU time, main-thread-cpu.ts, and the event-loop delay in wall time from
// perf_hooks.monitorEventLoopDelay), and SWRR over 10 weights per pick.
// Run from the repository root: npx tsx test/bench/routing.ts [--quick] [--rules N]
// (--quick: 100,000 rules, a few seconds). Method and history: docs/routing.md.
import { closeSync, openSync, readSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isQuick, printSummary } from './summary.ts';
import { compileTable, createWorkerTableBuilder, type RoutingTable, type TableSource } from '@vms/routing';
import { monitorMainThreadCpu } from './main-thread-cpu.ts';
import { BENCH_TABLE_MODULE, benchTable, openBenchVersionSource } from './routing-table.ts';

const args = process.argv.slice(2);
const quick = isQuick();
const rulesArg = args.indexOf('--rules');
const RULES = rulesArg >= 0 ? Number(args[rulesArg + 1]) : quick ? 100_000 : 1_000_000;
const SAMPLES = quick ? 50_000 : 200_000;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const settle = (): void => {
  for (let i = 0; i < 3; i++) gc();
};
const mb = (b: number): string => `${(b / 1048576).toFixed(1)} MB`;
/** JS heap and ArrayBuffer bytes (typed arrays live outside the JS heap). */
const held = (): { heap: number; buffers: number } => {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
};

// The table (regions, units, devices) and the store the build thread reads: routing-table.ts.
const { districts, regional, units, devices, unitPrefix, deviceCode, destinations, sets, ruleRows } = benchTable(RULES);

function buildSource(version: number): TableSource {
  return { version, timeZone: 'Asia/Shanghai', destinations, sets, rules: [...ruleRows()] };
}

// Request keys: half exact devices, 30 % other devices of a known unit, 20 % unknown units (district rule).
function requestKeys(n: number): string[] {
  const out: string[] = [];
  let x = 12345;
  const rnd = (m: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % m;
  };
  for (let i = 0; i < n; i++) {
    const k = i % 10;
    // flat strings (as header values parsed from a SIP message are), not the concatenation ropes below
    if (k < 5) out.push(deviceCode(rnd(devices)));
    else if (k < 8) out.push(unitPrefix(rnd(units)) + '131' + String(rnd(10_000_000)).padStart(7, '0'));
    else out.push(districts[rnd(districts.length)]! + '9999132' + String(rnd(10_000_000)).padStart(7, '0'));
  }
  return JSON.parse(JSON.stringify(out)) as string[];
}

function percentile(xs: Float64Array, p: number): number {
  return xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
}

/** Per-call latencies in ns of fn over keys (performance.now around each call), sorted. */
function timeEach(keys: readonly string[], fn: (k: string) => unknown): Float64Array {
  const out = new Float64Array(keys.length);
  let sink = 0;
  for (let i = 0; i < keys.length; i++) {
    const t0 = performance.now();
    const r = fn(keys[i]!);
    out[i] = (performance.now() - t0) * 1e6;
    if (r !== undefined) sink++;
  }
  if (sink < 0) console.log(sink);
  return out.sort();
}

const now = Date.parse('2026-01-05T10:00:00+08:00');
const rows: [string, string, string][] = [];

console.log(`routing bench: ${RULES.toLocaleString('en-US')} rules (${regional} regional, ${units.toLocaleString('en-US')} units, ${devices.toLocaleString('en-US')} devices)${quick ? ' --quick' : ''}`);

const load0 = loadavg()[0]!;

// 1. compile time and memory
let source: TableSource | undefined = buildSource(1);
settle();
const before = held();
const rssBefore = process.memoryUsage().rss;
let t0 = performance.now();
let cpu0 = process.cpuUsage();
const compiled = compileTable(source);
const compileMs = performance.now() - t0;
const cpuMs = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1000;
const compileCpu = cpuMs(process.cpuUsage(cpu0));
if (!compiled.ok) throw new Error(`bench table does not compile: ${JSON.stringify(compiled.issues.slice(0, 3))}`);
let live: RoutingTable = compiled.table;
source = undefined; // the table keeps no rule object: what stays is the table alone
settle();
const afterHeld = held();
const heapDelta = afterHeld.heap - before.heap;
const bufferDelta = afterHeld.buffers - before.buffers;
const rssDelta = process.memoryUsage().rss - rssBefore;
rows.push(['compile in one go', `${compileMs.toFixed(0)} ms wall, ${compileCpu.toFixed(0)} ms CPU`, '—']);
rows.push([
  'table memory',
  `${mb(Math.max(0, heapDelta) + bufferDelta)}: ArrayBuffers +${mb(bufferDelta)} (the table's typed arrays: ${mb(live.typedBytes)}), JS heap ${heapDelta >= 0 ? '+' : ''}${mb(heapDelta)}; RSS +${mb(rssDelta)}`,
  '≤ 200 MB',
]);

// 2. decision latency, with the baselines of this run
const keys = requestKeys(SAMPLES);
let baseline: Map<string, number> | undefined = new Map<string, number>();
for (let i = 0; i < devices; i++) baseline.set(deviceCode(i), i);
const decide = (k: string): unknown => live.decide({ group: 'placement', device: k, now }).destination;
for (let w = 0; w < 3; w++) {
  timeEach(keys, decide);
  timeEach(keys, (k) => baseline!.get(k));
  timeEach(keys, () => undefined);
}
const d = timeEach(keys, decide);
const m = timeEach(keys, (k) => baseline!.get(k));
const e = timeEach(keys, () => undefined);
baseline = undefined; // 900k strings the collector would otherwise walk during the build below
const fmt = (xs: Float64Array): string => `median ${(percentile(xs, 0.5) / 1000).toFixed(2)} µs, p99 ${(percentile(xs, 0.99) / 1000).toFixed(2)} µs`;
rows.push(['decide (timer included)', fmt(d), 'median ≤ 2 µs, p99 ≤ 10 µs']);
rows.push(['  baseline: Map.get of the key', fmt(m), '—']);
rows.push(['  baseline: empty timer pair', fmt(e), '—']);
cpu0 = process.cpuUsage();
for (let r = 0; r < 5; r++) for (const k of keys) decide(k);
const meanNs = (cpuMs(process.cpuUsage(cpu0)) * 1e6) / (keys.length * 5);
rows.push(['decide, CPU per decision over a loop (no timer)', `${(meanNs / 1000).toFixed(2)} µs (${Math.round(1e9 / meanNs).toLocaleString('en-US')}/s per core)`, '—']);

// 3. read (in pages), build and swap a new version on a worker thread (table-worker.ts) while decisions
// keep running every millisecond on this one. The build thread opens its own "store" (routing-table.ts
// openBenchVersionSource: pages of 2,000 rule objects made as they are read); this thread only wraps the
// transferred arrays and swaps. Measured here: wall time of the whole build (thread start with tsx
// included), this thread's CPU over it (the 1 ms decision load included), its longest block in CPU time
// between two 1 ms ticks (main-thread-cpu.ts: load-insensitive), and the event-loop delay in wall time.
settle();
const heapDuringBuild = held().heap;
const h = monitorEventLoopDelay({ resolution: 1 });
const schedFd = openSync('/proc/thread-self/schedstat', 'r');
const schedBuf = Buffer.alloc(96);
/** This (main) thread's CPU so far, ms. */
const mainThreadCpuMs = (): number => {
  const n = readSync(schedFd, schedBuf, 0, schedBuf.length, 0);
  const text = schedBuf.toString('latin1', 0, n);
  return Number(text.slice(0, text.indexOf(' '))) / 1e6;
};
let served = 0;
const load = setInterval(() => {
  for (let i = 0; i < 50; i++) {
    live.decide({ group: 'placement', device: keys[(served + i) % keys.length]!, now });
  }
  served += 50;
}, 1);
await new Promise((r) => setTimeout(r, 200));
const builder = createWorkerTableBuilder({ source: { module: BENCH_TABLE_MODULE, export: 'openBenchVersionSource', options: { rules: RULES } } });
h.enable();
const blocks = monitorMainThreadCpu();
/** One build and swap: wall ms, this thread's CPU ms, decisions served meanwhile, the thread's times. */
const buildAndSwap = async (version: number) => {
  const w0 = performance.now();
  const c0 = mainThreadCpuMs();
  const served0 = served;
  const r = await builder.build(version, 'Asia/Shanghai');
  if (r?.ok !== true) throw new Error('rebuild failed');
  live = r.table; // the swap: one reference; a decision holds the table it started with
  return { wallMs: performance.now() - w0, mainCpuMs: mainThreadCpuMs() - c0, decisions: served - served0, times: builder.last! };
};
cpu0 = process.cpuUsage();
// first build: the thread is started for it (tsx and the engine's modules loaded); the second reuses it
// (the builder keeps an idle thread for DEFAULT_BUILD_THREAD_IDLE_MS), which is the build figure
const cold = await buildAndSwap(2);
const warm = await buildAndSwap(3);
const swapCpu = cpuMs(process.cpuUsage(cpu0));
await new Promise((r) => setTimeout(r, 50));
blocks.stop();
// The embedded SQLite and memory stores' path: pages read on this thread (here the bench's rows, made as
// the store would read them) and posted to the build thread, at most 4 unacked (table-worker.ts `reader`).
// This thread's longest block over that build, on its own.
const pushBuilder = createWorkerTableBuilder({ reader: openBenchVersionSource({ rules: RULES }) });
const pushBlocks = monitorMainThreadCpu();
const pushed = await (async () => {
  const w0 = performance.now();
  const c0 = mainThreadCpuMs();
  const served0 = served;
  const r = await pushBuilder.build(4, 'Asia/Shanghai');
  if (r?.ok !== true) throw new Error('pushed build failed');
  live = r.table;
  return { wallMs: performance.now() - w0, mainCpuMs: mainThreadCpuMs() - c0, decisions: served - served0, times: pushBuilder.last! };
})();
await new Promise((r) => setTimeout(r, 50));
pushBlocks.stop();
await pushBuilder.close();
h.disable();
clearInterval(load);
closeSync(schedFd);
await builder.close();
const swapMs = warm.wallMs;
const times = warm.times;
const describeBuild = (b: typeof warm): string =>
  `${(b.wallMs / 1000).toFixed(2)} s wall (thread start ${(b.times.threadStartMs / 1000).toFixed(2)} s, read ${((b.times.readMs - b.times.packMs) / 1000).toFixed(2)} s (the bench's rows made), pack ${(b.times.packMs / 1000).toFixed(2)} s (${(b.times.packCpuMs / 1000).toFixed(2)} s CPU), indexes ${(b.times.buildMs / 1000).toFixed(2)} s, the thread's CPU ${(b.times.threadCpuMs / 1000).toFixed(2)} s; transfer ${b.times.transferMs.toFixed(1)} ms, wrap + swap ${b.times.wrapMs.toFixed(2)} ms on the main thread), main thread ${(b.mainCpuMs / 1000).toFixed(2)} s CPU, ${b.decisions.toLocaleString('en-US')} decisions served meanwhile`;
rows.push(['build on a new worker thread + swap, under load', describeBuild(cold), '—']);
rows.push([
  'build on the kept worker thread + swap, under load',
  `${describeBuild(warm)}; over both builds: longest main-thread block ${blocks.maxMs.toFixed(1)} ms CPU (${blocks.ticks} ticks), event-loop delay max ${(h.max / 1e6).toFixed(1)} ms wall, p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms; all threads ${(swapCpu / 1000).toFixed(2)} s CPU; JS heap live before ${mb(heapDuringBuild)}`,
  '≤ 3 s, no stall > 50 ms (main-thread CPU per block)',
]);
rows.push([
  'pages read here, posted to a new build thread (SQLite / memory stores)',
  `${describeBuild(pushed)}; longest main-thread block ${pushBlocks.maxMs.toFixed(1)} ms CPU`,
  'no stall > 50 ms',
]);
if (live.version !== 4) throw new Error('swap did not happen');

// 4. SWRR over 10 weights: the Nginx sequence and the cost per pick
const ten = compileTable({
  version: 1,
  timeZone: 'Asia/Shanghai',
  destinations: destinations.slice(0, 10),
  sets: [{ id: 's', algorithm: 'swrr', members: destinations.slice(0, 10).map((x, i) => ({ destinationId: x.id, weight: 10 - i, priority: 0 })) }],
  rules: [{ id: 1, group: 'g', field: 'device', prefix: '', priority: 0, setId: 's' }],
});
if (!ten.ok) throw new Error('swrr table');
const picks = quick ? 1_000_000 : 5_000_000;
const req = { group: 'g', device: '34020000001320000001', now };
for (let i = 0; i < 200_000; i++) ten.table.decide(req);
cpu0 = process.cpuUsage();
for (let i = 0; i < picks; i++) ten.table.decide(req);
const swrrNs = (cpuMs(process.cpuUsage(cpu0)) * 1e6) / picks;
const seq = compileTable({
  version: 1,
  timeZone: 'Asia/Shanghai',
  destinations: destinations.slice(0, 3),
  sets: [{ id: 's', algorithm: 'swrr', members: [5, 1, 1].map((w, i) => ({ destinationId: destinations[i]!.id, weight: w, priority: 0 })) }],
  rules: [{ id: 1, group: 'g', field: 'device', prefix: '', priority: 0, setId: 's' }],
});
if (!seq.ok) throw new Error('swrr table');
const letters = Array.from({ length: 7 }, () => String.fromCharCode(97 + Number(seq.table.decide(req).destination!.id.slice(6)))).join(' ');
rows.push(['SWRR, 10 weights, CPU per pick (whole decide)', `${(swrrNs / 1000).toFixed(3)} µs; {5,1,1} → ${letters}`, '≤ 1 µs; a a b a c a a']);

rows.push(['machine load average (1 min) before / after', `${load0.toFixed(1)} / ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs`, 'quiet: figures hold only then']);
const w1 = Math.max(...rows.map((r) => r[0].length));
const w2 = Math.max(...rows.map((r) => r[1].length));
console.log(`\n${'what'.padEnd(w1)} | ${'figure'.padEnd(w2)} | target`);
console.log(`${'-'.repeat(w1)}-|-${'-'.repeat(w2)}-|-------`);
for (const [a, b, c] of rows) console.log(`${a.padEnd(w1)} | ${b.padEnd(w2)} | ${c}`);

const medianUs = percentile(d, 0.5) / 1000;
const p99Us = percentile(d, 0.99) / 1000;
const memMb = bufferDelta / 1048576;
printSummary({
  bench: 'routing',
  what: `${RULES.toLocaleString('en-US')} prefix rules: decide, memory, build + swap, SWRR`,
  figures:
    `decide median ${medianUs.toFixed(2)} µs p99 ${p99Us.toFixed(2)} µs (Map.get ${(percentile(m, 0.5) / 1000).toFixed(2)}/${(percentile(m, 0.99) / 1000).toFixed(2)}); ` +
    `${memMb.toFixed(0)} MB; build (worker)+swap ${(swapMs / 1000).toFixed(2)} s wall (${(times.threadCpuMs / 1000).toFixed(2)} s CPU of the build thread, load ${loadavg()[0]!.toFixed(1)}), wrap ${times.wrapMs.toFixed(1)} ms, longest main-thread block ${blocks.maxMs.toFixed(1)} ms CPU (${pushBlocks.maxMs.toFixed(1)} ms with pages posted from here), loop delay max ${(h.max / 1e6).toFixed(0)} ms wall, ${warm.decisions} decisions during it; SWRR ${(swrrNs / 1000).toFixed(2)} µs`,
  target: 'median ≤ 2 µs, p99 ≤ 10 µs, ≤ 200 MB, build+swap ≤ 3 s without a stall > 50 ms, SWRR ≤ 1 µs',
  met: medianUs <= 2 && p99Us <= 10 && memMb <= 200 && swapMs <= 3000 && blocks.maxMs <= 50 && pushBlocks.maxMs <= 50 && swrrNs <= 1000 && letters === 'a a b a c a a',
});
