import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../core/clock.ts';
import type { Device } from '../devices/device.types.ts';
import { DeviceTenants } from './device-tenants.ts';

const DEV = '34020000001320000001';

function counting(tenantOf: Record<string, string>) {
  let reads = 0;
  const devices = {
    getDevice: async (deviceId: string): Promise<Device | null> => {
      reads++;
      await new Promise((r) => setImmediate(r));
      const tenantId = tenantOf[deviceId];
      return tenantId === undefined ? null : ({ deviceId, tenantId } as unknown as Device);
    },
  };
  return { devices, reads: () => reads };
}

describe('DeviceTenants (the tenant check before routing, SPEC SEC-2)', () => {
  it('reads a device once for a burst, remembers it for the ttl, and peeks without I/O', async () => {
    const clock = new FakeClock(0);
    const c = counting({ [DEV]: '100001' });
    const tenants = new DeviceTenants({ devices: c.devices, clock, ttlMs: 1000 });
    assert.equal(tenants.peek(DEV), undefined);
    assert.deepEqual(await Promise.all(Array.from({ length: 10 }, () => tenants.tenantOf(DEV))), Array(10).fill('100001'));
    assert.equal(c.reads(), 1, 'concurrent lookups share one read');
    assert.equal(tenants.peek(DEV), '100001');
    clock.advance(999);
    assert.equal(await tenants.tenantOf(DEV), '100001');
    assert.equal(c.reads(), 1);
    clock.advance(1);
    assert.equal(tenants.peek(DEV), undefined, 'expired');
    assert.equal(await tenants.tenantOf(DEV), '100001');
    assert.equal(c.reads(), 2);
  });

  it('an unknown device is null and not remembered (a device registering now is known at once)', async () => {
    const c = counting({});
    const tenants = new DeviceTenants({ devices: c.devices, clock: new FakeClock(0) });
    assert.equal(await tenants.tenantOf(DEV), null);
    assert.equal(tenants.peek(DEV), undefined);
    assert.equal(await tenants.tenantOf(DEV), null);
    assert.equal(c.reads(), 2);
  });
});
