// Smooth weighted round robin, exactly Nginx's ngx_http_upstream_get_peer (the algorithm of the Kamailio
// write-up §3.1). Expected sequences are worked by hand below, not produced by the code under test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DestinationState } from '../src/index.ts';
import { dest, rule, set, table } from './fixtures.ts';

function sequence(weights: number[], picks: number): string[] {
  const names = weights.map((_, i) => String.fromCharCode(97 + i));
  const t = table({
    destinations: names.map((n) => dest(n)),
    sets: [set('s', 'swrr', names.map((n, i) => [n, weights[i]]))],
    rules: [rule({ setId: 's' })],
  });
  const out: string[] = [];
  for (let i = 0; i < picks; i++) out.push(t.decide({ group: 'g', device: '1', now: 0 }).destination!.id);
  return out;
}

describe('swrr', () => {
  it('{5,1,1} gives Nginx\'s a a b a c a a, then repeats', () => {
    // current weights: (5,1,1)→a (-2,1,1); (3,2,2)→a (-4,2,2); (1,3,3)→b (1,-4,3); (6,-3,4)→a (-1,-3,4);
    // (4,-2,5)→c (4,-2,-2); (9,-1,-1)→a (2,-1,-1); (7,0,0)→a (0,0,0): back to the start.
    assert.deepEqual(sequence([5, 1, 1], 14).join(' '), 'a a b a c a a a a b a c a a');
  });

  it('{3,2,1} gives a b a c b a (the write-up prints a different order, which is not what Nginx does)', () => {
    // (3,2,1)→a (-3,2,1); (0,4,2)→b (0,-2,2); (3,0,3)→a, first on a tie (-3,0,3); (0,2,4)→c (0,2,-2);
    // (3,4,-1)→b (3,-2,-1); (6,0,0)→a (0,0,0).
    assert.equal(sequence([3, 2, 1], 6).join(' '), 'a b a c b a');
  });

  it('10 weights: every cycle of sum(weights) picks gives each destination exactly its weight, never two of a low weight in a row', () => {
    const weights = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1];
    const total = 55;
    const seq = sequence(weights, total * 3);
    for (let c = 0; c < 3; c++) {
      const cycle = seq.slice(c * total, (c + 1) * total);
      const counts = new Map<string, number>();
      for (const x of cycle) counts.set(x, (counts.get(x) ?? 0) + 1);
      weights.forEach((w, i) => assert.equal(counts.get(String.fromCharCode(97 + i)), w, `cycle ${c}`));
    }
    assert.deepEqual(seq.slice(0, total), seq.slice(total, 2 * total), 'the sequence is periodic');
    // Step 1: cur = w → a (10) → a = -45. Step 2: a -35, b 18, c 16 → b = -37. Step 3: a -25, b -28, c 24,
    // d 21 → c = -31. Step 4: a -15, b -19, c -23, d 28, e 24 → d.
    assert.deepEqual(seq.slice(0, 4), ['a', 'b', 'c', 'd']);
    for (let i = 1; i < seq.length; i++) if (seq[i] === seq[i - 1]) assert.ok(['a', 'b'].includes(seq[i]!), `repeat of ${seq[i]} at ${i}`);
  });

  it('10 weights: the same sequence as a line-by-line transcription of Nginx\'s C loop', () => {
    // ngx_http_upstream_get_peer without failures (effective_weight stays weight):
    //   for (peer …) { peer->current_weight += peer->effective_weight; total += peer->effective_weight;
    //     if (best == NULL || peer->current_weight > best->current_weight) best = peer; }
    //   best->current_weight -= total;
    const weights = [7, 3, 9, 1, 4, 4, 2, 8, 5, 6];
    const current = weights.map(() => 0);
    const expected: string[] = [];
    for (let n = 0; n < 49 * 2; n++) {
      let best = -1;
      let total = 0;
      for (let i = 0; i < weights.length; i++) {
        current[i]! += weights[i]!;
        total += weights[i]!;
        if (best === -1 || current[i]! > current[best]!) best = i;
      }
      current[best]! -= total;
      expected.push(String.fromCharCode(97 + best));
    }
    assert.deepEqual(sequence(weights, 98), expected);
  });

  it('skips inactive destinations and goes on smoothly over the rest', () => {
    const t = table({
      destinations: [dest('a'), dest('b'), dest('c')],
      sets: [set('s', 'swrr', [['a', 5], ['b', 1], ['c', 1]])],
      rules: [rule({ setId: 's' })],
    });
    const state = (id: string): DestinationState => (id === 'a' ? 'inactive' : 'active');
    const picks = Array.from({ length: 4 }, () => t.decide({ group: 'g', device: '1', now: 0 }, { state }).destination!.id);
    assert.deepEqual(picks, ['b', 'c', 'b', 'c']);
  });
});
