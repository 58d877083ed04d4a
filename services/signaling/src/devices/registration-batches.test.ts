import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegistrationBatches, RegistrationQueueFullError } from './registration-batches.ts';
import type { Device, DeviceId, DeviceRegistration } from './device.types.ts';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const reg = (i: number, at = 1000): DeviceRegistration => ({ deviceId: `340200000013200${String(i).padStart(5, '0')}`, transport: 'UDP', remoteIp: '10.0.0.1', remotePort: 5060 + i, expiresSec: 3600, at });
const deviceOf = (r: DeviceRegistration): Device => ({ deviceId: r.deviceId, remotePort: r.remotePort, registeredAt: r.at }) as unknown as Device;

/** A store whose writes finish when the test says so; it records every batch. */
function manualStore() {
  const batches: DeviceRegistration[][] = [];
  const finishers: ((fail?: Error) => void)[] = [];
  const write = (batch: readonly DeviceRegistration[]) =>
    new Promise<ReadonlyMap<DeviceId, Device>>((resolve, reject) => {
      batches.push([...batch]);
      finishers.push((fail) => (fail === undefined ? resolve(new Map(batch.map((r) => [r.deviceId, deviceOf(r)]))) : reject(fail)));
    });
  return { write, batches, finish: (i: number, fail?: Error) => finishers[i]?.(fail) };
}

describe('registration batches (MySQL group commit)', () => {
  it('writes a lone registration at once, and those arriving meanwhile together in the next batch', async () => {
    const store = manualStore();
    const batches = createRegistrationBatches({ write: store.write, maxInFlight: 1 });
    const first = batches.register(reg(1));
    assert.equal(store.batches.length, 1, 'no timer: the first registration is written at once');
    const rest = [2, 3, 4].map((i) => batches.register(reg(i)));
    assert.equal(store.batches.length, 1, 'the others wait for the batch in flight');
    store.finish(0);
    assert.equal((await first).remotePort, 5061);
    await tick();
    assert.deepEqual(store.batches[1]?.map((r) => r.remotePort), [5062, 5063, 5064]);
    store.finish(1);
    assert.deepEqual((await Promise.all(rest)).map((d) => d.remotePort), [5062, 5063, 5064]);
    await batches.drained();
  });

  it('keeps at most maxBatch per batch and maxInFlight batches at once', async () => {
    const store = manualStore();
    const batches = createRegistrationBatches({ write: store.write, maxBatch: 3, maxInFlight: 2 });
    const all = Array.from({ length: 10 }, (_, i) => batches.register(reg(i)));
    assert.deepEqual(store.batches.map((b) => b.length), [1, 1], 'two in flight');
    store.finish(0);
    await tick();
    assert.deepEqual(store.batches.map((b) => b.length), [1, 1, 3]);
    for (let i = 1; i < 5; i++) {
      store.finish(i);
      await tick();
    }
    assert.deepEqual(store.batches.map((b) => b.length), [1, 1, 3, 3, 2]);
    assert.equal((await Promise.all(all)).length, 10);
  });

  it("a device's next registration waits for its registration being written, others overtake it", async () => {
    const store = manualStore();
    const batches = createRegistrationBatches({ write: store.write, maxInFlight: 2 });
    const first = batches.register(reg(1));
    const again = batches.register({ ...reg(1), remotePort: 7000 });
    const other = batches.register(reg(2));
    assert.deepEqual(store.batches.map((b) => b.map((r) => r.remotePort)), [[5061], [5062]], 'device 2 goes in the free slot, device 1 waits');
    store.finish(0);
    await first;
    await tick();
    assert.deepEqual(store.batches[2]?.map((r) => r.remotePort), [7000]);
    store.finish(1);
    store.finish(2);
    assert.equal((await again).remotePort, 7000);
    assert.equal((await other).remotePort, 5062);
  });

  it('a failed batch rejects each of its registrations, and later batches still go', async () => {
    const store = manualStore();
    const batches = createRegistrationBatches({ write: store.write, maxInFlight: 1 });
    const a = batches.register(reg(1));
    const b = batches.register(reg(2));
    store.finish(0, new Error('server gone'));
    await assert.rejects(a, /server gone/);
    await tick();
    store.finish(1);
    assert.equal((await b).remotePort, 5062);
  });

  it('refuses at once past maxQueued, with a code read as "unavailable"', async () => {
    const store = manualStore();
    const batches = createRegistrationBatches({ write: store.write, maxInFlight: 1, maxQueued: 2 });
    const held = [batches.register(reg(1)), batches.register(reg(2)), batches.register(reg(3))];
    await assert.rejects(batches.register(reg(4)), (err: unknown) => err instanceof RegistrationQueueFullError && err.code === 'VMS_MYSQL_QUEUE_FULL');
    store.finish(0);
    await tick();
    store.finish(1);
    assert.equal((await Promise.all(held)).length, 3);
  });

  it('a registration missing from the rows read back is an error, not a hang', async () => {
    const batches = createRegistrationBatches({ write: async () => new Map() });
    await assert.rejects(batches.register(reg(1)), /not found after its registration was written/);
  });
});
