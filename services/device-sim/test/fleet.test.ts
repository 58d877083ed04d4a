// A fleet of devices with consecutive ids registering to one platform, unregistering on close.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createDeviceFleet, DeviceSimConfigError } from '../src/index.ts';
import { PASSWORD, SERVER_ID, TestPlatform } from './support/platform.ts';

it('registers count devices with consecutive ids and distinct channels; close() unregisters all', async () => {
  const platform = await TestPlatform.start();
  const fleet = createDeviceFleet({
    count: 5,
    firstDeviceId: '34020000001320000101',
    server: { host: '127.0.0.1', port: platform.port, id: SERVER_ID },
    password: PASSWORD,
    channels: 2,
    startConcurrency: 2,
    sipTimers: { T1: 50 },
  });
  try {
    await fleet.start();
    assert.equal(fleet.registeredCount(), 5);
    assert.deepEqual(fleet.devices.map((d) => d.deviceId), ['101', '102', '103', '104', '105'].map((s) => `34020000001320000${s}`));
    const channels = fleet.devices.flatMap((d) => d.channelIds);
    assert.equal(new Set(channels).size, 10);
    assert.equal(new Set(fleet.devices.map((d) => d.sipPort)).size, 5, 'one SIP port each');
  } finally {
    await fleet.close();
    await fleet.close();
  }
  try {
    const unregistered = new Set(platform.registers.filter((r) => r.expires === 0 && r.accepted).map((r) => r.deviceId));
    assert.equal(unregistered.size, 5);
    assert.equal(fleet.registeredCount(), 0);
  } finally {
    await platform.close();
  }
});

it('refuses a count whose serials overflow', () => {
  assert.throws(
    () => createDeviceFleet({ count: 10, firstDeviceId: '34020000001320999995', server: { host: 'h', port: 1, id: SERVER_ID }, password: 'p' }),
    DeviceSimConfigError,
  );
});
