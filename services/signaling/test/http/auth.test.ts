import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixture, DEV_OTHER_TENANT, KEY, NOW, OTHER_TENANT } from './fixture.ts';
import { SignJWT } from 'jose';
import { signToken } from '../../src/auth/jwt.ts';

describe('operator auth (SPEC §12)', () => {
  it('answers 401 envelopes for a missing, malformed, wrongly signed or expired token', async () => {
    const f = await buildFixture();
    const expired = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 1 }, KEY, NOW - 10_000);
    const forged = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, 'x'.repeat(32), NOW);
    for (const headers of [{}, { 'blade-auth': 'bearer garbage' }, { 'blade-auth': `bearer ${forged}` }, { authorization: `Bearer ${expired}` }]) {
      const res = await f.app.inject({ method: 'GET', url: '/vms/devices', headers });
      assert.equal(res.statusCode, 401, JSON.stringify(headers));
      const body = res.json();
      assert.equal(body.code, 401);
      assert.equal(body.success, false);
      assert.equal(body.data, null);
      assert.equal(typeof body.msg, 'string');
    }
  });

  it('accepts Blade-Auth (any-case bearer) and Authorization: Bearer', async () => {
    const f = await buildFixture();
    const token = await f.token();
    for (const headers of [{ 'blade-auth': `bearer ${token}` }, { 'Blade-Auth': `Bearer ${token}` }, { authorization: `Bearer ${token}` }]) {
      const res = await f.app.inject({ method: 'GET', url: '/vms/devices', headers });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().success, true);
    }
  });

  it('needs no token for /healthz, under both path forms', async () => {
    const f = await buildFixture();
    for (const url of ['/healthz', '/blade-iot/healthz']) {
      const res = await f.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { code: 200, success: true, msg: 'ok', data: { status: 'UP', instanceId: 'node-a', storage: 'memory' } });
    }
  });

  it('keeps /vms/webhook/** free of operator auth (reserved: 404 until hooks exist, never 401)', async () => {
    const f = await buildFixture();
    for (const url of ['/vms/webhook/on_stream_changed', '/blade-iot/vms/webhook/on_publish']) {
      const res = await f.app.inject({ method: 'POST', url, payload: {} });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().code, 404);
    }
  });

  it("refuses another tenant's device with 403 and hides it from listings", async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    for (const url of [`/vms/devices/${DEV_OTHER_TENANT}`, `/vms/channels?deviceId=${DEV_OTHER_TENANT}`, `/vms/device/info?deviceId=${DEV_OTHER_TENANT}`]) {
      const res = await f.app.inject({ method: 'GET', url, headers });
      assert.equal(res.statusCode, 403, url);
      assert.equal(res.json().code, 403);
    }
    const mine = (await f.app.inject({ method: 'GET', url: '/vms/devices', headers })).json();
    assert.ok(mine.data.records.every((d: { tenantId: string }) => d.tenantId === '000000'));
    const theirs = (await f.app.inject({ method: 'GET', url: '/vms/devices', headers: await f.auth(OTHER_TENANT) })).json();
    assert.deepEqual(theirs.data.records.map((d: { deviceId: string }) => d.deviceId), [DEV_OTHER_TENANT]);
    const asking = await f.app.inject({ method: 'GET', url: `/vms/devices?tenantId=${OTHER_TENANT}`, headers });
    assert.equal(asking.statusCode, 403, 'a tenant cannot list another tenant');
  });

  it('the operator role (explicit claim) sees every tenant; tenant 000000 is not implicitly the operator', async () => {
    const f = await buildFixture();
    const ops = await f.operatorAuth(OTHER_TENANT);
    const all = (await f.app.inject({ method: 'GET', url: '/vms/devices', headers: ops })).json();
    assert.equal(all.data.total, 3);
    const one = (await f.app.inject({ method: 'GET', url: `/vms/devices?tenantId=${OTHER_TENANT}`, headers: ops })).json();
    assert.deepEqual(one.data.records.map((d: { deviceId: string }) => d.deviceId), [DEV_OTHER_TENANT]);
    assert.equal((await f.app.inject({ method: 'GET', url: '/vms/devices?tenantId=bad%20id', headers: ops })).statusCode, 400);
    assert.equal((await f.app.inject({ method: 'GET', url: `/vms/device/info?deviceId=${DEV_OTHER_TENANT}`, headers: await f.operatorAuth() })).statusCode, 200);
    const root = (await f.app.inject({ method: 'GET', url: '/vms/devices', headers: await f.auth('000000') })).json();
    assert.equal(root.data.total, 2, 'the default tenant sees its own devices only');
    assert.equal((await f.app.inject({ method: 'GET', url: '/vms/nodes', headers: await f.auth('000000') })).statusCode, 403);
  });

  it('refuses tokens whose claims are malformed (401), e.g. a 5,000-character tenant', async () => {
    const f = await buildFixture();
    for (const claims of [{ tenant_id: 't'.repeat(5000), user_id: 'u' }, { tenant_id: '000000', user_id: 'u', role: 'admin' }, { tenant_id: '000000', user_id: '' }]) {
      const token = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(NOW / 1000 + 60).sign(new TextEncoder().encode(KEY));
      const res = await f.app.inject({ method: 'GET', url: '/vms/devices', headers: { 'blade-auth': `bearer ${token}` } });
      assert.equal(res.statusCode, 401, JSON.stringify(claims).slice(0, 80));
    }
  });
});
