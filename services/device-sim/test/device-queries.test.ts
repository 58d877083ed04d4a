// MANSCDP queries and controls from the platform, answered by a simulated device over real sockets.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  buildCatalogQuery, buildDeviceControl, buildDeviceInfoQuery, buildDeviceStatusQuery, buildRecordInfoQuery, decodeCatalogResponse,
  decodeDeviceInfoResponse, decodeDeviceStatusResponse, decodeRecordInfoResponse, decodeResultResponse, encodePtzCmd, parseManscdp,
} from '@vms/gb28181';
import type { SimulatedDevice } from '../src/index.ts';
import { DEVICE_ID, registeredDevice } from './support/device.ts';
import { SERVER_ID, TestPlatform } from './support/platform.ts';

describe('queries', () => {
  let platform: TestPlatform;
  let nvr: SimulatedDevice;
  before(async () => {
    platform = await TestPlatform.start();
    nvr = await registeredDevice(platform, { channels: 25, catalogPageSize: 10, recordPageSize: 4, recordSegmentS: 1800, transport: 'tcp' });
  });
  after(async () => {
    await nvr.close();
    await platform.close();
  });

  it('Catalog: 25 channels in 3 MESSAGEs of at most 10, every page with SN and SumNum 25, GB2312 Chinese names', async () => {
    const { status, responses } = await platform.query(DEVICE_ID, (sn) => buildCatalogQuery({ sn: String(sn), deviceId: DEVICE_ID }));
    assert.equal(status, 200);
    assert.equal(responses.length, 3);
    const pages = responses.map((r) => decodeCatalogResponse(r.msg));
    assert.deepEqual(pages.map((p) => p.items.length), [10, 10, 5]);
    assert.ok(pages.every((p) => p.sumNum === 25 && p.sn === responses[0]?.msg.sn && p.deviceId === DEVICE_ID));
    const items = pages.flatMap((p) => p.items);
    assert.deepEqual(items.map((i) => i.deviceId), nvr.channelIds);
    assert.equal(new Set(nvr.channelIds).size, 25);
    assert.equal(items[0]?.deviceId, '34020000001310000001', 'channel ids: type 131, serials from the device serial');
    assert.equal(items[0]?.name, '模拟设备0001通道1');
    assert.equal(items[0]?.parentId, DEVICE_ID);
    assert.equal(items[0]?.status, 'ON');
    // GB2312 on the wire: declared and encoded so (通 = CD A8 in GB2312), not UTF-8.
    const raw = responses[0]?.req.body as Buffer;
    assert.match(raw.toString('latin1'), /^<\?xml version="1.0" encoding="GB2312"\?>/);
    assert.ok(raw.includes(Buffer.from([0xcd, 0xa8])), 'GB2312 bytes of 通');
    assert.equal(responses[0]?.msg.encoding.charset, 'GB2312');
    assert.equal(responses[0]?.req.headers.get('Content-Type'), 'Application/MANSCDP+xml');
    assert.equal(responses[0]?.flow.transport, 'tcp');
  });

  it('DeviceInfo and DeviceStatus', async () => {
    const info = await platform.query(DEVICE_ID, (sn) => buildDeviceInfoQuery({ sn: String(sn), deviceId: DEVICE_ID }));
    const i = decodeDeviceInfoResponse((info.responses[0] ?? assert.fail('no DeviceInfo')).msg);
    assert.deepEqual([i.deviceName, i.result, i.manufacturer, i.model, i.channel], ['模拟设备0001', 'OK', 'VMS', 'NVR-SIM', '25']);
    const st = await platform.query(DEVICE_ID, (sn) => buildDeviceStatusQuery({ sn: String(sn), deviceId: DEVICE_ID }));
    const s = decodeDeviceStatusResponse((st.responses[0] ?? assert.fail('no DeviceStatus')).msg);
    assert.deepEqual([s.result, s.online, s.status], ['OK', 'ONLINE', 'OK']);
    assert.match(s.deviceTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
  });

  it('RecordInfo: 3 h in 30 min files = 6 records over 2 MESSAGEs (page size 4), times as queried', async () => {
    const channelId = nvr.channelIds[2] as string;
    const { responses } = await platform.query(DEVICE_ID, (sn) =>
      buildRecordInfoQuery({ sn: String(sn), deviceId: channelId, startTime: '2024-05-01T08:00:00', endTime: '2024-05-01T11:00:00', type: 'all' }),
    );
    const pages = responses.map((r) => decodeRecordInfoResponse(r.msg));
    assert.deepEqual(pages.map((p) => [p.sumNum, p.items.length]), [[6, 4], [6, 2]]);
    const items = pages.flatMap((p) => p.items);
    assert.deepEqual(items.map((r) => `${r.startTime}/${r.endTime}`), [
      '2024-05-01T08:00:00/2024-05-01T08:30:00',
      '2024-05-01T08:30:00/2024-05-01T09:00:00',
      '2024-05-01T09:00:00/2024-05-01T09:30:00',
      '2024-05-01T09:30:00/2024-05-01T10:00:00',
      '2024-05-01T10:00:00/2024-05-01T10:30:00',
      '2024-05-01T10:30:00/2024-05-01T11:00:00',
    ]);
    assert.ok(items.every((r) => r.deviceId === channelId && r.type === 'time'));
    assert.equal(pages[0]?.deviceId, channelId);
  });

  it('DeviceControl PTZ: recorded with PTZCmd decoded, no Response; GuardCmd answered Result OK', async () => {
    const channelId = nvr.channelIds[0] as string;
    const ptzCmd = encodePtzCmd({ kind: 'move', direction: 'left', panSpeed: 0x80, tiltSpeed: 0, zoomSpeed: 0 });
    const status = await platform.sendMessage(DEVICE_ID, buildDeviceControl({ sn: String(platform.nextSn()), deviceId: channelId, command: { type: 'PTZCmd', ptzCmd } }));
    assert.equal(status, 200);
    const ptz = await platform.waitFor(() => nvr.controls.find((c) => c.command.type === 'PTZCmd'), 'PTZ recorded');
    assert.equal(ptz.targetId, channelId);
    assert.deepEqual(ptz.ptz, { address: 1, command: { kind: 'move', direction: 'left', panSpeed: 0x80, tiltSpeed: 0, zoomSpeed: 0 } });

    const guard = await platform.query(DEVICE_ID, (sn) => buildDeviceControl({ sn: String(sn), deviceId: DEVICE_ID, command: { type: 'GuardCmd', value: 'SetGuard' } }));
    assert.equal(decodeResultResponse((guard.responses[0] ?? assert.fail('no Response')).msg, 'DeviceControl').result, 'OK');
    assert.deepEqual(nvr.controls.at(-1)?.command, { type: 'GuardCmd', value: 'SetGuard' });
    assert.equal(platform.messagesOf('DeviceControl').length, 1, 'only the GuardCmd was answered');
  });

  it('a query for an id that is not ours: 404; an unparsable body: 400', async () => {
    const other = '34020000001320009999';
    assert.equal(await platform.sendMessage(DEVICE_ID, buildCatalogQuery({ sn: '1', deviceId: other }), other), 404);
    assert.equal(await platform.sendMessage(DEVICE_ID, Buffer.from('<Query><CmdType>Catalog')), 400);
  });

  it('every command is kept in arrival order with its kind', () => {
    const kinds = nvr.commands.map((c) => c.kind);
    assert.deepEqual(kinds.slice(0, 5), ['Query/Catalog', 'Query/DeviceInfo', 'Query/DeviceStatus', 'Query/RecordInfo', 'Control/DeviceControl']);
    assert.ok(nvr.commands.every((c) => c.flow.transport === 'tcp'));
  });
});

describe('UTF-8 device', () => {
  it('answers the catalog in UTF-8 with the same names', async () => {
    const platform = await TestPlatform.start();
    const ipc = await registeredDevice(platform, { charset: 'UTF-8', name: '东门摄像机' });
    try {
      const { responses } = await platform.query(DEVICE_ID, (sn) => buildCatalogQuery({ sn: String(sn), deviceId: DEVICE_ID }));
      const raw = responses[0]?.req.body as Buffer;
      assert.match(raw.toString('utf8'), /encoding="UTF-8"[\s\S]*<Name>东门摄像机通道1<\/Name>/);
      assert.equal(decodeCatalogResponse(parseManscdp(raw)).items[0]?.name, '东门摄像机通道1');
      assert.match(responses[0]?.req.headers.get('From') ?? '', new RegExp(`^<sip:${DEVICE_ID}@3402000000>;tag=`));
      assert.equal(responses[0]?.req.rawUri, `sip:${SERVER_ID}@3402000000`);
    } finally {
      await ipc.close();
      await platform.close();
    }
  });
});
