// Runs the fuzz targets (targets.ts) for a number of inputs, seeded, and counts per target: inputs,
// accepted, refused (documented error), crashes, inputs/s, slowest input and heap growth. A crash is
// an exception other than the target's documented error class, an input taking more than
// `maxMsPerInput` of CPU (a hang or a super-linear blow-up), or heap growth past `maxHeapGrowthMb`
// across the run (a leak). CPU time, not wall clock: the bench runs niced on a shared machine, where a
// 0.5 ms parse was seen to take 2.7 s of wall clock while the process waited for a core.
// Every input is derived from (seed, target, index): a crash reproduces from the printed seed.
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { prng } from '@vms/harness/fuzz';
import type { FuzzTarget } from './targets.ts';

export interface FuzzCrash {
  readonly target: string;
  readonly index: number;
  readonly kind: 'exception' | 'slow' | 'memory';
  readonly detail: string;
  readonly input: Buffer;
}

export interface FuzzStats {
  readonly target: string;
  readonly inputs: number;
  readonly accepted: number;
  readonly refused: number;
  readonly crashes: number;
  readonly inputsPerSec: number;
  /** CPU time of the slowest input, ms. */
  readonly slowestMs: number;
  readonly heapGrowthMb: number;
}

export interface FuzzRunOptions {
  readonly targets: readonly FuzzTarget[];
  /** Inputs over all targets, split by weight. */
  readonly iterations: number;
  readonly seed: number;
  readonly maxMsPerInput: number;
  readonly maxHeapGrowthMb: number;
  /** Called after each target (progress lines). */
  readonly onTarget?: (s: FuzzStats) => void;
}

/** A full GC, for heap measurements (exposed at run time; no --expose-gc flag needed). */
function collect(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  gc?.();
}

const heapMb = (): number => {
  collect();
  return process.memoryUsage().heapUsed / 1048576;
};

/** Seed of one target's PRNG: the run seed mixed with the target's position. */
export const targetSeed = (seed: number, position: number): number => (seed ^ Math.imul(position + 1, 0x9e3779b1)) >>> 0;

export function runFuzz(o: FuzzRunOptions): { stats: FuzzStats[]; crashes: FuzzCrash[] } {
  const totalWeight = o.targets.reduce((s, t) => s + t.weight, 0);
  const stats: FuzzStats[] = [];
  const crashes: FuzzCrash[] = [];
  o.targets.forEach((target, position) => {
    const n = Math.max(1, Math.round((o.iterations * target.weight) / totalWeight));
    const rnd = prng(targetSeed(o.seed, position));
    const heap0 = heapMb();
    let accepted = 0;
    let refused = 0;
    let mine = 0;
    let slowestMs = 0;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const input = target.generate(rnd, i);
      const started = process.cpuUsage();
      try {
        if (target.run(input, rnd)) accepted++;
        else refused++;
      } catch (err) {
        if (target.allowed(err)) refused++;
        else {
          mine++;
          if (crashes.length < 50) crashes.push({ target: target.name, index: i, kind: 'exception', detail: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}` : String(err), input });
        }
      }
      const cpu = process.cpuUsage(started);
      const ms = (cpu.user + cpu.system) / 1000;
      if (ms > slowestMs) slowestMs = ms;
      if (ms > o.maxMsPerInput) {
        mine++;
        if (crashes.length < 50) crashes.push({ target: target.name, index: i, kind: 'slow', detail: `${ms.toFixed(0)} ms of CPU for ${input.length} bytes`, input });
      }
    }
    const elapsed = performance.now() - t0;
    const heapGrowthMb = heapMb() - heap0;
    if (heapGrowthMb > o.maxHeapGrowthMb) {
      mine++;
      crashes.push({ target: target.name, index: n, kind: 'memory', detail: `heap grew ${heapGrowthMb.toFixed(1)} MB over ${n} inputs`, input: Buffer.alloc(0) });
    }
    const s: FuzzStats = { target: target.name, inputs: n, accepted, refused, crashes: mine, inputsPerSec: n / (elapsed / 1000), slowestMs, heapGrowthMb };
    stats.push(s);
    o.onTarget?.(s);
  });
  return { stats, crashes };
}

export function renderStats(stats: readonly FuzzStats[], seed: number): string {
  const head = ['parser', 'inputs', 'accepted', 'refused', 'crashes', 'inputs/s', 'slowest CPU ms', 'heap Δ MB'];
  const rows = stats.map((s) => [s.target, String(s.inputs), String(s.accepted), String(s.refused), String(s.crashes), s.inputsPerSec.toFixed(0), s.slowestMs.toFixed(1), s.heapGrowthMb.toFixed(1)]);
  const total = stats.reduce((a, s) => ({ inputs: a.inputs + s.inputs, crashes: a.crashes + s.crashes }), { inputs: 0, crashes: 0 });
  rows.push(['total', String(total.inputs), '', '', String(total.crashes), '', '', '']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return `fuzz seed ${seed} (0x${seed.toString(16)})\n${line(head)}\n${rows.map(line).join('\n')}\n`;
}
