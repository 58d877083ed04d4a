// Gray release: percentage by stable hash (sticky per key, monotonic across steps), conditions (exact,
// prefix, regex, CIDR v4/v6), time window, rollback; decisions name the rule and the step.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GrayRelease, Rule } from '../src/index.ts';
import { releaseBucket } from '../src/index.ts';
import { dest, set, table } from './fixtures.ts';

const base = { destinations: [dest('old'), dest('new')], sets: [set('stable', 'round-robin', [['old']]), set('canary', 'round-robin', [['new']])] };
const withRelease = (release: Partial<GrayRelease>): ReturnType<typeof table> => {
  const rule: Rule = {
    id: 7,
    group: 'upstream',
    field: 'callee',
    prefix: '',
    priority: 0,
    setId: 'stable',
    release: { canarySetId: 'canary', key: 'callid', steps: [1, 10, 50, 100], step: 0, ...release },
  };
  return table({ ...base, rules: [rule] });
};
const N = 20_000;
const callIds = Array.from({ length: N }, (_, i) => `${i}-a84b4c76e66710@pc33.example`);
const canarySet = (t: ReturnType<typeof table>): Set<string> =>
  new Set(callIds.filter((c) => t.decide({ group: 'upstream', callee: '1', callId: c, now: 0 }).side === 'canary'));

describe('gray release by percentage', () => {
  it('each step sends about its share; a key on the canary side stays there as the steps grow', () => {
    let previous = new Set<string>();
    for (const [step, percent] of [1, 10, 50, 100].entries()) {
      const canary = canarySet(withRelease({ step }));
      const share = canary.size / N;
      assert.ok(Math.abs(share - percent / 100) <= Math.max(0.004, (percent / 100) * 0.1), `step ${step}: ${share}`);
      for (const c of previous) assert.ok(canary.has(c), `${c} went back to stable at step ${step}`);
      previous = canary;
    }
  });

  it('the same key always lands on the same side, in every table built from the same data', () => {
    assert.deepEqual([...canarySet(withRelease({ step: 1 }))], [...canarySet(withRelease({ step: 1 }))]);
  });

  it('rollback (step -1) sends everything to the stable set', () => {
    assert.equal(canarySet(withRelease({ step: -1 })).size, 0);
  });

  it('the decision names the rule, the side and the step', () => {
    const t = withRelease({ step: 2 });
    const c = callIds.find((x) => releaseBucket(x) < 5000)!;
    const d = t.decide({ group: 'upstream', callee: '1', callId: c, now: 0 });
    assert.deepEqual(
      { ruleId: d.ruleId, side: d.side, step: d.releaseStep, percent: d.releasePercent, set: d.setId, to: d.destination?.id },
      { ruleId: 7, side: 'canary', step: 2, percent: 50, set: 'canary', to: 'new' },
    );
    const s = callIds.find((x) => releaseBucket(x) >= 5000)!;
    assert.equal(t.decide({ group: 'upstream', callee: '1', callId: s, now: 0 }).destination?.id, 'old');
  });

  it('a request without the release key stays stable below 100 %', () => {
    assert.equal(withRelease({ step: 2 }).decide({ group: 'upstream', callee: '1', now: 0 }).side, 'stable');
    assert.equal(withRelease({ step: 3 }).decide({ group: 'upstream', callee: '1', now: 0 }).side, 'canary');
  });
});

describe('gray release by condition and window', () => {
  const full = { step: 3 }; // 100 %: only conditions and window decide
  const side = (t: ReturnType<typeof table>, req: { caller?: string; device?: string; source?: string; now?: number }): string =>
    t.decide({ group: 'upstream', callee: '1', callId: 'x', now: 0, ...req }).side;

  it('exact and prefix on the caller', () => {
    const exact = withRelease({ ...full, conditions: [{ field: 'caller', op: 'exact', value: '13800000000' }] });
    assert.equal(side(exact, { caller: '13800000000' }), 'canary');
    assert.equal(side(exact, { caller: '138000000001' }), 'stable');
    const prefix = withRelease({ ...full, conditions: [{ field: 'caller', op: 'prefix', value: '138' }] });
    assert.equal(side(prefix, { caller: '13812345678' }), 'canary');
    assert.equal(side(prefix, { caller: '13912345678' }), 'stable');
    assert.equal(side(prefix, {}), 'stable', 'no caller: the condition does not hold');
  });

  it('regex on the device code', () => {
    const t = withRelease({ ...full, conditions: [{ field: 'device', op: 'regex', value: '^3402\\d{6}13[12]' }] });
    assert.equal(side(t, { device: '34020000001310000001' }), 'canary');
    assert.equal(side(t, { device: '34020000001320000001' }), 'canary');
    assert.equal(side(t, { device: '34020000001330000001' }), 'stable');
  });

  it('CIDR on the source address, IPv4, IPv6 and IPv4-mapped IPv6', () => {
    const v4 = withRelease({ ...full, conditions: [{ field: 'source', op: 'cidr', value: '192.168.10.0/23' }] });
    assert.equal(side(v4, { source: '192.168.11.254' }), 'canary');
    assert.equal(side(v4, { source: '192.168.12.1' }), 'stable');
    assert.equal(side(v4, { source: '::ffff:192.168.10.7' }), 'canary');
    assert.equal(side(v4, { source: 'not-an-address' }), 'stable');
    const v6 = withRelease({ ...full, conditions: [{ field: 'source', op: 'cidr', value: '2001:db8:abcd::/48' }] });
    assert.equal(side(v6, { source: '2001:db8:abcd:12::1' }), 'canary');
    assert.equal(side(v6, { source: '[2001:db8:abcd:ffff::2]' }), 'canary');
    assert.equal(side(v6, { source: '2001:db8:abce::1' }), 'stable');
    assert.equal(side(v6, { source: '192.168.10.7' }), 'stable');
  });

  it('all conditions must hold', () => {
    const t = withRelease({
      ...full,
      conditions: [
        { field: 'caller', op: 'prefix', value: '138' },
        { field: 'source', op: 'cidr', value: '10.0.0.0/8' },
      ],
    });
    assert.equal(side(t, { caller: '1381', source: '10.1.2.3' }), 'canary');
    assert.equal(side(t, { caller: '1381', source: '11.1.2.3' }), 'stable');
  });

  it('a window limits the release to its hours (02:00–04:00 Shanghai)', () => {
    const t = withRelease({ ...full, window: { start: '02:00', end: '04:00' } });
    assert.equal(side(t, { now: Date.parse('2026-01-05T03:00:00+08:00') }), 'canary');
    assert.equal(side(t, { now: Date.parse('2026-01-05T04:00:00+08:00') }), 'stable');
  });
});
