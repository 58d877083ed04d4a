// Device quirks from the captures, end to end (issue 16 item 15), a real signaling process against
// the device simulator:
//  - Content-Length counted in characters (`countsCharacters`) with Chinese names in GB2312 and
//    UTF-8 bodies, over UDP (the datagram is the boundary, RFC 3261 §18.3: the body is kept whole)
//    and TCP (the framer re-measures the body; shared/sip miscounted-length.ts): every page of the
//    catalog and DeviceInfo arrive with their names intact, and the messages after them on the
//    connection (keepalives, later answers) are not lost;
//  - 200 answers without a To-tag to the platform's MESSAGEs (`answersWithoutToTag`, capture 05's
//    Ellean device): queries and controls still complete.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import type { ManscdpCharset } from '@vms/gb28181';
import { waitFor } from '@vms/harness';
import { PASSWORD, SERVER_ID, startInstance, type Instance } from './signaling-fixture.ts';

interface Case {
  readonly id: string;
  readonly transport: 'udp' | 'tcp';
  readonly charset: ManscdpCharset;
  readonly quirk: 'countsCharacters' | 'answersWithoutToTag';
}

const CASES: readonly Case[] = [
  { id: '34020000001320000071', transport: 'tcp', charset: 'UTF-8', quirk: 'countsCharacters' },
  { id: '34020000001320000072', transport: 'tcp', charset: 'GB2312', quirk: 'countsCharacters' },
  { id: '34020000001320000073', transport: 'udp', charset: 'GB2312', quirk: 'countsCharacters' },
  { id: '34020000001320000074', transport: 'udp', charset: 'GB2312', quirk: 'answersWithoutToTag' },
  { id: '34020000001320000075', transport: 'tcp', charset: 'UTF-8', quirk: 'answersWithoutToTag' },
];
const CHANNELS = 5;

describe('device quirks end to end: Content-Length in characters, answers without To-tag', () => {
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
    it(`${c.quirk} over ${c.transport.toUpperCase()}, ${c.charset}: DeviceInfo, a paged catalog and later messages all arrive`, async () => {
      const name = `门口摄像机${c.id.slice(-2)}`;
      const device = createSimulatedDevice({
        server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID },
        deviceId: c.id,
        password: PASSWORD,
        channels: CHANNELS,
        catalogPageSize: 2,
        name,
        charset: c.charset,
        transport: c.transport,
        keepaliveIntervalS: 1,
        utcOffsetMinutes: 480,
      });
      devices.push(device);
      device[c.quirk] = true;
      let keepalivesAnswered = 0;
      device.on('keepalive', (st) => {
        if (st === 200) keepalivesAnswered++;
      });
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
          return names.length === CHANNELS;
        },
        { timeoutMs: 15_000, description: 'every catalog page stored' },
      );
      assert.deepEqual(names, Array.from({ length: CHANNELS }, (_, i) => `${name}通道${i + 1}`));

      // the connection still carries whole messages: a second query and keepalives after the catalog
      const status = await instance.api<{ online?: string }>('GET', `/vms/device/status?deviceId=${c.id}`);
      assert.equal(status.success, true, JSON.stringify(status));
      const keepalivesBefore = keepalivesAnswered;
      await waitFor(() => keepalivesAnswered >= keepalivesBefore + 2, { timeoutMs: 10_000, description: 'keepalives answered after the catalog' });
      if (c.quirk === 'answersWithoutToTag') assert.ok(device.untaggedAnswers >= 2, `untagged answers sent: ${device.untaggedAnswers}`);
    });
  }
});
