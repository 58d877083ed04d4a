import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from './clock.ts';
import { NodeRegistryUnavailableError } from './errors.ts';
import { LeadershipTracker, applyNodeTableRead, initialLeadership, type LeadershipEvent } from './leadership.ts';

const n = (code: string, online: boolean, cascadeNode: boolean) => ({ code, online, cascadeNode });
const transient = new NodeRegistryUnavailableError('listNodes: MySQL unavailable (ECONNREFUSED)');

function tracker(selfId: string, clock = new FakeClock(1000)): { t: LeadershipTracker; seen: LeadershipEvent[]; clock: FakeClock } {
  const seen: LeadershipEvent[] = [];
  const t = new LeadershipTracker({ selfId, clock, onEvent: (e) => seen.push(e) });
  return { t, seen, clock };
}

describe('leadership tracker (CASC-1, FAIL-2, FAIL-4)', () => {
  it('is unknown before the first good read, and a failed first read does not guess', () => {
    const { t, seen } = tracker('node-a');
    assert.deepEqual([t.leader, t.isLeader], [null, false]);
    assert.deepEqual(t.observeFailure(transient), []);
    assert.deepEqual([t.leader, t.isLeader, t.view.consecutiveFailures, t.view.failingSince], [null, false, 1, 1000]);
    assert.deepEqual(seen, []);
  });

  it('first read electing self: became-leader with previous null', () => {
    const { t, seen } = tracker('node-a');
    t.observe([n('node-a', true, true), n('node-b', true, true)]);
    assert.deepEqual(seen, [{ type: 'became-leader', leader: 'node-a', previous: null, at: 1000 }]);
    assert.equal(t.isLeader, true);
  });

  it('first read electing another node: leader-changed (not lost-leadership)', () => {
    const { t, seen } = tracker('node-b');
    t.observe([n('node-a', true, true), n('node-b', true, true)]);
    assert.deepEqual(seen, [{ type: 'leader-changed', leader: 'node-a', previous: null, at: 1000 }]);
    assert.equal(t.isLeader, false);
  });

  it('standalone (empty table) elects self (CASC-5)', () => {
    const { t, seen } = tracker('solo');
    t.observe([]);
    assert.deepEqual(seen.map((e) => e.type), ['became-leader']);
  });

  it('leader loss: the next smallest flagged node takes over (FAIL-2), each side sees its own event', () => {
    const a = tracker('node-a');
    const b = tracker('node-b');
    const up = [n('node-a', true, true), n('node-b', true, true), n('node-c', true, false)];
    const aDown = [n('node-a', false, true), n('node-b', true, true), n('node-c', true, false)];
    for (const x of [a, b]) x.t.observe(up);
    a.clock.advance(5000);
    b.clock.advance(5000);
    b.t.observe(aDown);
    assert.deepEqual(b.seen.at(-1), { type: 'became-leader', leader: 'node-b', previous: 'node-a', at: 6000 });
    // node-a was only paused (GC, network): when it reads again it learns it lost the role
    a.t.observe(aDown);
    assert.deepEqual(a.seen.at(-1), { type: 'lost-leadership', leader: 'node-b', previous: 'node-a', at: 6000 });
    // and it comes back: being the smallest flagged code it is leader again
    a.t.observe(up);
    b.t.observe(up);
    assert.equal(a.seen.at(-1)?.type, 'became-leader');
    assert.deepEqual(b.seen.at(-1), { type: 'lost-leadership', leader: 'node-a', previous: 'node-b', at: 6000 });
  });

  it('a change between two other nodes is leader-changed', () => {
    const { t, seen } = tracker('node-z');
    t.observe([n('node-a', true, true), n('node-b', true, true)]);
    t.observe([n('node-a', false, true), n('node-b', true, true)]);
    assert.deepEqual(seen.at(-1), { type: 'leader-changed', leader: 'node-b', previous: 'node-a', at: 1000 });
  });

  it('same leader read again: no event', () => {
    const { t, seen } = tracker('node-a');
    t.observe([n('node-a', true, true)]);
    t.observe([n('node-a', true, true), n('node-b', true, false)]);
    assert.equal(seen.length, 1);
  });

  it('FAIL-4: read failures keep the last good view — no flapping — and a good read resets the counters', () => {
    const { t, seen, clock } = tracker('node-a');
    t.observe([n('node-a', true, true), n('node-b', true, true)]);
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      assert.deepEqual(t.observeFailure(transient), []);
    }
    assert.deepEqual([t.leader, t.isLeader, t.view.consecutiveFailures, t.view.failingSince, t.view.lastGoodReadAt], ['node-a', true, 5, 2000, 1000]);
    clock.advance(1000);
    t.observe([n('node-a', true, true), n('node-b', true, true)]);
    assert.deepEqual([t.view.consecutiveFailures, t.view.failingSince, t.view.lastGoodReadAt], [0, null, 7000]);
    assert.equal(seen.length, 1, 'only the initial became-leader');
  });

  it('the reducer is pure: the input view is never modified', () => {
    const v0 = initialLeadership('node-a');
    const copy = { ...v0 };
    const s1 = applyNodeTableRead(v0, { ok: true, nodes: [n('node-a', true, true)] }, 10);
    const s2 = applyNodeTableRead(s1.view, { ok: false, error: transient }, 20);
    assert.deepEqual(v0, copy);
    assert.equal(s1.view.leader, 'node-a');
    assert.equal(s2.view.leader, 'node-a');
    assert.notEqual(s1.view, s2.view);
  });
});
