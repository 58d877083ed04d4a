// End-to-end (SPEC CASC-2, CASC-5): the upstream platform administration API on one instance, which
// leads alone: creating a platform registers to it at once, the shared channel list is replaced
// through the API, a catalog query is answered from it, and nothing is published on the bus.
// SPEC SEC-2: the platform belongs to the caller's tenant; another tenant neither sees nor changes it,
// and the catalog it receives holds only its own tenant's channels, whatever the share table says.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@vms/harness';
import { api, logLines, MANSCDP, SERVER_ID, UPSTREAM_DOMAIN, UPSTREAM_ID, useCascadeCluster } from './cascade-cluster.ts';
import { seedDevice, token } from './routing-cluster.ts';

const UNKNOWN_PLATFORM = '34010000002000000099';
const OWN_DEVICE = '34020000001320000601'; // tenant 000000
const FOREIGN_DEVICE = '34020000001320000602'; // tenant 100001

describe('upstream platform API (CASC-2) on a lone instance (CASC-5)', () => {
  const cluster = useCascadeCluster();

  it('POST /vms/platforms registers at once; PUT channels; GET lists; DELETE stops; an unknown platform is not found (404)', async () => {
    const { upstream } = cluster;
    const inst = await cluster.instance(cluster.stores, 'casc-api-a');
    const json = { 'content-type': 'application/json' };

    const created = await api(inst, '/vms/platforms', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ serverId: UPSTREAM_ID, name: 'upper', host: '127.0.0.1', port: upstream.port, password: 'secret-pw' }),
    });
    assert.equal(created.json.success, true, JSON.stringify(created.json));
    assert.equal((created.json.data as { password: string }).password, '******', 'password never echoed');
    await waitFor(() => upstream.registersFrom(inst.sipPort).length > 0, { timeoutMs: 5000, intervalMs: 20, description: 'registered after POST' });

    const bad = await api(inst, '/vms/platforms', { method: 'POST', headers: json, body: JSON.stringify({ serverId: 'nope', host: 'http://10.1.2.3:5060' }) });
    assert.deepEqual([bad.status, bad.json.success], [400, false]);
    assert.match(bad.json.msg, /^bad parameter serverId, host:/);

    await seedDevice(cluster.stores, OWN_DEVICE);
    await seedDevice(cluster.stores, FOREIGN_DEVICE, '100001');
    const channels = [{ deviceId: OWN_DEVICE, channelId: '34020000001310000601' }];
    const foreignShare = await api(inst, `/vms/platforms/${UPSTREAM_ID}/channels`, {
      method: 'PUT', headers: json, body: JSON.stringify({ channels: [...channels, { deviceId: FOREIGN_DEVICE, channelId: '34020000001310000602' }] }),
    });
    assert.equal(foreignShare.status, 403, 'another tenant\'s channel is never shared');
    const put = await api(inst, `/vms/platforms/${UPSTREAM_ID}/channels`, { method: 'PUT', headers: json, body: JSON.stringify({ channels }) });
    assert.equal(put.json.success, true, JSON.stringify(put.json));
    const listed = await api(inst, `/vms/platforms/${UPSTREAM_ID}/channels`);
    assert.deepEqual(
      (listed.json.data as { deviceId: string; channelId: string }[]).map((c) => [c.deviceId, c.channelId]),
      channels.map((c) => [c.deviceId, c.channelId]),
    );
    const all = await api(inst, '/vms/platforms');
    assert.deepEqual((all.json.data as { serverId: string }[]).map((p) => p.serverId), [UPSTREAM_ID]);
    const other = await token('100001');
    assert.deepEqual((await api(inst, '/vms/platforms', { token: other })).json.data, [], 'another tenant does not see it');
    const hijack = await api(inst, `/vms/platforms/${UPSTREAM_ID}`, { method: 'PUT', headers: json, body: JSON.stringify({ host: '10.6.6.6' }), token: other });
    assert.equal(hijack.status, 403);

    // a share row of another tenant's channel (written before V006, or its device moved tenant since):
    // the catalog leaves it out. Both channels exist in the device table; only the own one is sent.
    await cluster.stores.pool.query(
      `INSERT INTO gb_channel (device_id, channel_id, name, status, updated_at) VALUES (?, ?, 'own', 'ON', NOW(3)), (?, ?, 'foreign', 'ON', NOW(3))`,
      [OWN_DEVICE, '34020000001310000601', FOREIGN_DEVICE, '34020000001310000602'],
    );
    await cluster.stores.pool.query('INSERT INTO upstream_platform_channel (platform_id, device_id, channel_id) VALUES (?, ?, ?)', [UPSTREAM_ID, FOREIGN_DEVICE, '34020000001310000602']);

    // a catalog query is answered with the platform's own tenant's channel only
    const res = await upstream.stack.request({
      method: 'MESSAGE',
      uri: `sip:${SERVER_ID}@127.0.0.1:${inst.sipPort}`,
      headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)}>` },
      body: `<?xml version="1.0" encoding="GB2312"?>\r\n<Query>\r\n<CmdType>Catalog</CmdType>\r\n<SN>77</SN>\r\n<DeviceID>${SERVER_ID}</DeviceID>\r\n</Query>\r\n`,
      contentType: MANSCDP,
      target: { host: '127.0.0.1', port: inst.sipPort, transport: 'udp' },
    });
    assert.equal(res.status, 200);
    const page = await waitFor(() => upstream.received.find((r) => r.method === 'MESSAGE' && r.body.includes('<SN>77</SN>')), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: 'catalog answer',
    });
    assert.match(page.body, /<SumNum>1<\/SumNum>/);
    assert.match(page.body, /34020000001310000601/);
    assert.doesNotMatch(page.body, /34020000001310000602/);

    // an unknown platform: for the operator role the catalog's not-found (HTTP 404, envelope code 404), on
    // every endpoint naming one; for a tenant the same 403 as another tenant's platform (no existence oracle)
    const ops = await token('000000', 'operator');
    for (const [method, path, body] of [
      ['PUT', `/vms/platforms/${UNKNOWN_PLATFORM}`, JSON.stringify({ name: 'x' })],
      ['GET', `/vms/platforms/${UNKNOWN_PLATFORM}/channels`, undefined],
      ['PUT', `/vms/platforms/${UNKNOWN_PLATFORM}/channels`, JSON.stringify({ channels })],
      ['DELETE', `/blade-iot/vms/platforms/${UNKNOWN_PLATFORM}`, undefined],
    ] as const) {
      const r = await api(inst, path, { method, token: ops, ...(body === undefined ? {} : { headers: json, body }) });
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.deepEqual(r.json, { code: 404, success: false, msg: `unknown upstream platform ${UNKNOWN_PLATFORM}`, data: null });
      assert.equal((await api(inst, path, { method, ...(body === undefined ? {} : { headers: json, body }) })).status, 403);
    }

    const del = await api(inst, `/vms/platforms/${UPSTREAM_ID}`, { method: 'DELETE' });
    assert.deepEqual(del.json.data, { removed: true });
    const again = await api(inst, `/vms/platforms/${UPSTREAM_ID}/channels`, { token: ops });
    assert.equal(again.json.code, 404, 'deleted: not found any more');
    assert.equal(logLines(inst, 'cascade event dropped: publish failed').length, 0);
  });
});
