import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildFixture, DEV } from './fixture.ts';

describe('bad input never crashes', () => {
  it('takes POSTs with an empty JSON body, refuses malformed JSON with 400', async () => {
    const f = await buildFixture();
    const headers = { ...(await f.auth()), 'content-type': 'application/json' };
    const empty = await f.app.inject({ method: 'POST', url: `/vms/device/catalog/sync?deviceId=${DEV}`, headers, payload: '' });
    assert.equal(empty.json().success, true);
    const bad = await f.app.inject({ method: 'POST', url: `/vms/device/catalog/sync?deviceId=${DEV}`, headers, payload: '{nope' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 400);
    const text = await f.app.inject({ method: 'POST', url: `/vms/device/catalog/sync?deviceId=${DEV}`, headers: { ...headers, 'content-type': 'text/plain' }, payload: 'x' });
    assert.equal(text.json().success, true);
  });

  it('answers every odd request with an envelope', async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    const urls = [
      '/vms/devices?current=-1', '/vms/devices?size=100000', '/vms/devices?online=maybe', '/vms/device/info?deviceId=%00',
      '/vms/device/info?deviceId[]=1', `/vms/record/query?channelId=${DEV}&startTime=&endTime=`, '/vms/record/result?sn=../../etc',
      '/vms/devices/%E0%A4%A', '/%', '/vms/ptz/control',
    ];
    for (const url of urls) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await f.app.inject({ method, url, headers });
        assert.ok(res.statusCode < 500, `${method} ${url} → ${res.statusCode}`);
        const body = res.json();
        assert.deepEqual(Object.keys(body).sort(), ['code', 'data', 'msg', 'success'], `${method} ${url}`);
      }
    }
  });

  it('refuses bodies over the limit with an envelope', async () => {
    const f = await buildFixture();
    const res = await f.app.inject({
      method: 'POST', url: `/vms/device/catalog/sync?deviceId=${DEV}`, headers: { ...(await f.auth()), 'content-type': 'application/json' },
      payload: `{"a":"${'x'.repeat(1024 * 1024)}"}`,
    });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().code, 413);
    assert.equal(res.json().success, false);
  });
});
