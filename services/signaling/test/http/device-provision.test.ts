// POST /vms/devices (routes/device-provision.ts): operator provisioning of a device's tenant, label and
// digest password; tenants are refused; every bad field is named; the password is never echoed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixture, DEV, OTHER_TENANT, TENANT } from './fixture.ts';

const NEW = '34020000001320000555';

describe('POST /vms/devices', () => {
  it('creates a device offline in the given tenant, then updates only the fields given', async () => {
    const f = await buildFixture();
    const headers = { ...(await f.operatorAuth()), 'content-type': 'application/json' };
    const post = (body: unknown) => f.app.inject({ method: 'POST', url: '/vms/devices', headers, payload: JSON.stringify(body) });
    const created = (await post({ deviceId: NEW, tenantId: OTHER_TENANT, name: 'gate 3', password: 'pw-1', charset: 'utf-8' })).json();
    assert.equal(created.code, 200, JSON.stringify(created));
    assert.deepEqual(
      [created.data.deviceId, created.data.tenantId, created.data.name, created.data.online, created.data.hasPassword, created.data.charset, created.data.created],
      [NEW, OTHER_TENANT, 'gate 3', false, true, 'UTF-8', true],
    );
    assert.equal('password' in created.data, false, 'never echoed');
    const stored = await f.devices.getDevice(NEW);
    assert.equal(stored?.password, 'pw-1');
    const again = (await post({ deviceId: NEW, name: null })).json();
    assert.deepEqual([again.data.created, again.data.tenantId, again.data.name, again.data.hasPassword], [false, OTHER_TENANT, null, true], 'tenant and password kept');
    const moved = (await post({ deviceId: DEV, tenantId: OTHER_TENANT })).json();
    assert.deepEqual([moved.data.created, moved.data.tenantId, moved.data.online], [false, OTHER_TENANT, true]);
    // the tenant that owned it no longer sees it
    const gone = await f.app.inject({ method: 'GET', url: `/vms/devices/${DEV}`, headers: await f.auth(TENANT) });
    assert.equal(gone.statusCode, 403);
    await f.app.close();
  });

  it('is for the operator role only: a tenant token gets 403 and nothing is stored', async () => {
    const f = await buildFixture();
    const res = await f.app.inject({ method: 'POST', url: '/vms/devices', headers: { ...(await f.auth()), 'content-type': 'application/json' }, payload: JSON.stringify({ deviceId: NEW }) });
    assert.deepEqual([res.statusCode, res.json().msg], [403, 'device provisioning requires the operator role']);
    assert.equal(await f.devices.getDevice(NEW), null);
    await f.app.close();
  });

  it('names the bad field', async () => {
    const f = await buildFixture();
    const headers = { ...(await f.operatorAuth()), 'content-type': 'application/json' };
    const cases: [unknown, string][] = [
      [{}, 'bad parameter deviceId: is required'],
      [{ deviceId: '3402' }, 'bad parameter deviceId: must be a 20-digit code'],
      [{ deviceId: 34020000001320000555 }, 'bad parameter deviceId: must be a 20-digit code'],
      [{ deviceId: NEW, tenantId: 'a b' }, 'bad parameter tenantId: must be 1-12 characters of A-Z a-z 0-9 _ -'],
      [{ deviceId: NEW, name: 'x\u0000y' }, 'bad parameter name: must be null or 1-255 characters without control characters'],
      [{ deviceId: NEW, password: 'p'.repeat(65) }, 'bad parameter password: must be null or 1-64 characters without control characters'],
      [{ deviceId: NEW, charset: 'latin1' }, 'bad parameter charset: must be one of GB2312, UTF-8'],
      [[NEW], 'bad parameter body: must be a JSON object'],
    ];
    for (const [body, msg] of cases) {
      const res = await f.app.inject({ method: 'POST', url: '/vms/devices', headers, payload: JSON.stringify(body) });
      assert.deepEqual([res.statusCode, res.json().msg], [400, msg], JSON.stringify(body));
    }
    assert.equal(await f.devices.getDevice(NEW), null);
    await f.app.close();
  });
});
