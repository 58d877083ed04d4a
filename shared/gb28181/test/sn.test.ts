import assert from 'node:assert/strict';
import { createSnGenerator, SN_MAX } from '../src/index.ts';
import { test, throwsGb } from './support.ts';

test('SNs increase by one from the seed, without repeats', () => {
  const sn = createSnGenerator({ seed: 100 });
  const seen = Array.from({ length: 5000 }, () => sn.next());
  assert.deepEqual(seen.slice(0, 3), [100, 101, 102]);
  assert.equal(new Set(seen).size, 5000);
  assert.equal(sn.peek(), 5100);
  assert.equal(sn.next(), 5100);
});

test('two generators are independent (per instance, no shared state)', () => {
  const a = createSnGenerator();
  const b = createSnGenerator();
  assert.deepEqual([a.next(), a.next(), b.next()], [1, 2, 1]);
});

test('wraps to 1 after max (default: signed 32-bit max)', () => {
  const sn = createSnGenerator({ seed: 3, max: 4 });
  assert.deepEqual([sn.next(), sn.next(), sn.next(), sn.next()], [3, 4, 1, 2]);
  assert.equal(createSnGenerator({ seed: SN_MAX }).next(), 2147483647);
  throwsGb(() => createSnGenerator({ seed: 0 }), 'GB_ERR_ARGUMENT');
  throwsGb(() => createSnGenerator({ seed: 5, max: 4 }), 'GB_ERR_ARGUMENT');
});
