import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryNodeRegistry, NodeRegistryUnavailableError, type NodeInfo, type NodeRegistry } from '@vms/cluster';
import { FakeClock } from '../core/clock.ts';
import { NodeTracker } from './node-tracker.ts';

const WINDOW = 3000;
const info = (code: string, cascadeNode = false): NodeInfo => ({
  code,
  sipHost: '127.0.0.1',
  sipPort: 5060,
  internalBaseUrl: `http://${code}:18080`,
  cascadeNode,
  startedAt: new Date(0),
  version: 't',
});

/** A registry whose reads can be made to fail (MySQL down). */
function flaky(inner: NodeRegistry) {
  const state = { down: false, reads: 0 };
  const registry: NodeRegistry = {
    ...inner,
    listNodes: async (w) => {
      state.reads++;
      if (state.down) throw new NodeRegistryUnavailableError('down');
      return inner.listNodes(w);
    },
  };
  return { registry, state };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

function setup() {
  const clock = new FakeClock(1_000_000);
  const inner = createMemoryNodeRegistry({ clock });
  const { registry, state } = flaky(inner);
  const leaders: [string, string | null][] = [];
  const tracker = new NodeTracker({
    registry,
    selfCode: 'node-b',
    onlineWindowMs: WINDOW,
    clock,
    onLeaderChange: (l, p) => leaders.push([l, p]),
  });
  return { clock, inner, state, tracker, leaders };
}

describe('node tracker (NODE-1, ROUTE-5, CASC-1, FAIL-4)', () => {
  it('an owner missing from the view is looked up on demand; online as judged at read time', async () => {
    const { clock, inner, tracker } = setup();
    assert.equal(tracker.cascadeLeader, 'node-b', 'no table yet: self');
    await inner.heartbeat(info('node-a'), 2);
    assert.deepEqual(await tracker.stateOf('node-a'), { kind: 'online', baseUrl: 'http://node-a:18080' });
    clock.advance(WINDOW + 1);
    await tracker.refresh();
    assert.deepEqual(await tracker.stateOf('node-a'), { kind: 'offline' });
    assert.deepEqual(await tracker.stateOf('node-x'), { kind: 'unknown' });
  });

  it('on-demand reads are rate-limited', async () => {
    const { clock, state, tracker } = setup();
    await tracker.stateOf('node-x');
    await tracker.stateOf('node-x');
    assert.equal(state.reads, 1);
    clock.advance(1000);
    await tracker.stateOf('node-x');
    assert.equal(state.reads, 2);
  });

  it('a node that started right after the last heartbeat read is found by the first request for it', async () => {
    const { clock, inner, state, tracker } = setup();
    await inner.heartbeat(info('node-b'), 0);
    await tracker.refresh(); // the heartbeat loop's read
    clock.advance(100);
    await inner.heartbeat(info('node-c'), 1); // node-c starts; its devices register to it at once
    assert.deepEqual(await tracker.stateOf('node-c'), { kind: 'online', baseUrl: 'http://node-c:18080' });
    assert.equal(state.reads, 2);
    // heartbeat reads do not use up the requests' budget, and vice versa the budget holds
    await tracker.refresh();
    assert.deepEqual(await tracker.stateOf('node-x'), { kind: 'unknown' });
    assert.equal(state.reads, 3, 'a second on-demand read within the second is refused');
  });

  it('an owner that refused a connection is offline until its heartbeat advances (FAIL-1)', async () => {
    const { clock, inner, tracker } = setup();
    await inner.heartbeat(info('node-a'), 0);
    await tracker.refresh();
    tracker.markRefused('node-a');
    assert.deepEqual(await tracker.stateOf('node-a'), { kind: 'offline' });
    await tracker.refresh();
    assert.deepEqual(await tracker.stateOf('node-a'), { kind: 'offline' }, 'same heartbeat: still refused');
    clock.advance(10);
    await inner.heartbeat(info('node-a'), 0); // the restarted process heartbeats
    await tracker.refresh();
    assert.equal((await tracker.stateOf('node-a')).kind, 'online');
  });

  it('a failed read keeps the last good view and leader, and pauses on-demand reads', async () => {
    const { clock, inner, state, tracker, leaders } = setup();
    await inner.heartbeat(info('node-a', true), 0);
    await inner.heartbeat(info('node-b'), 0);
    await tracker.refresh();
    assert.equal(tracker.cascadeLeader, 'node-a');
    state.down = true;
    await assert.rejects(tracker.refresh(), NodeRegistryUnavailableError);
    assert.equal(tracker.cascadeLeader, 'node-a', 'FAIL-4: no flap on a transient error');
    assert.equal(tracker.snapshot?.rows.length, 2);
    clock.advance(5000);
    const reads = state.reads;
    assert.deepEqual(await tracker.stateOf('node-x'), { kind: 'unknown' });
    assert.equal(state.reads, reads, 'requests do not wait on a dead database');
    state.down = false;
    await tracker.refresh();
    assert.equal(tracker.cascadeLeader, 'node-a', 'held for one window after the outage');
    clock.advance(WINDOW);
    await tracker.refresh();
    assert.deepEqual(leaders, [['node-a', null], ['node-b', 'node-a']], 'node-a, silent for good, aged out');
  });

  it('right after an outage, nodes that were online stay online for one window: no leader flap (FAIL-4)', async () => {
    const { clock, inner, state, tracker, leaders } = setup();
    await inner.heartbeat(info('node-a', true), 0);
    await inner.heartbeat(info('node-b'), 0);
    await tracker.refresh();
    state.down = true;
    await assert.rejects(tracker.refresh());
    clock.advance(WINDOW + 500); // a long outage: nobody could heartbeat
    state.down = false;
    await inner.heartbeat(info('node-b'), 0); // we are first back
    await tracker.refresh();
    clock.advance(WINDOW - 600);
    await tracker.refresh();
    assert.equal(tracker.cascadeLeader, 'node-a');
    assert.equal((await tracker.stateOf('node-a')).kind, 'online');
    await inner.heartbeat(info('node-a', true), 0); // node-a is back too
    clock.advance(WINDOW);
    await inner.heartbeat(info('node-b'), 0);
    await tracker.refresh();
    assert.deepEqual(leaders, [['node-a', null]], 'never moved');
    clock.advance(WINDOW + 1); // now node-a really stopped
    await inner.heartbeat(info('node-b'), 0);
    await tracker.refresh();
    assert.equal(tracker.cascadeLeader, 'node-b');
  });

  it('a dead node is read offline as its last beat leaves the window, not at the next heartbeat read (FAIL-2)', async () => {
    const { clock, inner, state, tracker, leaders } = setup();
    await inner.heartbeat(info('node-a', true), 0);
    await inner.heartbeat(info('node-b', true), 0);
    await tracker.refresh(); // the heartbeat loop's read, right after node-a's last beat
    assert.equal(tracker.cascadeLeader, 'node-a');
    const reads = state.reads;
    clock.advance(WINDOW - 1); // node-a died; our own next heartbeat read is not due yet
    await settle();
    assert.equal(state.reads, reads, 'no read while node-a is still inside the window');
    clock.advance(30);
    await settle();
    assert.equal(state.reads, reads + 1, 'one read as node-a leaves the window');
    assert.equal(tracker.cascadeLeader, 'node-b');
    assert.deepEqual(leaders.at(-1), ['node-b', 'node-a']);
  });

  it('live nodes push that read out with every beat: a healthy cluster reads only at its own heartbeats', async () => {
    const { clock, inner, state, tracker } = setup();
    let beats = 0;
    for (let t = 0; t < 10 * WINDOW; t += WINDOW / 3) {
      await inner.heartbeat(info('node-a', true), 0);
      await inner.heartbeat(info('node-b'), 0);
      await tracker.refresh();
      beats++;
      clock.advance(WINDOW / 3);
      await settle();
    }
    assert.equal(state.reads, beats);
    tracker.close();
    clock.advance(2 * WINDOW);
    await settle();
    assert.equal(state.reads, beats, 'closed: no timer left');
  });

  it('concurrent refreshes share one read', async () => {
    const { state, tracker } = setup();
    await Promise.all([tracker.refresh(), tracker.refresh(), tracker.stateOf('node-q')]);
    assert.equal(state.reads, 1);
  });
});
