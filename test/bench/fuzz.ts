// Fuzz bench: every inbound parser (SIP messages and TCP framing, the datagram shortcut's two readings, MANSCDP in GB2312 and UTF-8, the
// keepalive scanner, SDP with y=/f=, MANSRTSP, ZLM hook JSON, control-API JSON bodies) fed mutated
// captures and grammar-generated inputs; prints inputs/s and counts per parser, and any crash with its
// input (base64, also saved under test/bench/fuzz/crashes/) and the seed that reproduces it.
//
//   npx tsx test/bench/fuzz.ts                  1,000,000 inputs (run it niced on a shared machine)
//   npx tsx test/bench/fuzz.ts --quick          20,000 inputs (also VMS_BENCH_QUICK=1; npm run bench runs it so)
//   npx tsx test/bench/fuzz.ts --iterations 200000 --seed 12345
//   FUZZ_ITERATIONS=50000 FUZZ_SEED=7 npx tsx test/bench/fuzz.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderStats, runFuzz } from './fuzz/engine.ts';
import { fuzzTargets, loadCorpus } from './fuzz/targets.ts';
import { isQuick, printSummary } from './summary.ts';

const FULL_ITERATIONS = 1_000_000;
const QUICK_ITERATIONS = 20_000;
/** CPU per input: typical inputs take microseconds; the margin absorbs GC pauses. */
const MAX_MS_PER_INPUT = 1000;
/** Heap growth over one parser's whole run (after a full GC) above this is a leak. */
const MAX_HEAP_GROWTH_MB = 32;

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const iterations = Number(flag('--iterations') ?? process.env['FUZZ_ITERATIONS'] ?? (isQuick() ? QUICK_ITERATIONS : FULL_ITERATIONS));
const seed = Number(flag('--seed') ?? process.env['FUZZ_SEED'] ?? Date.now() % 0x7fffffff) >>> 0;
if (!Number.isInteger(iterations) || iterations <= 0) throw new Error(`bad iteration count ${iterations}`);

console.log(`fuzz: ${iterations} inputs, seed ${seed} (reproduce with --seed ${seed})`);
const t0 = performance.now();
const { stats, crashes } = runFuzz({
  targets: fuzzTargets(loadCorpus()),
  iterations,
  seed,
  maxMsPerInput: MAX_MS_PER_INPUT,
  maxHeapGrowthMb: MAX_HEAP_GROWTH_MB,
  onTarget: (s) => console.log(`  ${s.target}: ${s.inputs} inputs, ${s.crashes} crashes, ${s.inputsPerSec.toFixed(0)}/s`),
});
const seconds = (performance.now() - t0) / 1000;
console.log(`\n${renderStats(stats, seed)}in ${seconds.toFixed(1)} s`);
if (crashes.length > 0) {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'fuzz', 'crashes');
  mkdirSync(dir, { recursive: true });
  for (const c of crashes) {
    const file = join(dir, `${c.target.replace(/[^a-z0-9]+/gi, '-')}-${seed}-${c.index}.bin`);
    writeFileSync(file, c.input);
    console.log(`\nCRASH ${c.kind} in ${c.target}, input ${c.index} (seed ${seed}): ${c.detail.split('\n').slice(0, 4).join('\n  ')}\n  saved to ${file}\n  base64: ${c.input.toString('base64').slice(0, 2000)}`);
  }
  process.exitCode = 1;
}

const rates = stats.map((s) => s.inputsPerSec);
printSummary({
  bench: 'fuzz',
  what: `${stats.length} inbound parsers, mutated captures + grammar`,
  figures: `${iterations} inputs, ${crashes.length} crashes, ${Math.round(Math.min(...rates))}–${Math.round(Math.max(...rates))} inputs/s per parser, seed ${seed}`,
  target: '0 crashes',
  met: crashes.length === 0,
});
