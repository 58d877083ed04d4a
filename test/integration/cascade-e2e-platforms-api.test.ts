// End-to-end (SPEC CASC-2, CASC-5): the upstream platform administration API on one instance, which
// leads alone: creating a platform registers to it at once, the shared channel list is replaced
// through the API, a catalog query is answered from it, and nothing is published on the bus.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@vms/test';
import { startTestUpstream, UPSTREAM_DOMAIN, UPSTREAM_ID, type TestUpstream } from './cascade-e2e-upstream.ts';
import { api, logLines, SERVER_ID, startInstance, startStores, type Instance, type Stores } from './routing-cluster.ts';

const ENV = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5', LOG_LEVEL: 'info' };

describe('upstream platform API (CASC-2) on a lone instance (CASC-5)', () => {
  let stores: Stores;
  let upstream: TestUpstream;
  let instance: Instance | undefined;

  before(async () => {
    stores = await startStores();
    upstream = await startTestUpstream();
  });
  after(async () => {
    await instance?.proc.stop().catch(() => undefined);
    await upstream?.close();
    await stores?.stop();
  });

  it('POST /vms/platforms registers at once; PUT channels; GET lists; DELETE stops', async () => {
    const inst = await startInstance(stores, 'casc-api-a', { cascade: false, env: ENV });
    instance = inst;
    const json = { 'content-type': 'application/json' };

    const created = await api(inst, '/vms/platforms', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ serverId: UPSTREAM_ID, name: 'upper', host: '127.0.0.1', port: upstream.port, password: 'secret-pw' }),
    });
    assert.equal(created.json.success, true, JSON.stringify(created.json));
    assert.equal((created.json.data as { password: string }).password, '******', 'password never echoed');
    await waitFor(() => upstream.registersFrom(inst.sipPort).length > 0, { timeoutMs: 5000, intervalMs: 20, description: 'registered after POST' });

    const bad = await api(inst, '/vms/platforms', { method: 'POST', headers: json, body: JSON.stringify({ serverId: 'nope', host: '' }) });
    assert.equal(bad.json.success, false);

    const channels = [{ deviceId: '34020000001320000601', channelId: '34020000001310000601' }];
    const put = await api(inst, `/vms/platforms/${UPSTREAM_ID}/channels`, { method: 'PUT', headers: json, body: JSON.stringify({ channels }) });
    assert.equal(put.json.success, true, JSON.stringify(put.json));
    const listed = await api(inst, `/vms/platforms/${UPSTREAM_ID}/channels`);
    assert.deepEqual(
      (listed.json.data as { deviceId: string; channelId: string }[]).map((c) => [c.deviceId, c.channelId]),
      channels.map((c) => [c.deviceId, c.channelId]),
    );
    const all = await api(inst, '/vms/platforms');
    assert.deepEqual((all.json.data as { serverId: string }[]).map((p) => p.serverId), [UPSTREAM_ID]);

    // a catalog query is answered (the shared channel is unknown to the device table: SumNum 0)
    const res = await upstream.stack.request({
      method: 'MESSAGE',
      uri: `sip:${SERVER_ID}@127.0.0.1:${inst.sipPort}`,
      headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)}>` },
      body: `<?xml version="1.0" encoding="GB2312"?>\r\n<Query>\r\n<CmdType>Catalog</CmdType>\r\n<SN>77</SN>\r\n<DeviceID>${SERVER_ID}</DeviceID>\r\n</Query>\r\n`,
      contentType: 'Application/MANSCDP+xml',
      target: { host: '127.0.0.1', port: inst.sipPort, transport: 'udp' },
    });
    assert.equal(res.status, 200);
    const page = await waitFor(() => upstream.received.find((r) => r.method === 'MESSAGE' && r.body.includes('<SN>77</SN>')), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: 'catalog answer',
    });
    assert.match(page.body, /<SumNum>0<\/SumNum>/);

    const del = await api(inst, `/vms/platforms/${UPSTREAM_ID}`, { method: 'DELETE' });
    assert.deepEqual(del.json.data, { removed: true });
    assert.equal(logLines(inst, 'cascade event dropped: publish failed').length, 0);
  });
});
