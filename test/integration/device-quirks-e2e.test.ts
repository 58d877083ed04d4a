// Device quirks from the captures (@vms/fixtures), end to end: a real signaling process and
// the device simulator behaving as the firmware in the captures does. Here: MANSCDP bodies whose XML
// declaration names another charset than their bytes are in, both ways (sample 06: UTF-8 bytes declared
// GB2312; firmware declaring UTF-8 over GB2312 bytes). Chinese device and channel names must arrive intact
// through registration, DeviceInfo and a catalog sync.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import type { ManscdpCharset } from '@vms/gb28181';
import { waitFor } from '@vms/harness';
import { PASSWORD, SERVER_ID, startInstance, type Instance } from './signaling-fixture.ts';

const CASES: ReadonlyArray<{ id: string; charset: ManscdpCharset; declared: ManscdpCharset }> = [
  { id: '34020000001320000061', charset: 'GB2312', declared: 'UTF-8' },
  { id: '34020000001320000062', charset: 'UTF-8', declared: 'GB2312' },
];

describe('device quirks end to end: bodies labelled with the wrong charset', () => {
  let instance: Instance;
  const devices: SimulatedDevice[] = [];

  before(async () => {
    instance = await startInstance();
  });
  after(async () => {
    for (const d of devices) await d.close();
    await instance?.stop();
  });

  for (const c of CASES) {
    it(`${c.charset} bytes declared ${c.declared}: names intact in DeviceInfo and the catalog`, async () => {
      const name = `门口摄像机${c.id.slice(-2)}`;
      const device = createSimulatedDevice({
        server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID },
        deviceId: c.id,
        password: PASSWORD,
        channels: 3,
        name,
        charset: c.charset,
        declaredCharset: c.declared,
        utcOffsetMinutes: 480,
      });
      devices.push(device);
      await device.start();
      await waitFor(() => device.registered, { timeoutMs: 10_000, description: `${c.id} registered` });

      const info = await instance.api<{ deviceName?: string }>('GET', `/vms/device/info?deviceId=${c.id}`);
      assert.equal(info.success, true, JSON.stringify(info));
      assert.equal(info.data.deviceName, name);

      const sync = await instance.api('POST', `/vms/device/catalog/sync?deviceId=${c.id}`);
      assert.equal(sync.success, true, JSON.stringify(sync));
      let names: string[] = [];
      await waitFor(
        async () => {
          const r = await instance.api<{ records?: Array<{ name: string | null }> } | Array<{ name: string | null }>>('GET', `/vms/channels?deviceId=${c.id}&size=100`);
          const rows = Array.isArray(r.data) ? r.data : (r.data.records ?? []);
          names = rows.map((x) => x.name ?? '').sort();
          return names.length === 3;
        },
        { timeoutMs: 15_000, description: 'three channels stored' },
      );
      assert.deepEqual(names, [1, 2, 3].map((n) => `${name}通道${n}`));
    });
  }
});
