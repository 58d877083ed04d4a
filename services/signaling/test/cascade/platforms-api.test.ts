// The platforms API (src/http/routes/platforms.ts, SPEC CASC-2, SEC-2). For a platform that does not
// exist the operator role gets the catalog's not-found (VMS_ERR_PLATFORM_NOT_FOUND: HTTP 404, envelope
// code 404), never a bad-parameter 400; a tenant gets the same 403 as for another tenant's platform; a
// malformed id stays a 400. Platforms belong to a tenant: a tenant sees, changes and shares only its own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryPlatformRepository, upstreamPlatform } from '@vms/cascade';
import { pino } from 'pino';
import { signToken } from '../../src/auth/jwt.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { createStandaloneNodeDirectory } from '../../src/nodes/node-directory.standalone.ts';
import { createSelfOwnerDirectory } from '../../src/ownership/owner-directory.standalone.ts';
import { createUnavailableDeviceControl } from '../../src/control/device-control.unavailable.ts';

const KEY = 'platforms-api-test-key-0123456789abcdef';
const NOW = Date.UTC(2025, 5, 1);
const KNOWN = '34010000002000000001';
const UNKNOWN = '34010000002000000099';
const LOCAL_ID = '34020000002000000001';
const DEV = '34020000001320000001'; // tenant 000000
const DEV_B = '34020000001320000002'; // tenant B
const TENANT_B = '100001';
const PLATFORM_B = '34010000002000000002';

async function build() {
  const clock = new FakeClock(NOW);
  const devices = createMemoryDeviceRepository();
  const reg = { transport: 'UDP' as const, remoteIp: '10.0.0.1', remotePort: 5060, expiresSec: 3600, at: NOW };
  await devices.registerDevice({ deviceId: DEV, ...reg });
  await devices.provisionDevice({ deviceId: DEV_B, tenantId: TENANT_B, password: 'pw' }, NOW);
  await devices.registerDevice({ deviceId: DEV_B, ...reg });
  const platforms = createMemoryPlatformRepository();
  await platforms.upsert(upstreamPlatform({ serverId: KNOWN, host: '127.0.0.1', port: 5060, localId: LOCAL_ID }));
  const changed: string[] = [];
  const app = buildHttpApp({
    instanceId: 'node-a',
    signingKey: KEY,
    storage: 'memory',
    devices,
    control: createUnavailableDeviceControl(),
    nodes: createStandaloneNodeDirectory({
      nodeCode: 'node-a', sipAddress: '127.0.0.1:5060', internalBaseUrl: () => 'http://127.0.0.1:18080', cascadeNode: true,
      version: '0.1.0', startedAt: NOW, clock, devices,
    }),
    owners: createSelfOwnerDirectory('node-a'),
    clock,
    logger: pino({ level: 'silent' }),
    utcOffsetMinutes: 480,
    platforms: { platforms, localId: LOCAL_ID, platformChanged: async (id) => void changed.push(id) },
  });
  const as = async (tenantId: string, role: 'tenant' | 'operator' = 'tenant') => ({
    'blade-auth': `bearer ${await signToken({ tenantId, userId: 'u1', ttlSec: 3600, role }, KEY, NOW)}`,
    'content-type': 'application/json',
  });
  const headers = await as('000000');
  return { app, headers, changed, platforms, as };
}

describe('platforms API: unknown platform', () => {
  it('PUT / DELETE / GET channels / PUT channels of an unknown platform: 404 with the not-found code for the operator role; the known one works', async () => {
    const { app, changed, as } = await build();
    const headers = await as('000000', 'operator');
    const channels = JSON.stringify({ channels: [{ deviceId: '34020000001320000001', channelId: '34020000001310000001' }] });
    const calls = [
      { method: 'PUT', url: `/vms/platforms/${UNKNOWN}`, payload: JSON.stringify({ name: 'x' }) },
      { method: 'DELETE', url: `/vms/platforms/${UNKNOWN}` },
      { method: 'GET', url: `/vms/platforms/${UNKNOWN}/channels` },
      { method: 'PUT', url: `/vms/platforms/${UNKNOWN}/channels`, payload: channels },
      { method: 'GET', url: `/blade-iot/vms/platforms/${UNKNOWN}/channels` },
    ] as const;
    for (const c of calls) {
      const res = await app.inject({ ...c, headers });
      assert.equal(res.statusCode, 404, `${c.method} ${c.url}`);
      assert.deepEqual(res.json(), { code: 404, success: false, msg: `unknown upstream platform ${UNKNOWN}`, data: null }, `${c.method} ${c.url}`);
    }
    assert.deepEqual(changed, [], 'nothing restarted for an unknown platform');

    const bad = await app.inject({ method: 'DELETE', url: '/vms/platforms/nope', headers });
    assert.equal(bad.statusCode, 400);
    const put = await app.inject({ method: 'PUT', url: `/vms/platforms/${KNOWN}/channels`, payload: channels, headers });
    assert.equal(put.json().success, true);
    const del = await app.inject({ method: 'DELETE', url: `/vms/platforms/${KNOWN}`, headers });
    assert.deepEqual(del.json().data, { removed: true });
    const again = await app.inject({ method: 'DELETE', url: `/vms/platforms/${KNOWN}`, headers });
    assert.equal(again.statusCode, 404, 'deleted twice: the second time it is unknown');
    assert.deepEqual(changed, [KNOWN]);
  });
});

describe('platforms API: tenants (SPEC SEC-2)', () => {
  const body = (serverId: string, extra: Record<string, unknown> = {}) => JSON.stringify({ serverId, host: '10.9.8.7', port: 5070, ...extra });

  it("a tenant sees, changes and deletes only its own platforms; another tenant's answers as a missing one (403)", async () => {
    const { app, headers, as, changed } = await build();
    const b = await as(TENANT_B);
    const created = await app.inject({ method: 'POST', url: '/vms/platforms', headers: b, payload: body(PLATFORM_B) });
    assert.equal(created.json().data.tenantId, TENANT_B, 'created in the caller\'s tenant');
    const listA = (await app.inject({ method: 'GET', url: '/vms/platforms', headers })).json().data as { serverId: string }[];
    const listB = (await app.inject({ method: 'GET', url: '/vms/platforms', headers: b })).json().data as { serverId: string }[];
    assert.deepEqual([listA.map((p) => p.serverId), listB.map((p) => p.serverId)], [[KNOWN], [PLATFORM_B]]);
    assert.equal((await app.inject({ method: 'GET', url: '/vms/platforms?tenantId=000000', headers: b })).statusCode, 403);

    const unknown = await app.inject({ method: 'GET', url: `/vms/platforms/${UNKNOWN}/channels`, headers: b });
    assert.equal(unknown.statusCode, 403);
    for (const [method, url, payload] of [
      ['PUT', `/vms/platforms/${KNOWN}`, JSON.stringify({ host: '6.6.6.6' })],
      ['DELETE', `/vms/platforms/${KNOWN}`, undefined],
      ['GET', `/vms/platforms/${KNOWN}/channels`, undefined],
      ['PUT', `/vms/platforms/${KNOWN}/channels`, JSON.stringify({ channels: [{ deviceId: DEV_B, channelId: '34020000001310000002' }] })],
      ['POST', '/vms/platforms', body(KNOWN, { host: '6.6.6.6' })],
    ] as const) {
      const r = await app.inject({ method, url, headers: b, ...(payload === undefined ? {} : { payload }) });
      assert.deepEqual([r.statusCode, r.json()], [403, unknown.json()], `${method} ${url}`);
    }
    const known = (await app.inject({ method: 'GET', url: '/vms/platforms', headers })).json().data as { host: string }[];
    assert.equal(known[0]?.host, '127.0.0.1', 'tenant 000000\'s platform untouched');
    assert.deepEqual(changed, [PLATFORM_B]);
    // a tenant cannot hand a platform to another tenant
    assert.equal((await app.inject({ method: 'PUT', url: `/vms/platforms/${PLATFORM_B}`, headers: b, payload: JSON.stringify({ tenantId: '000000' }) })).statusCode, 403);
    assert.equal((await app.inject({ method: 'POST', url: '/vms/platforms', headers: b, payload: body('34010000002000000003', { tenantId: '000000' }) })).statusCode, 403);
  });

  it('shares only its own tenant\'s channels: another tenant\'s device or an unknown one is refused, nothing stored', async () => {
    const { app, headers, platforms } = await build();
    const share = (deviceId: string, h = headers) =>
      app.inject({ method: 'PUT', url: `/vms/platforms/${KNOWN}/channels`, headers: h, payload: JSON.stringify({ channels: [{ deviceId: DEV, channelId: '34020000001310000001' }, { deviceId, channelId: '34020000001310000009' }] }) });
    const foreign = await share(DEV_B);
    const unknown = await share('34020000001320000077');
    assert.deepEqual([foreign.statusCode, unknown.statusCode], [403, 403]);
    assert.deepEqual(foreign.json(), unknown.json());
    assert.deepEqual(await platforms.listChannels(KNOWN), [], 'all or nothing');
    assert.equal((await share(DEV)).json().data.length, 2, 'own channels are shared');
  });

  it('the operator role (explicit claim) sees every tenant\'s platforms and may place one in a tenant', async () => {
    const { app, as } = await build();
    const ops = await as(TENANT_B, 'operator');
    const created = await app.inject({ method: 'POST', url: '/vms/platforms', headers: ops, payload: body(PLATFORM_B, { tenantId: 'tenant-c' }) });
    assert.equal(created.json().data.tenantId, 'tenant-c');
    const all = (await app.inject({ method: 'GET', url: '/vms/platforms', headers: ops })).json().data as { serverId: string }[];
    assert.deepEqual(all.map((p) => p.serverId), [KNOWN, PLATFORM_B]);
    const one = (await app.inject({ method: 'GET', url: '/vms/platforms?tenantId=tenant-c', headers: ops })).json().data as { serverId: string }[];
    assert.deepEqual(one.map((p) => p.serverId), [PLATFORM_B]);
    const shareUnknown = await app.inject({ method: 'PUT', url: `/vms/platforms/${KNOWN}/channels`, headers: ops, payload: JSON.stringify([{ deviceId: '34020000001320000077', channelId: '34020000001310000077' }]) });
    assert.equal(shareUnknown.statusCode, 200, 'a device not registered yet');
    const shareForeign = await app.inject({ method: 'PUT', url: `/vms/platforms/${KNOWN}/channels`, headers: ops, payload: JSON.stringify([{ deviceId: DEV_B, channelId: '34020000001310000002' }]) });
    assert.equal(shareForeign.statusCode, 403, 'not even the operator shares tenant B\'s device with tenant 000000\'s upstream');
  });

  it('validates every field and names it: host is a literal IP or DNS name, port in range, ids 20 digits', async () => {
    const { app, headers } = await build();
    for (const [extra, field] of [
      [{ host: 'http://10.1.2.3' }, 'host'],
      [{ host: '10.1.2.3:5060' }, 'host'],
      [{ host: 'a b' }, 'host'],
      [{ host: 'x'.repeat(300) }, 'host'],
      [{ host: 1234 }, 'host'],
      [{ port: 70000 }, 'port'],
      [{ port: '5060' }, 'port'],
      [{ serverId: '3401000000200000000' }, 'serverId'],
      [{ localId: 'abc' }, 'localId'],
      [{ name: 'line\nbreak' }, 'name'],
      [{ transport: 'sctp' }, 'transport'],
    ] as const) {
      const r = await app.inject({ method: 'POST', url: '/vms/platforms', headers, payload: JSON.stringify(Object.assign({ serverId: '34010000002000000005', host: '10.1.2.3' }, extra)) });
      assert.equal(r.statusCode, 400, JSON.stringify(extra));
      assert.match(r.json().msg, new RegExp(`^bad parameter ${field}\\b`), JSON.stringify(extra));
    }
    const ch = await app.inject({ method: 'PUT', url: `/vms/platforms/${KNOWN}/channels`, headers, payload: JSON.stringify([{ deviceId: 42, channelId: 'a b' }]) });
    assert.match(ch.json().msg, /^bad parameter deviceId, channelId:/);
  });
});
