import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROUTES } from '../../src/http/route-table.ts';
import { buildFixture, CH, DEV, DEV_OFFLINE, DEV_OTHER_TENANT, NODE, OTHER_TENANT } from './fixture.ts';

describe('database-backed endpoints', () => {
  it('lists devices with owner node and online flag, BladeX paging, no passwords', async () => {
    const f = await buildFixture();
    const res = await f.app.inject({ method: 'GET', url: '/vms/devices?size=1&current=2', headers: await f.auth() });
    assert.equal(res.statusCode, 200);
    const { data } = res.json();
    assert.deepEqual([data.total, data.size, data.current, data.pages], [2, 1, 2, 2]);
    assert.equal(data.records[0].deviceId, DEV_OFFLINE);
    assert.equal(data.records[0].online, false);
    assert.equal(data.records[0].ownerNode, null);
    const online = (await f.app.inject({ method: 'GET', url: '/vms/devices?online=true', headers: await f.auth() })).json().data;
    assert.deepEqual(online.records.map((d: { deviceId: string }) => d.deviceId), [DEV]);
    assert.equal(online.records[0].ownerNode, NODE);
    assert.equal(online.records[0].keepaliveAt, '2025-06-01T00:00:00.000Z');
    const other = (await f.app.inject({ method: 'GET', url: `/vms/devices/${DEV_OTHER_TENANT}`, headers: await f.auth(OTHER_TENANT) })).json().data;
    assert.equal(other.hasPassword, true);
    assert.equal('password' in other, false);
  });

  it('searches devices by id prefix, within the caller\'s tenant; a prefix that is not 1-20 digits is 400', async () => {
    const f = await buildFixture();
    const list = async (qs: string, headers: Record<string, string>) => (await f.app.inject({ method: 'GET', url: `/vms/devices?${qs}`, headers })).json();
    const ids = (body: { data: { records: { deviceId: string }[] } }) => body.data.records.map((d) => d.deviceId);
    const tenant = await f.auth();
    assert.deepEqual(ids(await list(`idPrefix=${DEV.slice(0, 19)}`, tenant)), [DEV, DEV_OFFLINE], 'the other tenant\'s device is not searched');
    assert.deepEqual(ids(await list(`idPrefix=${DEV_OFFLINE}`, tenant)), [DEV_OFFLINE]);
    assert.deepEqual(ids(await list(`idPrefix=${DEV.slice(0, 19)}`, await f.operatorAuth())), [DEV, DEV_OFFLINE, DEV_OTHER_TENANT]);
    assert.deepEqual(ids(await list('idPrefix=3403', tenant)), []);
    assert.deepEqual(ids(await list('idPrefix=', tenant)), [DEV, DEV_OFFLINE], 'empty = no filter');
    for (const bad of ['34%25', '3402_', 'abc', '1'.repeat(21)]) {
      const r = await list(`idPrefix=${bad}`, tenant);
      assert.deepEqual([r.code, r.msg], [400, 'bad parameter idPrefix: must be 1-20 digits'], bad);
    }
  });

  it('gets one device: 403 unknown for a tenant (as another tenant\'s), 404 for the operator role, 400 malformed id', async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    const ok = await f.app.inject({ method: 'GET', url: `/blade-iot/vms/devices/${DEV}`, headers });
    assert.equal(ok.json().data.deviceId, DEV);
    const unknown = await f.app.inject({ method: 'GET', url: '/vms/devices/34020000001329999999', headers });
    const foreign = await f.app.inject({ method: 'GET', url: `/vms/devices/${DEV_OTHER_TENANT}`, headers });
    assert.equal(unknown.statusCode, 403);
    assert.deepEqual(unknown.json(), foreign.json(), 'no existence oracle (SPEC SEC-2)');
    const ops = await f.operatorAuth(OTHER_TENANT);
    assert.equal((await f.app.inject({ method: 'GET', url: '/vms/devices/34020000001329999999', headers: ops })).statusCode, 404);
    assert.equal((await f.app.inject({ method: 'GET', url: `/vms/devices/${DEV}`, headers: ops })).json().data.deviceId, DEV, 'any tenant');
    const bad = await f.app.inject({ method: 'GET', url: '/vms/devices/abc', headers });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().msg, /deviceId/);
  });

  it('lists channels of a device', async () => {
    const f = await buildFixture();
    const res = await f.app.inject({ method: 'GET', url: `/vms/channels?deviceId=${DEV}`, headers: await f.auth() });
    const { data } = res.json();
    assert.equal(data.total, 1);
    assert.equal(data.records[0].channelId, CH);
    assert.equal(data.records[0].deviceId, DEV);
    const missing = await f.app.inject({ method: 'GET', url: '/vms/channels', headers: await f.auth() });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().msg, 'bad parameter deviceId: is required');
  });

  it('lists this node only when standalone, as cascade leader; the node table is for the operator role only', async () => {
    const f = await buildFixture();
    const refused = await f.app.inject({ method: 'GET', url: '/vms/nodes', headers: await f.auth() });
    assert.deepEqual([refused.statusCode, refused.json().code, refused.json().msg], [403, 403, 'the node table requires the operator role']);
    const { data } = (await f.app.inject({ method: 'GET', url: '/vms/nodes', headers: await f.operatorAuth() })).json();
    assert.equal(data.cascadeLeader, NODE);
    assert.equal(data.nodes.length, 1);
    assert.deepEqual(
      { code: data.nodes[0].nodeCode, self: data.nodes[0].self, online: data.nodes[0].online, count: data.nodes[0].onlineDeviceCount },
      { code: NODE, self: true, online: true, count: 2 },
    );
  });

  it('registers every route-table entry under both path forms', async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    for (const route of ROUTES) {
      const path = route.path.replace(':deviceId', DEV);
      for (const url of [path, `/blade-iot${path}`]) {
        const res = await f.app.inject({ method: route.method, url, headers });
        assert.notEqual(res.json().msg?.startsWith('no such endpoint'), true, `${route.method} ${url}`);
      }
    }
  });
});
