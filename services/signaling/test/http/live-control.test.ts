import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceRejectedError, DeviceTimeoutError } from '../../src/errors/catalog.ts';
import { buildFixture, CH, CH_OTHER_TENANT, DEV, DEV_OFFLINE, OTHER_TENANT } from './fixture.ts';

describe('live device endpoints', () => {
  it('queries device info and status through the control port', async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    const info = (await f.app.inject({ method: 'GET', url: `/vms/device/info?deviceId=${DEV}`, headers })).json();
    assert.equal(info.success, true);
    assert.equal(info.data.manufacturer, 'Hikvision');
    const status = (await f.app.inject({ method: 'GET', url: `/blade-iot/vms/device/status?deviceId=${DEV}`, headers })).json();
    assert.equal(status.data.status, 'OK');
    assert.deepEqual(f.calls.map((c) => c.op), ['info', 'status']);
  });

  it('answers 4601 for an offline device without touching the device', async () => {
    const f = await buildFixture();
    const res = await f.app.inject({ method: 'GET', url: `/vms/device/info?deviceId=${DEV_OFFLINE}`, headers: await f.auth() });
    assert.equal(res.statusCode, 200);
    const body = res.json<{ code: number; success: boolean; msg: string; data: unknown }>();
    assert.deepEqual([body.code, body.success, body.data], [4601, false, null]);
    assert.match(body.msg, /offline/);
    assert.equal(f.calls.length, 0);
  });

  it('starts a catalog sync (POST) and reads its progress (GET)', async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    const sync = (await f.app.inject({ method: 'POST', url: `/vms/device/catalog/sync?deviceId=${DEV}`, headers })).json();
    assert.equal(sync.data.state, 'running');
    const progress = (await f.app.inject({ method: 'GET', url: `/vms/device/catalog/sync?deviceId=${DEV_OFFLINE}`, headers })).json();
    assert.equal(progress.data.state, 'idle', 'progress is readable for an offline device');
    assert.deepEqual(f.calls.map((c) => c.op), ['syncCatalog', 'catalogProgress']);
  });

  it('sends PTZ to the channel’s device with a validated command and speed', async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    const res = await f.app.inject({ method: 'POST', url: `/vms/ptz/control?channelId=${CH}&command=UpLeft&speed=200`, headers });
    assert.deepEqual(res.json(), { code: 200, success: true, msg: 'ok', data: null });
    await f.app.inject({ method: 'POST', url: `/vms/ptz/control?channelId=${CH}&command=stop`, headers });
    assert.deepEqual(f.calls, [
      { op: 'ptz', args: [{ deviceId: DEV, channelId: CH }, 'upleft', 200] },
      { op: 'ptz', args: [{ deviceId: DEV, channelId: CH }, 'stop', 128] },
    ]);
    const cases: [string, string][] = [
      [`channelId=${CH}&command=spin`, 'command'],
      [`channelId=${CH}&command=left&speed=256`, 'speed'],
      [`channelId=${CH}&command=left&speed=fast`, 'speed'],
      ['command=left', 'channelId'],
      [`channelId=${CH}&channelId=${CH}&command=left`, 'channelId'],
    ];
    for (const [query, param] of cases) {
      const bad = await f.app.inject({ method: 'POST', url: `/vms/ptz/control?${query}`, headers });
      assert.equal(bad.statusCode, 400, query);
      assert.match(bad.json().msg, new RegExp(`^bad parameter ${param}:`), query);
    }
    const unknown = await f.app.inject({ method: 'POST', url: '/vms/ptz/control?channelId=34020000001319999999&command=left', headers });
    const foreign = await f.app.inject({ method: 'POST', url: `/vms/ptz/control?channelId=${CH_OTHER_TENANT}&command=left`, headers });
    assert.equal(foreign.statusCode, 403);
    assert.deepEqual(unknown.json(), foreign.json(), 'unknown channel: the same answer (SPEC SEC-2)');
    const ops = await f.operatorAuth();
    assert.equal((await f.app.inject({ method: 'POST', url: '/vms/ptz/control?channelId=34020000001319999999&command=left', headers: ops })).statusCode, 404);
    assert.equal(f.calls.length, 2, 'refused requests never reach the device');
  });

  it('validates device control actions', async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    for (const action of ['reboot', 'guard', 'unguard', 'record', 'stoprecord', 'resetalarm']) {
      assert.equal((await f.app.inject({ method: 'POST', url: `/vms/device/control?deviceId=${DEV}&action=${action}`, headers })).json().success, true);
    }
    const bad = await f.app.inject({ method: 'POST', url: `/vms/device/control?deviceId=${DEV}&action=selfdestruct`, headers });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().msg, /^bad parameter action: must be one of reboot, guard/);
  });

  it('queries records by time range and fetches the result by SN', async () => {
    const f = await buildFixture();
    const headers = await f.auth();
    const q = await f.app.inject({
      method: 'POST',
      url: `/vms/record/query?channelId=${CH}&startTime=2025-06-01%2000:00:00&endTime=2025-06-01T02:00:00Z`,
      headers,
    });
    assert.equal(q.json().success, true);
    const { sn } = q.json().data;
    assert.equal(typeof sn, 'string');
    assert.deepEqual(f.calls[0]?.args[1], { start: '2025-06-01T00:00:00', end: '2025-06-01T10:00:00' }, 'Z converted to UTC+8 wall clock');
    const r = (await f.app.inject({ method: 'GET', url: `/vms/record/result?sn=${sn}`, headers })).json();
    assert.equal(r.data.sn, sn);
    assert.equal(r.data.channelId, CH);
    const foreign = await f.app.inject({ method: 'GET', url: `/vms/record/result?sn=${sn}`, headers: await f.auth(OTHER_TENANT) });
    assert.equal(foreign.statusCode, 403);
    const unknown = await f.app.inject({ method: 'GET', url: '/vms/record/result?sn=999999', headers });
    assert.deepEqual(unknown.json(), foreign.json(), 'SNs are a counter: an unknown one answers like another tenant\'s');
    assert.equal((await f.app.inject({ method: 'GET', url: '/vms/record/result?sn=999999', headers: await f.operatorAuth() })).statusCode, 404);
    assert.equal((await f.app.inject({ method: 'GET', url: `/vms/record/result?sn=${sn}`, headers: await f.operatorAuth(OTHER_TENANT) })).statusCode, 200);
    for (const [query, param] of [
      [`channelId=${CH}&startTime=2025-06-01&endTime=2025-06-02 00:00:00`, 'startTime'],
      [`channelId=${CH}&startTime=2025-06-01 00:00:00&endTime=2025-02-30 00:00:00`, 'endTime'],
      [`channelId=${CH}&startTime=2025-06-02 00:00:00&endTime=2025-06-01 00:00:00`, 'endTime'],
    ] as const) {
      const bad = await f.app.inject({ method: 'POST', url: `/vms/record/query?${encodeURI(query)}`, headers });
      assert.equal(bad.statusCode, 400, query);
      assert.match(bad.json().msg, new RegExp(`^bad parameter ${param}:`));
    }
  });

  it('maps device-side failures to business envelopes, unknown failures to 500', async () => {
    const f = await buildFixture({
      control: {
        queryDeviceInfo: async (id) => {
          throw new DeviceTimeoutError(id, 'DeviceInfo');
        },
        queryDeviceStatus: async (id) => {
          throw new DeviceRejectedError(id, 'DeviceStatus', '488 Not Acceptable Here');
        },
        deviceControl: async () => {
          throw new Error('bug');
        },
      },
    });
    const headers = await f.auth();
    const timeout = await f.app.inject({ method: 'GET', url: `/vms/device/info?deviceId=${DEV}`, headers });
    assert.deepEqual([timeout.statusCode, timeout.json().code, timeout.json().success], [200, 4606, false]);
    const rejected = await f.app.inject({ method: 'GET', url: `/vms/device/status?deviceId=${DEV}`, headers });
    assert.deepEqual([rejected.statusCode, rejected.json().code], [200, 4607]);
    const bug = await f.app.inject({ method: 'POST', url: `/vms/device/control?deviceId=${DEV}&action=reboot`, headers });
    assert.deepEqual(bug.json(), { code: 500, success: false, msg: 'internal error', data: null });
    assert.equal(bug.statusCode, 500);
  });
});
