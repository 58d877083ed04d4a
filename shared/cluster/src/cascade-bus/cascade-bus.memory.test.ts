import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { FakeClock } from '../clock.ts';
import { StoreClosedError } from '../errors.ts';
import { createMemoryCascadeBus, createMemoryCascadeHub } from './cascade-bus.memory.ts';
import type { CascadeBusProblem } from './cascade-bus.port.ts';
import type { CascadeEvent, CascadeEventData } from './cascade-event.ts';

const catalogOff: CascadeEventData = {
  kind: 'notify.catalog',
  payload: { event: 'OFF', deviceId: '34020000001320000001', channel: { deviceId: '34020000001310000001', status: 'OFF' } },
};

describe('memory cascade bus', () => {
  it('delivers by value to every bus on the hub, own included, with the envelope filled in', async () => {
    const hub = createMemoryCascadeHub();
    const clock = new FakeClock(1_767_225_600_000);
    const a = createMemoryCascadeBus({ instanceId: 'node-a', hub, clock });
    const b = createMemoryCascadeBus({ instanceId: 'node-b', hub });
    const gotA: CascadeEvent[] = [];
    const gotB: CascadeEvent[] = [];
    a.subscribe((e) => void gotA.push(e));
    b.subscribe((e) => void gotB.push(e));
    const payload = structuredClone(catalogOff);
    await a.publish(payload);
    assert.equal(gotB.length, 0, 'delivered later, never inside publish()');
    await tick();
    assert.equal(gotB.length, 1);
    const e = gotB[0] as CascadeEvent;
    assert.deepEqual([e.v, e.origin, e.at, e.kind], [1, 'node-a', 1_767_225_600_000, 'notify.catalog']);
    assert.match(e.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(e.payload, catalogOff.payload);
    assert.notEqual(e.payload, payload.payload, 'a copy, not the publisher object');
    assert.deepEqual(gotA, gotB);
    assert.notEqual(gotA[0], gotB[0], 'each receiver gets its own copy');
    assert.deepEqual(a.stats(), { published: 1, dropped: 0, received: 1, malformed: 0, handlerErrors: 0 });
    await Promise.all([a.close(), b.close()]);
    assert.equal(hub.size, 0);
  });

  it('a failing handler is reported and does not stop the others', async () => {
    const problems: CascadeBusProblem[] = [];
    const bus = createMemoryCascadeBus({ instanceId: 'solo', onProblem: (p) => problems.push(p) });
    const got: string[] = [];
    bus.subscribe(() => {
      throw new Error('sync boom');
    });
    bus.subscribe(async () => {
      throw new Error('async boom');
    });
    bus.subscribe((e) => void got.push(e.kind));
    await bus.publish(catalogOff);
    await tick();
    assert.deepEqual(got, ['notify.catalog']);
    assert.deepEqual(problems.map((p) => p.kind), ['handler-failed', 'handler-failed']);
    assert.equal(bus.stats().handlerErrors, 2);
    await bus.close();
  });

  it('unsubscribe stops delivery; the same function subscribed twice is two subscriptions', async () => {
    const bus = createMemoryCascadeBus({ instanceId: 'solo' });
    let calls = 0;
    const h = (): void => void calls++;
    const off1 = bus.subscribe(h);
    bus.subscribe(h);
    off1();
    await bus.publish(catalogOff);
    await tick();
    assert.equal(calls, 1);
    await bus.close();
  });

  it('publish after close resolves, drops and reports (CASC-4); close is idempotent', async () => {
    const problems: CascadeBusProblem[] = [];
    const bus = createMemoryCascadeBus({ instanceId: 'solo', onProblem: (p) => problems.push(p) });
    await bus.close();
    await bus.close();
    await bus.publish(catalogOff);
    assert.equal(problems[0]?.kind, 'publish-failed');
    assert.ok(problems[0]?.kind === 'publish-failed' && problems[0].error instanceof StoreClosedError);
    assert.equal(bus.stats().dropped, 1);
  });

  it('an oversized event is dropped at publish, not sent; a throwing reporter changes nothing', async () => {
    const bus = createMemoryCascadeBus({
      instanceId: 'solo',
      onProblem: () => {
        throw new Error('logger down');
      },
    });
    let calls = 0;
    bus.subscribe(() => void calls++);
    const huge = 'A'.repeat(1024 * 1024);
    await bus.publish({ kind: 'control.upstream', payload: { platformId: 'p', targetDeviceId: 'd', request: huge } });
    await tick();
    assert.deepEqual([calls, bus.stats().dropped, bus.stats().published], [0, 1, 0]);
    await bus.close();
  });
});
