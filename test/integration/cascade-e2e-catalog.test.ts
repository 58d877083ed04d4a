// End-to-end (SPEC CASC-2): the upstream's catalog query, sent to the cascade leader, is answered with
// every shared channel — channels of devices owned by any instance, since channels live in the shared
// database — paged, each page carrying the right SumNum. Devices are @vms/device-sim devices
// registered on two instances; the upstream platform is @vms/sip in this process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, defaultChannelIds, type SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/test';
import { databaseWithPlatform, startTestUpstream, UPSTREAM_DOMAIN, UPSTREAM_ID, type TestUpstream } from './cascade-e2e-upstream.ts';
import { api, SERVER_ID, startInstance, startStores, type Instance, type Stores } from './routing-cluster.ts';

const ENV = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5', LOG_LEVEL: 'info' };
const DEVICE_A = '34020000001320000101';
const DEVICE_B = '34020000001320000201';
const CHANNELS = 3;

async function startDevice(instance: Instance, deviceId: string): Promise<SimulatedDevice> {
  const device = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId, password: 'unused-no-challenge', channels: CHANNELS });
  await device.start();
  await waitFor(() => device.registered, { timeoutMs: 10_000, description: `${deviceId} registered` });
  const sync = await api(instance, `/vms/device/catalog/sync?deviceId=${deviceId}`, { method: 'POST' });
  assert.equal(sync.json.success, true, JSON.stringify(sync.json));
  await waitFor(
    async () => {
      const r = await api(instance, `/vms/channels?deviceId=${deviceId}&size=1000`);
      const d = r.json.data as { total?: number; records?: unknown[] } | unknown[];
      return (Array.isArray(d) ? d.length : (d.total ?? d.records?.length ?? 0)) >= CHANNELS;
    },
    { timeoutMs: 20_000, intervalMs: 100, description: `channels of ${deviceId} stored` },
  );
  return device;
}

describe('catalog query from the upstream (CASC-2)', () => {
  let stores: Stores;
  let upstream: TestUpstream;
  const instances: Instance[] = [];
  const devices: SimulatedDevice[] = [];

  before(async () => {
    stores = await startStores();
    upstream = await startTestUpstream();
  });
  after(async () => {
    await Promise.all(devices.map((d) => d.close().catch(() => undefined)));
    await Promise.all(instances.map((i) => i.proc.stop().catch(() => undefined)));
    await upstream?.close();
    await stores?.stop();
  });

  it('answers with every shared channel across instances, SumNum = shared channel count', async () => {
    // 2 of device A's channels and all 3 of device B's are shared; A's third is not
    const shared = [...defaultChannelIds(DEVICE_A, CHANNELS).slice(0, 2).map((c) => [DEVICE_A, c] as const), ...defaultChannelIds(DEVICE_B, CHANNELS).map((c) => [DEVICE_B, c] as const)];
    const s = await databaseWithPlatform(stores, 'casc_catalog', upstream, (repo) =>
      repo.shareChannels(
        UPSTREAM_ID,
        shared.map(([deviceId, channelId]) => ({ deviceId, channelId, catalogGroupId: null, parentId: null })),
      ),
    );
    const leader = await startInstance(s, 'casc-cat-a', { cascade: true, env: ENV });
    instances.push(leader);
    const other = await startInstance(s, 'casc-cat-b', { cascade: false, env: ENV });
    instances.push(other);
    await waitFor(() => upstream.registersFrom(leader.sipPort).length > 0, { timeoutMs: 10_000, intervalMs: 20, description: 'leader registered upstream' });
    devices.push(await startDevice(leader, DEVICE_A), await startDevice(other, DEVICE_B));

    const sn = 4711;
    const query = `<?xml version="1.0" encoding="GB2312"?>\r\n<Query>\r\n<CmdType>Catalog</CmdType>\r\n<SN>${sn}</SN>\r\n<DeviceID>${SERVER_ID}</DeviceID>\r\n</Query>\r\n`;
    const res = await upstream.stack.request({
      method: 'MESSAGE',
      uri: `sip:${SERVER_ID}@127.0.0.1:${leader.sipPort}`,
      headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)}>` },
      body: query,
      contentType: 'Application/MANSCDP+xml',
      target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
    });
    assert.equal(res.status, 200);

    const answers = await waitFor(
      () => {
        const pages = upstream.received.filter((r) => r.method === 'MESSAGE' && r.body.includes('<CmdType>Catalog</CmdType>') && r.body.includes(`<SN>${sn}</SN>`));
        const items = pages.flatMap((p) => [...p.body.matchAll(/<Item>\s*<DeviceID>(\d{20})<\/DeviceID>/g)].map((m) => m[1]));
        return items.length >= shared.length ? { pages, items } : null;
      },
      { timeoutMs: 10_000, intervalMs: 20, description: 'catalog answer pages' },
    );
    for (const p of answers.pages) {
      assert.equal(p.fromPort, leader.sipPort, 'answered by the leader');
      assert.match(p.body, new RegExp(`<SumNum>${shared.length}</SumNum>`));
      assert.match(p.body, /<Response>/);
    }
    assert.deepEqual([...answers.items].sort(), shared.map(([, c]) => c).sort());
  });
});
