import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { createDeviceEvents } from '../../src/events/device-events.ts';
import { bridgeOwnership } from '../../src/events/ownership-bridge.ts';

const DEV = '34020000001320000001';

describe('device events', () => {
  it('delivers in subscription order, isolates a throwing listener, unsubscribes', () => {
    const errors: unknown[] = [];
    const events = createDeviceEvents({ error: (obj: unknown) => errors.push(obj) } as unknown as pino.Logger);
    const got: string[] = [];
    events.on('online', () => {
      throw new Error('subscriber bug');
    });
    const off = events.on('online', (e) => got.push(`${e.deviceId}:${e.reason}`));
    assert.equal(events.hasListeners('offline'), false);
    events.emit('online', { deviceId: DEV, at: 1, reason: 'register' });
    off();
    events.emit('online', { deviceId: DEV, at: 2, reason: 'keepalive' });
    assert.deepEqual(got, [`${DEV}:register`]);
    assert.equal(errors.length, 2, 'the failing listener is logged each time, the emitter never throws');
  });

  it('bridges uplink events to the ownership recorder (OWN-1, OWN-3) and moved devices back (OWN-4)', async () => {
    const events = createDeviceEvents(pino({ level: 'silent' }));
    const calls: string[] = [];
    let moved: ((e: { deviceId: string; newOwner: string }) => void) | undefined;
    const detach = bridgeOwnership(
      events,
      {
        deviceSeen: (id, register, at) => calls.push(`seen ${id} ${register === true} ${at}`),
        deviceGone: async (id) => {
          calls.push(`gone ${id}`);
          return true;
        },
        onMoved: (listener) => {
          moved = listener;
          return () => {
            moved = undefined;
          };
        },
      },
      (id) => calls.push(`forget ${id}`),
    );
    for (const kind of ['register', 'keepalive', 'message', 'unregister'] as const) events.emit('uplink', { deviceId: DEV, at: 7, kind });
    moved?.({ deviceId: DEV, newOwner: 'node-b' });
    // the event's time goes along: the recorder reads no clock of its own per keepalive
    assert.deepEqual(calls, [`seen ${DEV} true 7`, `seen ${DEV} false 7`, `seen ${DEV} false 7`, `gone ${DEV}`, `forget ${DEV}`]);
    detach();
    events.emit('uplink', { deviceId: DEV, at: 0, kind: 'keepalive' });
    assert.equal(calls.length, 5);
    assert.equal(moved, undefined);
  });
});
