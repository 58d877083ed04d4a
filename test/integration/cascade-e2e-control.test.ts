// End-to-end (SPEC CASC-3): a PTZ DeviceControl the upstream sends to the cascade leader, for a channel
// of a device owned by another instance, reaches the device from its owner's SIP address (the device
// accepts requests only from where it registered). The raw request crosses on the Redis cascade bus.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, defaultChannelIds, type SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/test';
import { databaseWithPlatform, startTestUpstream, UPSTREAM_DOMAIN, UPSTREAM_ID, type TestUpstream } from './cascade-e2e-upstream.ts';
import { api, SERVER_ID, startInstance, startStores, type Instance, type Stores } from './routing-cluster.ts';

const ENV = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5', LOG_LEVEL: 'info' };
const DEVICE = '34020000001320000401';
/** GB/T 28181-2016 Annex A.3: A5 0F 01, command 02 (left), pan speed 1F, tilt 00, zoom 00, checksum = byte sum mod 256 = D6. */
const PTZ_LEFT = 'A50F01021F0000D6';

describe('PTZ from the upstream via the owner (CASC-3)', () => {
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

  it('a PTZ sent to the leader for a channel owned by a non-leader reaches the device from its owner', async () => {
    const [channelId] = defaultChannelIds(DEVICE, 1);
    assert.ok(channelId !== undefined);
    const s = await databaseWithPlatform(stores, 'casc_control', upstream, (repo) =>
      repo.shareChannels(UPSTREAM_ID, [{ deviceId: DEVICE, channelId, catalogGroupId: null, parentId: null }]),
    );
    const leader = await startInstance(s, 'casc-ctl-a', { cascade: true, env: ENV });
    instances.push(leader);
    const owner = await startInstance(s, 'casc-ctl-b', { cascade: false, env: ENV });
    instances.push(owner);
    await waitFor(() => upstream.registersFrom(leader.sipPort).length > 0, { timeoutMs: 10_000, intervalMs: 20, description: 'leader registered upstream' });

    device = createSimulatedDevice({ server: { host: '127.0.0.1', port: owner.sipPort, id: SERVER_ID }, deviceId: DEVICE, password: 'unused-no-challenge', channels: 1 });
    await device.start();
    await waitFor(() => device?.registered === true, { timeoutMs: 10_000, description: 'device registered on the non-leader' });
    const sync = await api(owner, `/vms/device/catalog/sync?deviceId=${DEVICE}`, { method: 'POST' });
    assert.equal(sync.json.success, true, JSON.stringify(sync.json));
    await waitFor(
      async () => {
        const d = (await api(owner, `/vms/channels?deviceId=${DEVICE}&size=100`)).json.data as { total?: number; records?: unknown[] } | unknown[];
        return (Array.isArray(d) ? d.length : (d.total ?? d.records?.length ?? 0)) >= 1;
      },
      { timeoutMs: 20_000, intervalMs: 100, description: 'channel stored' },
    );

    const body = `<?xml version="1.0" encoding="GB2312"?>\r\n<Control>\r\n<CmdType>DeviceControl</CmdType>\r\n<SN>901</SN>\r\n<DeviceID>${channelId}</DeviceID>\r\n<PTZCmd>${PTZ_LEFT}</PTZCmd>\r\n</Control>\r\n`;
    const res = await upstream.stack.request({
      method: 'MESSAGE',
      uri: `sip:${channelId}@127.0.0.1:${leader.sipPort}`,
      headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${channelId}@${SERVER_ID.slice(0, 10)}>` },
      body,
      contentType: 'Application/MANSCDP+xml',
      target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
    });
    assert.equal(res.status, 200);

    const cmd = await waitFor(() => device?.commands.find((c) => c.cmdType === 'DeviceControl' && c.sn === '901'), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: 'DeviceControl at the device',
    });
    assert.equal(cmd.targetId, channelId);
    assert.equal(cmd.flow.remotePort, owner.sipPort, "sent from the owner's SIP address");
    const control = device.controls.find((c) => c.sn === '901');
    assert.equal(control?.ptzError, undefined);
    assert.ok(control?.ptz !== undefined, 'PTZCmd decoded by the device');
  });
});
