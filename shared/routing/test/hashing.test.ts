// Hash-based choices: rendezvous hashing moves only the keys of a destination that left, and spreads them
// evenly over the others (the acceptance test: within ±10 % of even, no other key moves).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DestinationState } from '../src/index.ts';
import { dest, rule, set, table } from './fixtures.ts';

const names = Array.from({ length: 10 }, (_, i) => `node-${i}`);
const KEYS = 100_000;
const keyOf = (i: number): string => `3402000000132${String(i).padStart(7, '0')}`;

function assign(algorithm: 'hash-device' | 'hash-callid', state: (id: string) => DestinationState, weights?: number[]): string[] {
  const t = table({
    destinations: names.map((n) => dest(n)),
    sets: [set('s', algorithm, names.map((n, i) => [n, weights?.[i] ?? 1]))],
    rules: [rule({ setId: 's' })],
  });
  const out: string[] = [];
  for (let i = 0; i < KEYS; i++) out.push(t.decide({ group: 'g', device: keyOf(i), callId: `c${i}@x`, now: 0 }, { state }).destination!.id);
  return out;
}

describe('rendezvous hashing', () => {
  it('a dead destination\'s keys spread within ±10 % of even over the others, and no other key moves', () => {
    const before = assign('hash-device', () => 'active');
    const dead = 'node-3';
    const after = assign('hash-device', (id) => (id === dead ? 'inactive' : 'active'));
    const moved = new Map<string, number>();
    let held = 0;
    for (let i = 0; i < KEYS; i++) {
      if (before[i] === dead) {
        held++;
        assert.notEqual(after[i], dead);
        moved.set(after[i]!, (moved.get(after[i]!) ?? 0) + 1);
      } else {
        assert.equal(after[i], before[i], `key ${i} moved though its destination stayed`);
      }
    }
    assert.ok(Math.abs(held - KEYS / 10) < KEYS / 100, `the dead one held ${held} of ${KEYS}`);
    assert.equal(moved.size, 9);
    const even = held / 9;
    for (const [n, c] of moved) assert.ok(Math.abs(c - even) <= even * 0.1, `${n} took ${c}, even is ${even.toFixed(0)}`);
  });

  it('the same key always gives the same destination (stickiness without state)', () => {
    const a = assign('hash-callid', () => 'active');
    const b = assign('hash-callid', () => 'active');
    assert.deepEqual(a.slice(0, 1000), b.slice(0, 1000));
  });

  it('weights shift the share in proportion (weight 3 takes three times a weight-1 share, ±10 %)', () => {
    const weights = [3, 1, 1, 1, 1, 1, 1, 1, 1, 1];
    const got = assign('hash-device', () => 'active', weights);
    const share = got.filter((x) => x === 'node-0').length / KEYS;
    assert.ok(Math.abs(share - 3 / 12) <= (3 / 12) * 0.1, `share ${share}`);
  });

  it('a request without the hash key falls back to round robin rather than piling onto one destination', () => {
    const t = table({ destinations: [dest('a'), dest('b')], sets: [set('s', 'hash-callid', [['a'], ['b']])], rules: [rule({ setId: 's' })] });
    const picks = [0, 1, 2, 3].map(() => t.decide({ group: 'g', device: '1', now: 0 }).destination!.id);
    assert.deepEqual(picks, ['a', 'b', 'a', 'b']);
  });
});
