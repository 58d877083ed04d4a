// Decisions: health tiers, failover by exclusion, priority + weight, least load, stickiness; shadow report.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DestinationState } from '../src/index.ts';
import { ShadowComparator, SHADOW_SAMPLES } from '../src/index.ts';
import { dest, rule, set, table } from './fixtures.ts';

const states = (m: Record<string, DestinationState>) => (id: string): DestinationState => m[id] ?? 'active';

describe('health tiers and failover', () => {
  const t = table({ destinations: [dest('a'), dest('b'), dest('c')], sets: [set('s', 'round-robin', [['a'], ['b'], ['c']])], rules: [rule({ setId: 's' })] });

  it('inactive destinations are never chosen; probing ones only when none is active', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add(t.decide({ group: 'g', device: '1', now: 0 }, { state: states({ a: 'inactive', b: 'probing' }) }).destination!.id);
    assert.deepEqual([...seen], ['c']);
    const d = t.decide({ group: 'g', device: '1', now: 0 }, { state: states({ a: 'inactive', b: 'probing', c: 'inactive' }) });
    assert.equal(d.destination?.id, 'b');
    assert.equal(d.tier, 'probing');
    const none = t.decide({ group: 'g', device: '1', now: 0 }, { state: () => 'inactive' });
    assert.equal(none.reason, 'no-destination');
    assert.equal(typeof none.ruleId, 'number');
    assert.equal(none.setId, 's', 'a refusal still says which rule and set');
  });

  it('failover: decide again excluding what failed', () => {
    const first = t.decide({ group: 'g', device: '1', now: 0 }).destination!.id;
    const second = t.decide({ group: 'g', device: '1', now: 0, exclude: [first] }).destination!.id;
    const third = t.decide({ group: 'g', device: '1', now: 0, exclude: [first, second] }).destination!.id;
    assert.equal(new Set([first, second, third]).size, 3);
    assert.equal(t.decide({ group: 'g', device: '1', now: 0, exclude: [first, second, third] }).reason, 'no-destination');
  });

  it('a drained destination (weight 0) is not chosen', () => {
    const u = table({ destinations: [dest('a'), dest('b')], sets: [set('s', 'random', [['a', 0], ['b', 1]])], rules: [rule({ setId: 's' })] });
    for (const r of [0, 0.3, 0.99]) assert.equal(u.decide({ group: 'g', device: '1', now: 0 }, { random: () => r }).destination?.id, 'b');
  });
});

describe('priority + weight', () => {
  const t = table({
    destinations: [dest('p1'), dest('p2'), dest('backup')],
    sets: [set('s', 'priority', [['p1', 80, 0], ['p2', 20, 0], ['backup', 1, 1]])],
    rules: [rule({ setId: 's' })],
  });
  it('splits the first priority by weight (80/20), never the backup while one of them is up', () => {
    assert.equal(t.decide({ group: 'g', device: '1', now: 0 }, { random: () => 0.79 }).destination?.id, 'p1');
    assert.equal(t.decide({ group: 'g', device: '1', now: 0 }, { random: () => 0.81 }).destination?.id, 'p2');
    assert.equal(t.decide({ group: 'g', device: '1', now: 0, exclude: ['p1'] }, { random: () => 0.1 }).destination?.id, 'p2');
  });
  it('fails over to the next priority when the first is down or excluded', () => {
    assert.equal(t.decide({ group: 'g', device: '1', now: 0, exclude: ['p1', 'p2'] }).destination?.id, 'backup');
    assert.equal(t.decide({ group: 'g', device: '1', now: 0 }, { state: states({ p1: 'inactive', p2: 'inactive' }) }).destination?.id, 'backup');
  });
});

describe('least load (today\'s media node choice)', () => {
  const t = table({
    destinations: [dest('a'), dest('b'), dest('c')],
    sets: [set('s', 'least-load', [['a', 1], ['b', 4], ['c', 1]])],
    rules: [rule({ setId: 's' })],
  });
  const load = (m: Record<string, number>) => (id: string): number | undefined => m[id];
  it('fewest load per unit of weight; ties to the larger weight, then the smaller id', () => {
    assert.equal(t.decide({ group: 'g', device: '1', now: 0 }, { load: load({ a: 4, b: 12, c: 5 }) }).destination?.id, 'b', '12/4 = 3 < 4');
    assert.equal(t.decide({ group: 'g', device: '1', now: 0 }, { load: load({ a: 2, b: 8, c: 5 }) }).destination?.id, 'b', 'equal load per weight: larger weight');
    assert.equal(t.decide({ group: 'g', device: '1', now: 0 }, { load: load({ a: 1, b: 80, c: 1 }) }).destination?.id, 'a', 'full tie: smaller id');
  });
  it('sticky: a destination already serving the key is kept while not inactive, even drained or busier', () => {
    const d = t.decide({ group: 'g', device: '1', now: 0, sticky: 'c' }, { load: load({ a: 0, b: 0, c: 99 }), state: states({ c: 'probing' }) });
    assert.equal(d.destination?.id, 'c');
    assert.equal(d.reason, 'sticky');
    assert.equal(t.decide({ group: 'g', device: '1', now: 0, sticky: 'c' }, { state: states({ c: 'inactive' }) }).reason, 'chosen');
    assert.equal(t.decide({ group: 'g', device: '1', now: 0, sticky: 'c', exclude: ['c'] }).destination?.id === 'c', false);
    assert.equal(t.decide({ group: 'g', device: '1', now: 0, sticky: 'zz' }).reason, 'chosen', 'a sticky id outside the set is ignored');
  });
});

describe('random', () => {
  it('follows the weights', () => {
    const t = table({ destinations: [dest('a'), dest('b')], sets: [set('s', 'random', [['a', 3], ['b', 1]])], rules: [rule({ setId: 's' })] });
    const pick = (r: number): string => t.decide({ group: 'g', device: '1', now: 0 }, { random: () => r }).destination!.id;
    assert.deepEqual([0, 0.74, 0.76, 0.999].map(pick), ['a', 'a', 'b', 'b']);
  });
});

describe('shadow comparator', () => {
  const live = table({ version: 1, destinations: [dest('a'), dest('b')], sets: [set('s', 'round-robin', [['a']]), set('t', 'round-robin', [['b']])], rules: [rule({ id: 1, setId: 's' })] });
  const shadow = table({
    version: 2,
    destinations: [dest('a'), dest('b')],
    sets: [set('s', 'round-robin', [['a']]), set('t', 'round-robin', [['b']])],
    rules: [rule({ id: 1, setId: 's' }), rule({ id: 2, prefix: '44', setId: 't' }), rule({ id: 3, prefix: '35', setId: 's' })],
  });
  it('counts differing destinations and same-destination-other-rule apart, with bounded samples', () => {
    const cmp = new ShadowComparator();
    const devices = ['34000', '44000', '35000', '44001', ...Array.from({ length: 30 }, (_, i) => `44${i}`)];
    for (const device of devices) {
      const req = { group: 'media', device, now: 0 };
      cmp.record(5, 'media', device, live.decide({ ...req, group: 'g' }), shadow.decide({ ...req, group: 'g' }));
    }
    const r = cmp.report();
    assert.deepEqual(r.groups.media, { decisions: 34, differentDestination: 32, differentRuleOnly: 1 });
    assert.equal(r.liveVersion, 1);
    assert.equal(r.shadowVersion, 2);
    assert.equal(r.samples.length, SHADOW_SAMPLES);
    assert.deepEqual(r.samples.at(-1), { at: 5, group: 'media', key: '4429', live: { destination: 'a', ruleId: 1 }, shadow: { destination: 'b', ruleId: 2 } });
    cmp.reset();
    assert.deepEqual(cmp.report().groups, {});
  });
});
