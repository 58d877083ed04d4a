// The fuzz bench's short run (test/bench/fuzz.ts, all inbound parsers, mutated captures + grammar
// inputs): 20,000 inputs with a fixed seed, so `npm test` holds every parser to "documented error or
// success, never a crash, a hang or a leak". FUZZ_SEED varies the inputs; the long run is the bench.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { renderStats, runFuzz } from '../bench/fuzz/engine.ts';
import { fuzzTargets, loadCorpus } from '../bench/fuzz/targets.ts';

const ITERATIONS = 20_000;
const SEED = Number(process.env['FUZZ_SEED'] ?? 0x28181) >>> 0;
/** CPU per input: a hang or a blow-up, not a slow shared CI machine. */
const MAX_MS_PER_INPUT = 1000;
const MAX_HEAP_GROWTH_MB = 32;

it(`fuzz: ${ITERATIONS} inputs over every inbound parser, seed ${SEED}: no crash`, { timeout: 180_000 }, () => {
  const { stats, crashes } = runFuzz({ targets: fuzzTargets(loadCorpus()), iterations: ITERATIONS, seed: SEED, maxMsPerInput: MAX_MS_PER_INPUT, maxHeapGrowthMb: MAX_HEAP_GROWTH_MB });
  console.log(renderStats(stats, SEED));
  const first = crashes[0];
  assert.equal(crashes.length, 0, first === undefined ? '' : `${first.kind} in ${first.target} (seed ${SEED}, input ${first.index}): ${first.detail}\ninput (base64): ${first.input.toString('base64')}`);
  for (const s of stats) {
    assert.ok(s.inputs > 0 && s.accepted + s.refused === s.inputs, `${s.target}: ${JSON.stringify(s)}`);
    assert.ok(s.refused > 0, `${s.target}: no input refused, the mutations are too weak`);
  }
});
