// Health probing (SPEC §10): probe thresholds, business failures on the same state, manual overrides that
// probing never undoes, bounded rounds. Probers are plain functions here; the real ones (SIP OPTIONS, HTTP
// GET) and the state shared through Redis are tested in test/integration/routing-health.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@vms/clock';
import { createMemoryHealthStore, MAX_CONCURRENT_PROBES, RoutingHealthMonitor, type Destination, type Prober } from '../src/index.ts';

const quiet = { info: () => undefined, warn: () => undefined };
const dests: Destination[] = [
  { id: 'up-a', kind: 'sip', address: 'sip:10.0.0.1:5060' },
  { id: 'web', kind: 'http', address: 'http://10.0.0.2/health' },
  { id: 'shard-1', kind: 'shard', address: 'shard-1' },
];

function monitor(alive: Map<string, boolean>, calls: string[] = []): RoutingHealthMonitor {
  const probe: Prober = async (d) => {
    calls.push(d.id);
    return alive.get(d.id) ?? true;
  };
  return new RoutingHealthMonitor({
    store: createMemoryHealthStore(),
    clock: new FakeClock(0),
    probers: { sip: probe, http: probe },
    destinations: () => dests,
    intervalMs: 1000,
    timeoutMs: 500,
    policy: { probeFailuresToInactive: 3, probeSuccessesToActive: 2, businessFailuresToInactive: 2 },
    log: quiet,
  });
}

describe('routing health monitor', () => {
  it('probes only the kinds it has a prober for', async () => {
    const calls: string[] = [];
    const m = monitor(new Map(), calls);
    await m.round();
    assert.deepEqual(calls.sort(), ['up-a', 'web']);
    assert.equal(m.state('shard-1'), 'active', 'never reported on: active');
  });

  it('N consecutive failures take a destination out; one success brings it to probing, K to active', async () => {
    const alive = new Map([['up-a', false]]);
    const m = monitor(alive);
    await m.round();
    await m.round();
    assert.equal(m.state('up-a'), 'active', 'two failures of three');
    await m.round();
    assert.equal(m.state('up-a'), 'inactive');
    alive.set('up-a', true);
    await m.round();
    assert.equal(m.state('up-a'), 'probing');
    await m.round();
    assert.equal(m.state('up-a'), 'active');
  });

  it('business failures count against the same state; a success between them resets the count', async () => {
    const m = monitor(new Map());
    await m.reportBusiness('web', false);
    await m.reportBusiness('web', true);
    await m.reportBusiness('web', false);
    assert.equal(m.state('web'), 'active');
    await m.reportBusiness('web', false);
    assert.equal(m.state('web'), 'inactive');
    await m.round(); // a probe success: probing, not yet active
    assert.equal(m.state('web'), 'probing');
  });

  it('a manual disable or enable is never undone by probing; auto returns to the probed state', async () => {
    const alive = new Map([['up-a', true]]);
    const m = monitor(alive);
    await m.setManual('up-a', 'disabled');
    for (let i = 0; i < 5; i++) await m.round();
    assert.equal(m.state('up-a'), 'inactive', 'probes succeed, the operator said no');
    await m.setManual('up-a', 'enabled');
    alive.set('up-a', false);
    for (let i = 0; i < 5; i++) await m.round();
    assert.equal(m.state('up-a'), 'active', 'probes fail, the operator said yes');
    assert.equal(m.health('up-a')?.auto, 'inactive', 'the probed state is kept current under the override');
    await m.setManual('up-a', 'auto');
    assert.equal(m.state('up-a'), 'inactive');
  });

  it('tells listeners of every effective state change: its own events, and another monitor\'s after a refresh', async () => {
    const store = createMemoryHealthStore();
    const make = (): RoutingHealthMonitor =>
      new RoutingHealthMonitor({ store, clock: new FakeClock(0), probers: {}, destinations: () => dests, intervalMs: 1000, timeoutMs: 500, policy: { probeFailuresToInactive: 2, probeSuccessesToActive: 1, businessFailuresToInactive: 2 }, log: quiet });
    const a = make();
    const b = make();
    const seenA: string[] = [];
    const seenB: string[] = [];
    a.onChange((id, from, to) => seenA.push(`${id} ${from}->${to}`));
    const off = b.onChange((id, from, to) => seenB.push(`${id} ${from}->${to}`));
    a.onChange(() => {
      throw new Error('a listener that throws does not stop the others');
    });
    await a.reportProbe('node-1', false);
    assert.deepEqual(seenA, [], 'one failure of two: no change');
    await a.reportProbe('node-1', false);
    assert.deepEqual(seenA, ['node-1 active->inactive']);
    await b.refresh();
    assert.deepEqual(seenB, ['node-1 active->inactive'], 'the other instance learns it on its refresh');
    await b.refresh();
    assert.equal(seenB.length, 1, 'no change, no call');
    await b.setManual('node-1', 'enabled');
    assert.deepEqual(seenB, ['node-1 active->inactive', 'node-1 inactive->active']);
    await a.refresh();
    assert.deepEqual(seenA, ['node-1 active->inactive', 'node-1 inactive->active']);
    off();
    await b.setManual('node-1', 'auto');
    assert.equal(seenB.length, 2, 'unsubscribed');
    assert.equal(b.state('node-1'), 'inactive');
  });

  it('a prober that throws is a failed probe, not a crash', async () => {
    const m = new RoutingHealthMonitor({
      store: createMemoryHealthStore(),
      clock: new FakeClock(0),
      probers: { sip: async () => Promise.reject(new Error('boom')) },
      destinations: () => dests,
      intervalMs: 1000,
      timeoutMs: 500,
      log: quiet,
    });
    for (let i = 0; i < 3; i++) await m.round();
    assert.equal(m.state('up-a'), 'inactive');
  });

  it('probes at most MAX_CONCURRENT_PROBES at once', async () => {
    const many: Destination[] = Array.from({ length: 100 }, (_, i) => ({ id: `d${i}`, kind: 'http', address: `http://10.0.0.${i}/` }));
    let inFlight = 0;
    let peak = 0;
    const m = new RoutingHealthMonitor({
      store: createMemoryHealthStore(),
      clock: new FakeClock(0),
      probers: {
        http: async () => {
          peak = Math.max(peak, ++inFlight);
          await new Promise((r) => setImmediate(r));
          inFlight--;
          return true;
        },
      },
      destinations: () => many,
      intervalMs: 1000,
      timeoutMs: 500,
      log: quiet,
    });
    await m.round();
    assert.equal(peak, MAX_CONCURRENT_PROBES);
  });

  it('rounds run every intervalMs on the clock, and stop on close', async () => {
    const clock = new FakeClock(0);
    const calls: string[] = [];
    const m = new RoutingHealthMonitor({
      store: createMemoryHealthStore(),
      clock,
      probers: {
        http: async (d) => {
          calls.push(d.id);
          return true;
        },
      },
      destinations: () => dests,
      intervalMs: 1000,
      timeoutMs: 500,
      log: quiet,
    });
    await m.start();
    assert.equal(calls.length, 1);
    clock.advance(1000);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.equal(calls.length, 2);
    m.close();
    clock.advance(5000);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.equal(calls.length, 2);
  });
});
