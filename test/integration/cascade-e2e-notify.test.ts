// End-to-end (SPEC CASC-3): events that arise on a non-leader instance (a device's alarm, the device
// going offline) reach the upstream as NOTIFYs from the leader, inside the subscription dialogs the
// upstream opened with the leader. The event crosses instances on the Redis cascade bus, by value.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, defaultChannelIds, type SimulatedDevice } from '@vms/device-sim';
import type { SipRequest } from '@vms/sip';
import { waitFor } from '@vms/test';
import { databaseWithPlatform, startTestUpstream, UPSTREAM_DOMAIN, UPSTREAM_ID, type TestUpstream } from './cascade-e2e-upstream.ts';
import { api, SERVER_ID, startInstance, startStores, type Instance, type Stores } from './routing-cluster.ts';

const ENV = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5', LOG_LEVEL: 'info' };
const DEVICE = '34020000001320000301';
const CHANNELS = 2;

interface Notified {
  readonly kind: string;
  readonly fromPort: number;
  readonly body: string;
  readonly request: SipRequest;
}

describe('NOTIFY to the upstream via the cascade bus (CASC-3)', () => {
  let stores: Stores;
  let upstream: TestUpstream;
  const instances: Instance[] = [];
  let device: SimulatedDevice | undefined;

  before(async () => {
    stores = await startStores();
    upstream = await startTestUpstream();
  });
  after(async () => {
    await device?.close().catch(() => undefined);
    await Promise.all(instances.map((i) => i.proc.stop().catch(() => undefined)));
    await upstream?.close();
    await stores?.stop();
  });

  it('alarm and offline of a device on a non-leader reach the upstream from the leader, in its subscription dialogs', async () => {
    const channelIds = defaultChannelIds(DEVICE, CHANNELS);
    const s = await databaseWithPlatform(stores, 'casc_notify', upstream, (repo) =>
      repo.shareChannels(
        UPSTREAM_ID,
        channelIds.map((channelId) => ({ deviceId: DEVICE, channelId, catalogGroupId: null, parentId: null })),
      ),
    );
    const leader = await startInstance(s, 'casc-ntf-a', { cascade: true, env: ENV });
    instances.push(leader);
    const other = await startInstance(s, 'casc-ntf-b', { cascade: false, env: ENV });
    instances.push(other);
    await waitFor(() => upstream.registersFrom(leader.sipPort).length > 0, { timeoutMs: 10_000, intervalMs: 20, description: 'leader registered upstream' });

    const notified: Notified[] = [];
    for (const kind of ['Catalog', 'Alarm'] as const) {
      const body = `<?xml version="1.0" encoding="GB2312"?>\r\n<Query>\r\n<CmdType>${kind}</CmdType>\r\n<SN>${kind.length}</SN>\r\n<DeviceID>${SERVER_ID}</DeviceID>\r\n</Query>\r\n`;
      const { dialog, response } = await upstream.stack.createUAC({
        method: 'SUBSCRIBE',
        uri: `sip:${SERVER_ID}@127.0.0.1:${leader.sipPort}`,
        headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)}>`, Event: kind, Expires: '3600' },
        body,
        contentType: 'Application/MANSCDP+xml',
        target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
      });
      assert.equal(response.status, 200);
      dialog.on('notify', (req, ctx) => {
        notified.push({ kind, fromPort: ctx.flow.remotePort, body: req.body.toString('utf8'), request: req });
        ctx.reply(200);
      });
    }

    device = createSimulatedDevice({ server: { host: '127.0.0.1', port: other.sipPort, id: SERVER_ID }, deviceId: DEVICE, password: 'unused-no-challenge', channels: CHANNELS });
    await device.start();
    await waitFor(() => device?.registered === true, { timeoutMs: 10_000, description: 'device registered on the non-leader' });
    const sync = await api(other, `/vms/device/catalog/sync?deviceId=${DEVICE}`, { method: 'POST' });
    assert.equal(sync.json.success, true, JSON.stringify(sync.json));
    await waitFor(
      async () => {
        const d = (await api(other, `/vms/channels?deviceId=${DEVICE}&size=100`)).json.data as { total?: number; records?: unknown[] } | unknown[];
        return (Array.isArray(d) ? d.length : (d.total ?? d.records?.length ?? 0)) >= CHANNELS;
      },
      { timeoutMs: 20_000, intervalMs: 100, description: 'channels stored' },
    );

    await device.raiseAlarm({ description: 'cascade-e2e' });
    const alarm = await waitFor(() => notified.find((n) => n.kind === 'Alarm' && n.body.includes('<CmdType>Alarm</CmdType>')), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: 'Alarm NOTIFY at the upstream',
    });
    assert.equal(alarm.fromPort, leader.sipPort, 'NOTIFY sent by the leader');
    assert.match(alarm.body, new RegExp(`<DeviceID>${DEVICE}</DeviceID>`));
    assert.match(alarm.request.headers.get('Event') ?? '', /^Alarm/);

    await device.close(); // unregisters: offline on the non-leader → channel OFF notifies
    device = undefined;
    const offs = await waitFor(
      () => {
        const got = notified.filter((n) => n.kind === 'Catalog' && /<Event>OFF<\/Event>/.test(n.body));
        return got.length >= CHANNELS ? got : null;
      },
      { timeoutMs: 5000, intervalMs: 20, description: 'Catalog OFF NOTIFYs at the upstream' },
    );
    for (const n of offs) assert.equal(n.fromPort, leader.sipPort);
    const ids = offs.map((n) => /<Item>\s*<DeviceID>(\d{20})<\/DeviceID>/.exec(n.body)?.[1]).sort();
    assert.deepEqual(ids, [...channelIds].sort());
  });
});
