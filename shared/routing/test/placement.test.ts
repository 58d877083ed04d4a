// Device placement (issue 14): rule → group → rendezvous among eligible shards. Spread within ±10 % of even,
// a leaving shard moves only its own devices, draining/offline shards take none, the answer does not depend
// on the order the node table lists shards in.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePlacementRules, drainSlot, placeDevice, placementGroup, type PlacementPolicy, type Shard } from '../src/index.ts';

const shard = (code: string, over: Partial<Shard> = {}): Shard => ({ code, sipHost: '10.0.0.1', sipPort: 5060, group: 'default', online: true, draining: false, ...over });
const three = [shard('node-a'), shard('node-b'), shard('node-c')];
const NONE: PlacementPolicy = compilePlacementRules([]);
const DEVICES = 30_000;
const dev = (i: number): string => `3402000000132${String(i).padStart(7, '0')}`;

function assign(policy: PlacementPolicy, shards: readonly Shard[]): (string | null)[] {
  const out: (string | null)[] = [];
  for (let i = 0; i < DEVICES; i++) out.push(placeDevice(policy, shards, dev(i))?.code ?? null);
  return out;
}

const count = (xs: readonly (string | null)[]): Map<string | null, number> => {
  const m = new Map<string | null, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
};

describe('placement', () => {
  it('spreads devices over three shards within ±10 % of even', () => {
    const c = count(assign(NONE, three));
    assert.equal(c.size, 3);
    for (const [code, n] of c) assert.ok(Math.abs(n - DEVICES / 3) <= DEVICES / 30, `${code} got ${n}`);
  });

  for (const [what, leave] of [
    ['dies (offline)', (s: Shard): Shard => ({ ...s, online: false })],
    ['drains', (s: Shard): Shard => ({ ...s, draining: true })],
    ['leaves the table', null],
  ] as const) {
    it(`a shard that ${what} moves only its own devices, evenly over the others`, () => {
      const before = assign(NONE, three);
      const after = assign(NONE, leave === null ? three.filter((s) => s.code !== 'node-b') : three.map((s) => (s.code === 'node-b' ? leave(s) : s)));
      let held = 0;
      const moved = new Map<string, number>();
      for (let i = 0; i < DEVICES; i++) {
        if (before[i] === 'node-b') {
          held++;
          assert.ok(after[i] === 'node-a' || after[i] === 'node-c', `device ${i} went to ${after[i]}`);
          moved.set(after[i]!, (moved.get(after[i]!) ?? 0) + 1);
        } else {
          assert.equal(after[i], before[i], `device ${i} moved though its shard stayed`);
        }
      }
      for (const [code, n] of moved) assert.ok(Math.abs(n - held / 2) <= held / 20, `${code} took ${n} of ${held}`);
    });
  }

  it('a shard joining takes devices only from the others, about a quarter', () => {
    const before = assign(NONE, three);
    const after = assign(NONE, [...three, shard('node-d')]);
    let taken = 0;
    for (let i = 0; i < DEVICES; i++) {
      if (after[i] !== before[i]) {
        assert.equal(after[i], 'node-d');
        taken++;
      }
    }
    assert.ok(Math.abs(taken - DEVICES / 4) <= DEVICES / 40, `node-d took ${taken}`);
  });

  it('a paced drain releases the drained shard’s devices in step with its progress, to the others, never back', () => {
    const before = assign(NONE, three);
    const held = before.filter((x) => x === 'node-b').length;
    let released = new Set<number>();
    for (const share of [0, 0.1, 0.25, 0.5, 0.75, 0.99, 1]) {
      const after = assign(NONE, three.map((s) => (s.code === 'node-b' ? { ...s, draining: true, drainedShare: share } : s)));
      const now = new Set<number>();
      for (let i = 0; i < DEVICES; i++) {
        if (before[i] !== 'node-b') assert.equal(after[i], before[i], `device ${i} of a staying shard moved at ${share}`);
        else if (after[i] !== 'node-b') {
          assert.ok(after[i] === 'node-a' || after[i] === 'node-c');
          now.add(i);
        }
      }
      // uniform: the share released is the drain's progress (±2 % of the shard's devices)
      assert.ok(Math.abs(now.size - share * held) <= held / 50, `at ${share}: ${now.size} of ${held} released`);
      for (const i of released) assert.ok(now.has(i), `device ${i} came back to the draining shard`);
      released = now;
    }
    assert.equal(released.size, held, 'all gone at the end of the drain');
  });

  it('an undrained shard takes its devices back in step with its return, only its own, from the others, never away again', () => {
    const full = assign(NONE, three); // where the devices end up once node-b is fully back
    const drained = assign(NONE, three.map((s) => (s.code === 'node-b' ? { ...s, draining: true } : s)));
    const own = full.filter((x) => x === 'node-b').length;
    let back = new Set<number>();
    for (const share of [0, 0.1, 0.25, 0.5, 0.75, 0.99, 1]) {
      const after = assign(NONE, three.map((s) => (s.code === 'node-b' ? { ...s, joinedShare: share } : s)));
      const now = new Set<number>();
      for (let i = 0; i < DEVICES; i++) {
        if (after[i] === 'node-b') {
          assert.equal(full[i], 'node-b', `device ${i} is not node-b's`);
          now.add(i);
        } else assert.equal(after[i], drained[i], `device ${i} moved between the others at ${share}`);
      }
      // uniform: the share taken back is the return's progress (±2 % of the shard's devices)
      assert.ok(Math.abs(now.size - share * own) <= own / 50, `at ${share}: ${now.size} of ${own} back`);
      for (const i of back) assert.ok(now.has(i), `device ${i} left the returning shard again`);
      back = now;
    }
    assert.equal(back.size, own, 'all back at the end');
    assert.deepEqual(assign(NONE, three.map((s) => (s.code === 'node-b' ? { ...s, joinedShare: 1 } : s))), full, 'a full return is no return');
  });

  it('undrained halfway through its drain: keeps what it still held, takes back only what it had released, paced', () => {
    const full = assign(NONE, three);
    const halfDrained = assign(NONE, three.map((s) => (s.code === 'node-b' ? { ...s, draining: true, drainedShare: 0.5 } : s)));
    for (const share of [0, 0.5, 1]) {
      const after = assign(NONE, three.map((s) => (s.code === 'node-b' ? { ...s, joinedShare: share, joinFrom: 0.5 } : s)));
      for (let i = 0; i < DEVICES; i++) {
        if (halfDrained[i] === 'node-b') assert.equal(after[i], 'node-b', `device ${i} it still held left at ${share}`);
        else if (full[i] !== 'node-b') assert.equal(after[i], full[i], `device ${i} is not node-b's`);
        else assert.equal(after[i], drainSlot(dev(i)) < share * 0.5 ? 'node-b' : halfDrained[i], `device ${i} released by the drain, at ${share}`);
      }
    }
  });

  it('a drain without progress (a stop in progress) releases everything at once; the slot is in [0, 1)', () => {
    const stopping = three.map((s) => (s.code === 'node-b' ? { ...s, draining: true } : s));
    assert.ok(assign(NONE, stopping).every((x) => x !== 'node-b'));
    for (let i = 0; i < 1000; i++) assert.ok(drainSlot(dev(i)) >= 0 && drainSlot(dev(i)) < 1);
  });

  it('is the same whatever order the shards are listed in', () => {
    const a = assign(NONE, three);
    const b = assign(NONE, [...three].reverse());
    assert.deepEqual(a, b);
  });

  it('places nowhere when no shard of the group is eligible', () => {
    assert.equal(placeDevice(NONE, [shard('a', { online: false }), shard('b', { draining: true })], dev(1)), null);
    assert.equal(placeDevice(NONE, [], dev(1)), null);
  });

  const policy = compilePlacementRules([
    { prefix: '34', group: 'anhui' },
    { prefix: '3402', group: 'hefei' },
    { prefix: '11', group: 'beijing' },
  ]);
  const regional = [
    shard('h1', { group: 'hefei' }),
    shard('h2', { group: 'hefei' }),
    shard('a1', { group: 'anhui' }),
    shard('b1', { group: 'beijing' }),
    shard('d1'),
  ];
  const cases: [string, string, readonly string[]][] = [
    ['longest prefix wins', '34020000001320000001', ['h1', 'h2']],
    ['shorter prefix when the longer does not match', '34030000001320000001', ['a1']],
    ['another region', '11010000001320000001', ['b1']],
    ['no rule: default group', '44010000001320000001', ['d1']],
  ];
  for (const [what, device, allowed] of cases) {
    it(`rules: ${what}`, () => {
      const got = placeDevice(policy, regional, device);
      assert.ok(got !== null && allowed.includes(got.code), `${device} → ${got?.code}`);
    });
  }

  it('rules never spill a region into another when the region has no eligible shard', () => {
    const down = regional.map((s) => (s.group === 'beijing' ? { ...s, online: false } : s));
    assert.equal(placeDevice(policy, down, '11010000001320000001'), null);
    assert.equal(placementGroup(policy, '11010000001320000001'), 'beijing');
  });

  for (const [what, rules, message] of [
    ['a non-digit prefix', [{ prefix: '34a', group: 'x' }], /prefix must be 0..20 digits/],
    ['an empty group', [{ prefix: '34', group: '' }], /group must not be empty/],
    ['a prefix twice', [{ prefix: '34', group: 'x' }, { prefix: '34', group: 'y' }], /appears twice/],
  ] as const) {
    it(`refuses ${what}`, () => assert.throws(() => compilePlacementRules(rules), message));
  }
});
