// Issue 14, load-independent: instructions per forwarded keepalive of the SIP edge and of Kamailio 5.6 as a
// stateless dispatcher (bench/edge/dispatcher.cfg, hash over the device code), counted with callgrind in
// the same run. The wall-clock bench (edge.ts) reads CPU time from /proc, which moves with whatever else
// shares the machine; instruction counts do not.
//   npx tsx test/bench/edge-callgrind.ts [--quick] [--runs R] [--warmup W] [--count M] [--keep] [--perf-map]
//
//  1. a backend (bench/edge/backend.cfg: Kamailio answering 200 statelessly, not counted);
//  2. R runs (default 3; quick 1), each: Kamailio under `valgrind --tool=callgrind --instr-atstart=no`
//     serving from its main process (`fork=no` and `-D`: callgrind_control reaches only the process valgrind
//     started, not forked children; the few helpers Kamailio still forks stay uninstrumented, and do no
//     per-message work), then a fresh edge (bench/edge/edge-child.ts, node + tsx) the same way, with
//     `--separate-threads=yes` (the window's split by thread, callgrind-v8.ts);
//  3. for each: W keepalives (1,000 devices) to warm it up, one at a time, each answered before the next.
//     The edge then takes a full collection through the bench-only control of edge-child.ts (`gc`, node
//     with --expose-gc: the old generation starts nearly empty every run, so a mark-compact the start-up's
//     garbage would trigger later does not fall in the window by chance), and settles its JIT after it (a
//     forced collection drops optimized code: the next keepalives deoptimize and tier up again): node runs
//     with --trace-opt --trace-deopt (line-buffered through stdbuf), and blocks of 1,000 more keepalives go
//     until two in a row pass with no tier-up or deopt line (at most 40 blocks; printed). Counters zeroed,
//     instrumentation on, M more keepalives, off, dumped. A forwarded keepalive = the MESSAGE to the backend and its 200 back;
//     everything the proxy does meanwhile is billed (for node: all threads, GC and JIT included), and the
//     window's GC and JIT shares are printed with it (callgrind attribution, the collections perf_hooks saw,
//     the tier-up lines in the window). The scavenges the keepalives' own garbage causes stay in the count:
//     they are the steady state's cost; the rare mark-compact is left to edge.ts (collections over 90,000
//     keepalives at full speed, printed there).
// --keep keeps the callgrind files (callgrind_annotate); --perf-map runs node with --perf-basic-prof, whose
// /tmp/perf-<pid>.map names the JIT addresses callgrind_annotate shows as `???:0x…`.
import dgram from 'node:dgram';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, spawnManaged, tsxArgs, type ManagedProcess } from '@vms/harness';
import { v8Shares, type V8Shares } from './callgrind-v8.ts';
import { deviceIdOf, edgeControl, keepalive, startKamailio } from './edge/procs.ts';
import { isQuick, printSummary } from './summary.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const QUICK = isQuick();
const DEVICES = 1000;
function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1] ?? fallback) : fallback;
}
const WARMUP = arg('warmup', QUICK ? 3000 : 20_000);
const COUNT = arg('count', QUICK ? 1000 : 5000);
const RUNS = arg('runs', QUICK ? 1 : 3);
/** The JIT has settled when SETTLE_QUIET_BLOCKS blocks of SETTLE_BLOCK keepalives in a row pass with no tier-up or deopt line. */
const SETTLE_BLOCK = 1000;
const SETTLE_QUIET_BLOCKS = 2;
const SETTLE_MAX_BLOCKS = 40;
const KEEP = process.argv.includes('--keep');
const PERF_MAP = process.argv.includes('--perf-map');
/** --trace-opt / --trace-deopt lines: a function marked, compiled, installed or deoptimized. */
const JIT_LINE = /^\[(marking|compiling method|completed (compiling|optimizing)|bailout|deoptimiz)/gm;

/** Keepalives first..first+n-1 one at a time through the proxy (resent after 2 s unanswered); the non-200 count. */
async function drive(port: number, first: number, n: number): Promise<number> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const localPort = sock.address().port;
  let k = first;
  let bad = 0;
  await new Promise<void>((done) => {
    let timer: NodeJS.Timeout | undefined;
    const next = (): void => {
      clearTimeout(timer);
      if (k >= first + n) {
        done();
        return;
      }
      const m = keepalive(k, deviceIdOf(k % DEVICES), localPort);
      sock.send(m, port, '127.0.0.1');
      timer = setTimeout(() => sock.send(m, port, '127.0.0.1'), 2000);
    };
    sock.on('message', (d) => {
      if (!d.toString('latin1', 0, 12).startsWith('SIP/2.0 200 ')) bad++;
      k++;
      next();
    });
    next();
  });
  sock.close();
  return bad;
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0 || /not detected/.test(r.stderr + r.stdout)) throw new Error(`callgrind_control ${args.join(' ')} ${pid} failed: ${r.stderr}${r.stdout}`);
}

/** The edge's extra steps around the window: JIT settling before, GC before and the collector's tally after. */
interface NodeHooks {
  readonly jitLines: () => number;
  readonly controlPort: number;
}

interface Count {
  readonly name: string;
  readonly perKeepalive: number;
  readonly bad: number;
  /** The dump's files, one per thread (edge) or the process's (Kamailio). */
  readonly files: readonly string[];
  /** Node only: the window's split, tier-up lines in it, blocks it took to settle, the collections perf_hooks saw. */
  readonly shares?: V8Shares;
  readonly jitLinesInWindow?: number;
  readonly settleBlocks?: number;
  readonly settled?: boolean;
  readonly collections?: { minor: number; major: number; incremental: number; weak: number; ms: number };
}

/** The dump of `pid` holding the window: its files (`prefix<pid>.<part>[-<thread>]`), the part with the most instructions. */
function windowFiles(dir: string, prefix: string, pid: number): { files: string[]; instructions: number } {
  const parts = new Map<string, { files: string[]; instructions: number }>();
  for (const f of readdirSync(dir)) {
    const m = new RegExp(`^${prefix.replaceAll('.', '\\.')}${pid}(\\.\\d+)?(-\\d+)?$`).exec(f);
    if (m === null) continue;
    const totals = /^totals: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'));
    const part = parts.get(m[1] ?? '') ?? { files: [], instructions: 0 };
    part.files.push(join(dir, f));
    part.instructions += totals === null ? 0 : Number(totals[1]);
    parts.set(m[1] ?? '', part);
  }
  return [...parts.values()].reduce((a, b) => (b.instructions > a.instructions ? b : a), { files: [], instructions: 0 });
}

/** Warm-up, (node: JIT settling and a collection,) then the counted window of the proxy `proc` (under callgrind, out files `dir/prefix<pid>…`). */
async function measure(name: string, proc: ManagedProcess, port: number, dir: string, prefix: string, node?: NodeHooks): Promise<Count> {
  const pid = proc.pid as number;
  let bad = 0;
  let extra: Partial<Count> = {};
  try {
    bad += await drive(port, 0, WARMUP);
    let k = WARMUP;
    if (node !== undefined) {
      // the collection first: a forced full collection also drops optimized code (the next keepalives
      // deoptimize and tier up again), so the JIT settles after it
      const gc = await edgeControl(node.controlPort, 'gc');
      if (gc !== 'ok') throw new Error(`edge control gc: ${gc}`);
      let blocks = 0;
      let quiet = 0;
      while (quiet < SETTLE_QUIET_BLOCKS && blocks < SETTLE_MAX_BLOCKS) {
        const before = node.jitLines();
        bad += await drive(port, k, SETTLE_BLOCK);
        k += SETTLE_BLOCK;
        blocks++;
        quiet = node.jitLines() === before ? quiet + 1 : 0;
      }
      extra = { settleBlocks: blocks, settled: quiet === SETTLE_QUIET_BLOCKS };
      // the collector's tally from here: the window's
      if ((await edgeControl(node.controlPort, 'reset')) !== 'ok') throw new Error('edge control reset failed');
    }
    const jitBefore = node?.jitLines() ?? 0;
    control(pid, '-z');
    control(pid, '-i', 'on');
    bad += await drive(port, k, COUNT);
    control(pid, '-i', 'off');
    control(pid, '-d');
    if (node !== undefined) {
      const tally = JSON.parse(await edgeControl(node.controlPort, 'tally')) as Count['collections'];
      extra = { ...extra, collections: tally, jitLinesInWindow: node.jitLines() - jitBefore };
    }
  } finally {
    await proc.stop({ timeoutMs: 10_000 });
  }
  const w = windowFiles(dir, prefix, pid);
  return { name, perKeepalive: w.instructions / COUNT, bad, files: w.files, ...extra, ...(node === undefined ? {} : { shares: v8Shares(w.files) }) };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const pct = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)} %`;

interface RunResult {
  readonly kam: Count;
  readonly edge: Count;
  readonly ratio: number;
}

async function oneRun(run: number, dir: string, backends: readonly number[], list: string): Promise<RunResult> {
  // stdbuf: node's --trace-opt lines go through C stdio, fully buffered into a pipe; line-buffered, each
  // arrives when printed, so a block without one is a block without tier-up
  const cg = (prefix: string, threads: boolean): string[] => [...(threads ? ['stdbuf', '-oL'] : []), 'valgrind', '--tool=callgrind', '--instr-atstart=no', ...(threads ? ['--separate-threads=yes'] : []), `--callgrind-out-file=${join(dir, prefix)}%p`];
  const kamPort = await freePort({ udp: true });
  const kamPrefix = `r${run}-kam.`;
  const kam = await startKamailio(join(HERE, 'edge', 'dispatcher.cfg'), ['BENCH_NOFORK', `BENCH_LISTEN=udp:127.0.0.1:${kamPort}`, `DS_LIST="${list}"`], kamPort, { wrap: cg(kamPrefix, false), waitMs: 120_000, single: true });
  const kamCount = await measure('kamailio dispatcher', kam, kamPort, dir, kamPrefix);

  const edgePort = await freePort({ udp: true });
  const edgePrefix = `r${run}-edge.`;
  const [vg, ...vgArgs] = cg(edgePrefix, true);
  const nodeFlags = ['--expose-gc', '--trace-opt', '--trace-deopt', ...(PERF_MAP ? ['--perf-basic-prof'] : [])];
  const edge = spawnManaged(vg as string, [...vgArgs, process.execPath, ...nodeFlags, ...tsxArgs(join(HERE, 'edge', 'edge-child.ts'), String(edgePort), ...backends.map((p) => `127.0.0.1:${p}`))], {
    name: 'sip-edge (callgrind)',
    outputLimit: 64 << 20, // the tier-up lines are counted in it
  });
  try {
    await edge.waitForOutput(/edge listening/, 600_000);
    const controlPort = Number(/edge control (\d+)/.exec(edge.output())?.[1]);
    const edgeCount = await measure('sip-edge', edge, edgePort, dir, edgePrefix, { controlPort, jitLines: () => edge.output().match(JIT_LINE)?.length ?? 0 });
    return { kam: kamCount, edge: edgeCount, ratio: edgeCount.perKeepalive / kamCount.perKeepalive };
  } finally {
    await edge.stop({ timeoutMs: 10_000 });
    if (PERF_MAP) process.stdout.write(`JIT code map: /tmp/perf-${edge.pid}.map\n`);
  }
}

function report(run: number, r: RunResult): void {
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  const e = r.edge;
  const s = e.shares;
  const c = e.collections;
  out(`run ${run}: kamailio ${fmt(r.kam.perKeepalive)}, edge ${fmt(e.perKeepalive)} instructions per forwarded keepalive, ratio ${r.ratio.toFixed(2)}×${r.kam.bad + e.bad > 0 ? ` (${r.kam.bad + e.bad} not 200)` : ''}`);
  if (s !== undefined) {
    out(`  edge window: GC ${fmt(s.gc / COUNT)} per keepalive (${pct(s.gc, s.total)}), JIT ${fmt(s.jit / COUNT)} (${pct(s.jit, s.total)}), other threads ${fmt(s.other / COUNT)} (${pct(s.other, s.total)}), the rest ${fmt((s.total - s.gc - s.jit - s.other) / COUNT)}; ${s.threads} threads ran`);
  }
  if (c !== undefined) out(`  collections in the window (perf_hooks): ${c.minor} scavenge, ${c.major} mark-compact, ${c.incremental} incremental, ${c.weak} weak callbacks; ${c.ms.toFixed(0)} ms`);
  out(`  JIT: settled after ${e.settleBlocks ?? 0} × ${SETTLE_BLOCK} keepalives past the ${fmt(WARMUP)} warm-up and the collection${e.settled === true ? '' : ' (NOT settled: the cap was reached)'}; ${e.jitLinesInWindow ?? 0} tier-up/deopt lines in the window`);
  if (KEEP) out(`  callgrind files kept: ${[...r.kam.files, ...e.files].join(' ')}`);
}

async function main(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind not installed (npm run setup -- --bench)');
  const dir = mkdtempSync(join(tmpdir(), 'edge-callgrind-'));
  const started: ManagedProcess[] = [];
  try {
    const backends = [await freePort({ udp: true }), await freePort({ udp: true }), await freePort({ udp: true })];
    const list = join(dir, 'dispatcher.list');
    writeFileSync(list, backends.map((p) => `1 sip:127.0.0.1:${p}\n`).join(''));
    started.push(await startKamailio(join(HERE, 'edge', 'backend.cfg'), backends.map((p, i) => `BACKEND_${'ABC'[i]}=udp:127.0.0.1:${p}`), backends[2] as number));
    process.stdout.write(`callgrind: ${DEVICES} devices, ${fmt(WARMUP)} warm-up keepalives, ${fmt(COUNT)} counted, ${RUNS} run(s)\n`);
    const results: RunResult[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const r = await oneRun(run, dir, backends, list);
      report(run, r);
      results.push(r);
    }
    const ratios = results.map((r) => r.ratio).sort((a, b) => a - b);
    const edges = results.map((r) => r.edge.perKeepalive).sort((a, b) => a - b);
    const kams = results.map((r) => r.kam.perKeepalive).sort((a, b) => a - b);
    const median = (v: readonly number[]): number => v[Math.floor(v.length / 2)] as number;
    const span = (v: readonly number[], f: (n: number) => string): string => (v.length === 1 ? f(v[0] as number) : `${f(v[0] as number)}–${f(v.at(-1) as number)} (median ${f(median(v))})`);
    const ratioText = (n: number): string => `${n.toFixed(2)}×`;
    const gcShare = results.map((r) => (r.edge.shares === undefined ? NaN : (100 * r.edge.shares.gc) / r.edge.shares.total));
    const jitShare = results.map((r) => (r.edge.shares === undefined ? NaN : (100 * r.edge.shares.jit) / r.edge.shares.total));
    const bad = results.reduce((s, r) => s + r.kam.bad + r.edge.bad, 0);
    const settled = results.every((r) => r.edge.settled === true);
    process.stdout.write(`edge ${span(edges, fmt)}; kamailio ${span(kams, fmt)}; ratio ${span(ratios, ratioText)}\n`);
    printSummary({
      bench: 'edge-callgrind',
      what: `instructions per keepalive forwarded, SIP edge vs Kamailio dispatcher (${fmt(WARMUP)} warm-up + JIT settled, GC before the window, ${fmt(COUNT)} counted, ${RUNS} run(s))`,
      figures: `edge ${span(edges, fmt)} (GC ${gcShare.map((v) => v.toFixed(1)).join('/')} %, JIT ${jitShare.map((v) => v.toFixed(1)).join('/')} %), kamailio ${span(kams, fmt)}, ${span(ratios, ratioText)}${bad > 0 ? `; ${bad} not 200` : ''}${settled ? '' : '; JIT not settled'}`,
      target: 'edge ≤ 2× Kamailio (every run)',
      met: (ratios.at(-1) as number) <= 2 && bad === 0,
    });
  } finally {
    for (const p of started.reverse()) await p.stop({ timeoutMs: 5000 });
    if (!KEEP) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
