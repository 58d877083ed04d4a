// build -> parse -> decode gives back the typed object, in GB2312 and UTF-8; the bytes of a GB2312
// body are checked by hand for a known character; captured bodies re-encode losslessly.
import assert from 'node:assert/strict';
import * as gb from '../src/index.ts';
import type { ManscdpCharset, ManscdpCommand } from '../src/index.ts';
import { allSamples, test } from './support.ts';

const CHARSETS: ManscdpCharset[] = ['GB2312', 'UTF-8'];
const H = { sn: '007', deviceId: '34020000001320000001' };

function roundTrip<T>(build: (v: T, o: { charset: ManscdpCharset }) => Buffer, decode: (m: gb.ManscdpMessage) => T, value: T): void {
  for (const charset of CHARSETS) {
    const bytes = build(value, { charset });
    const msg = gb.parseManscdp(bytes);
    assert.equal(msg.encoding.charset, charset);
    assert.equal(msg.encoding.mismatch, false);
    assert.deepEqual(decode(msg), value, charset);
  }
}

const fullItem: gb.CatalogItem = {
  deviceId: '34020000001310000001',
  name: '中国 大门 A&B <1>',
  manufacturer: 'Hikvision',
  model: 'DS-2CD',
  owner: 'Owner',
  civilCode: '340200',
  block: 'B1',
  address: '合肥市 "东门"',
  parental: '0',
  parentId: '34020000001320000001',
  businessGroupId: '34020000002150000001',
  safetyWay: '0',
  registerWay: '1',
  certNum: 'C1',
  certifiable: '0',
  errCode: '400',
  endTime: '2030-01-01T00:00:00',
  secrecy: '0',
  ipAddress: '192.168.1.64',
  port: '8000',
  password: 'pw',
  status: 'ON',
  longitude: '0.0000',
  latitude: '031.820000',
  ptzType: '1',
  positionType: '1',
  roomType: '1',
  useType: '1',
  supplyLightType: '1',
  directionType: '1',
  resolution: '6/4',
  downloadSpeed: '1/2/4',
  svcSpaceSupportMode: '0',
  svcTimeSupportMode: '0',
  extra: { Online: 'ON' },
  infoExtra: { StreamNumberList: '0/1' },
};

test('Catalog response with every channel field, Chinese and XML-special characters', () => {
  roundTrip(gb.buildCatalogResponse, gb.decodeCatalogResponse, { ...H, sumNum: 2, items: [fullItem, { deviceId: '34020000001310000002' }] });
});

test('a GB2312 Catalog body carries the declaration and GB2312 bytes (中 = D6 D0)', () => {
  const bytes = gb.buildCatalogResponse({ ...H, sumNum: 1, items: [{ deviceId: '34020000001310000001', name: '中' }] }, { charset: 'GB2312' });
  assert.ok(bytes.toString('latin1').startsWith('<?xml version="1.0" encoding="GB2312"?>\r\n<Response>'));
  assert.ok(bytes.includes(Buffer.from([0x3e, 0xd6, 0xd0, 0x3c]))); // >中<
  assert.ok(bytes.includes(Buffer.from('<DeviceList Num="1">')));
  assert.ok(bytes.includes(Buffer.from('<Info>')) === false); // no Info element when no Info field is set
});

test('PTZType and other camera attributes are written under <Info> (2016 itemType)', () => {
  const xml = gb.buildCatalogResponse({ ...H, sumNum: 1, items: [{ deviceId: '34020000001310000001', ptzType: '1' }] }, { charset: 'UTF-8' }).toString();
  assert.ok(xml.includes('<Info>\n<PTZType>1</PTZType>\n</Info>'));
  // and read from the Item level too, where many devices put it
  const msg = gb.parseManscdp(
    '<Response><CmdType>Catalog</CmdType><SN>1</SN><DeviceID>1</DeviceID><SumNum>1</SumNum><DeviceList Num="1"><Item><DeviceID>2</DeviceID><PTZType>3</PTZType></Item></DeviceList></Response>',
  );
  assert.deepEqual(gb.decodeCatalogResponse(msg).items, [{ deviceId: '2', ptzType: '3' }]);
});

test('Catalog query and notify', () => {
  roundTrip(gb.buildCatalogQuery, gb.decodeCatalogQuery, H);
  roundTrip(gb.buildCatalogQuery, gb.decodeCatalogQuery, { ...H, startTime: '2024-01-01T00:00:00', endTime: '2024-01-02T00:00:00' });
  roundTrip(gb.buildCatalogNotify, gb.decodeCatalogNotify, {
    ...H,
    sumNum: 3,
    items: [
      { deviceId: '34020000001310000001', event: 'ADD', name: '新通道', status: 'ON' },
      { deviceId: '34020000001310000002', event: 'DEL' },
      { deviceId: '34020000001310000003', event: 'UPDATE', name: 'x' },
    ],
  });
});

test('Keepalive, DeviceInfo, DeviceStatus', () => {
  roundTrip(gb.buildKeepalive, gb.decodeKeepalive, { ...H, status: 'OK' });
  roundTrip(gb.buildKeepalive, gb.decodeKeepalive, { ...H, status: 'ERROR', faultDeviceIds: ['34020000001310000001', '34020000001310000002'] });
  roundTrip(gb.buildDeviceInfoQuery, gb.decodeDeviceInfoQuery, H);
  roundTrip(gb.buildDeviceInfoResponse, gb.decodeDeviceInfoResponse, {
    ...H,
    deviceName: '大门摄像机',
    result: 'OK',
    manufacturer: 'Dahua',
    model: 'IPC-HFW',
    firmware: 'V2.800',
    channel: '1',
    extra: { MaxCamera: '1' },
  });
  roundTrip(gb.buildDeviceStatusQuery, gb.decodeDeviceStatusQuery, H);
  roundTrip(gb.buildDeviceStatusResponse, gb.decodeDeviceStatusResponse, {
    ...H,
    result: 'OK',
    online: 'ONLINE',
    status: 'OK',
    encode: 'ON',
    record: 'OFF',
    deviceTime: '2024-01-01T08:00:00',
    alarms: [{ deviceId: '34020000001340000001', dutyStatus: 'ONDUTY' }],
  });
});

test('RecordInfo query and response', () => {
  roundTrip(gb.buildRecordInfoQuery, gb.decodeRecordInfoQuery, {
    ...H,
    startTime: '2024-01-01T00:00:00',
    endTime: '2024-01-01T23:59:59',
    secrecy: '0',
    type: 'all',
  });
  roundTrip(gb.buildRecordInfoResponse, gb.decodeRecordInfoResponse, {
    ...H,
    name: '录像',
    sumNum: 40,
    items: [
      { deviceId: '34020000001310000001', name: '录像1', startTime: '2024-01-01T00:00:00', endTime: '2024-01-01T01:00:00', type: 'time', fileSize: '0102400' },
      { deviceId: '34020000001310000001', filePath: '/a/b.mp4', secrecy: '0' },
    ],
  });
});

test('DeviceControl: PTZ, guard, reboot, record, alarm reset, I-frame, home position; Result answer', () => {
  const commands: gb.DeviceControlCommand[] = [
    { type: 'PTZCmd', ptzCmd: gb.encodePtzCmd({ kind: 'preset', action: 'call', preset: 3 }), controlPriority: '5' },
    { type: 'PTZCmd', ptzCmd: 'A50F0100000000B5' },
    { type: 'GuardCmd', value: 'SetGuard' },
    { type: 'GuardCmd', value: 'ResetGuard' },
    { type: 'TeleBoot' },
    { type: 'RecordCmd', value: 'Record' },
    { type: 'RecordCmd', value: 'StopRecord', streamNumber: '0' },
    { type: 'AlarmCmd', value: 'ResetAlarm', alarmMethod: '2', alarmType: '1' },
    { type: 'IFrameCmd' },
    { type: 'HomePosition', enabled: '1', resetTime: '30', presetIndex: '2' },
    { type: 'Other', fields: { VendorCmd: { Length: '100', Width: '50' } } },
  ];
  for (const command of commands) roundTrip(gb.buildDeviceControl, gb.decodeDeviceControl, { ...H, command });
  assert.deepEqual(gb.DEVICE_CONTROL_ACTIONS.map(gb.deviceControlForAction), [
    { type: 'TeleBoot' },
    { type: 'GuardCmd', value: 'SetGuard' },
    { type: 'GuardCmd', value: 'ResetGuard' },
    { type: 'RecordCmd', value: 'Record' },
    { type: 'RecordCmd', value: 'StopRecord' },
    { type: 'AlarmCmd', value: 'ResetAlarm' },
  ]);
  // the bytes of a reboot, as in the SPVMN "Boot" template (sample 14)
  const boot = gb.buildDeviceControl({ sn: '17318', deviceId: '34020000001320000001', command: gb.deviceControlForAction('reboot') }, { charset: 'GB2312' });
  assert.equal(
    boot.toString('latin1'),
    '<?xml version="1.0" encoding="GB2312"?>\r\n<Control>\n<CmdType>DeviceControl</CmdType>\n<SN>17318</SN>\n<DeviceID>34020000001320000001</DeviceID>\n<TeleBoot>Boot</TeleBoot>\n</Control>\r\n',
  );
  roundTrip<gb.ResultResponse>((v, o) => gb.buildResultResponse('DeviceControl', v, o), (m) => gb.decodeResultResponse(m, 'DeviceControl'), { ...H, result: 'OK' });
});

test('Alarm, MobilePosition, MediaStatus, ConfigDownload, PresetQuery, Broadcast', () => {
  roundTrip(gb.buildAlarmNotify, gb.decodeAlarmNotify, {
    ...H,
    alarmPriority: '1',
    alarmMethod: '5',
    alarmTime: '2024-01-01T12:00:00',
    alarmDescription: '区域入侵',
    longitude: '117.2300',
    latitude: '31.8200',
    alarmType: '2',
    eventType: '1',
  });
  roundTrip(gb.buildMobilePositionQuery, gb.decodeMobilePositionQuery, { ...H, interval: '5' });
  roundTrip(gb.buildMobilePositionNotify, gb.decodeMobilePositionNotify, {
    ...H,
    time: '2024-01-01T12:00:00',
    longitude: '0.0000',
    latitude: '0.0000',
    speed: '0.0',
    direction: '90',
    altitude: '10',
  });
  roundTrip(gb.buildMediaStatusNotify, gb.decodeMediaStatusNotify, { ...H, notifyType: gb.MEDIA_STATUS_END_OF_FILE });
  roundTrip(gb.buildConfigDownloadQuery, gb.decodeConfigDownloadQuery, { ...H, configType: 'BasicParam/VideoParamOpt' });
  roundTrip(gb.buildConfigDownloadResponse, gb.decodeConfigDownloadResponse, {
    ...H,
    result: 'OK',
    basicParam: {
      name: '前端',
      deviceId: '34020000001320000001',
      sipServerId: '34020000002000000001',
      sipServerIp: '10.0.0.1',
      sipServerPort: '5060',
      domainName: '3402000000',
      expiration: '3600',
      password: '12345678',
      heartBeatInterval: '60',
      heartBeatCount: '3',
    },
    extra: { VideoParamOpt: { DownloadSpeed: '1/2/4', Resolution: '6/4' } },
  });
  roundTrip(gb.buildPresetQuery, gb.decodePresetQuery, H);
  roundTrip(gb.buildPresetQueryResponse, gb.decodePresetQueryResponse, {
    ...H,
    presets: [{ presetId: '1', presetName: '门口' }, { presetId: '2' }],
  });
  roundTrip(gb.buildBroadcastNotify, gb.decodeBroadcastNotify, { sn: '9', sourceId: '34020000002000000001', targetId: '34020000001370000001' });
  assert.equal(gb.parseManscdp(gb.buildBroadcastNotify({ sn: '9', sourceId: 'a', targetId: 'b' })).deviceId, 'b');
});

test('values stay strings: SN 007, leading zeros, 0.0000', () => {
  const msg = gb.parseManscdp('<Notify><CmdType>MobilePosition</CmdType><SN>007</SN><DeviceID>0001</DeviceID><Time>t</Time><Longitude>0.0000</Longitude><Latitude>1e3</Latitude></Notify>');
  assert.deepEqual(gb.decodeMobilePositionNotify(msg), { sn: '007', deviceId: '0001', time: 't', longitude: '0.0000', latitude: '1e3' });
});

test('Catalog paging: same SN, same SumNum on every page, Num = page size', () => {
  const items = Array.from({ length: 25 }, (_, i) => ({ deviceId: `340200000013100000${String(i + 1).padStart(2, '0')}` }));
  const pages = gb.buildCatalogResponsePages({ sn: '42', deviceId: '34020000002000000001' }, items, { pageSize: 10, charset: 'UTF-8' });
  assert.equal(pages.length, 3);
  const parsed = pages.map((p) => gb.parseManscdp(p));
  assert.deepEqual(
    parsed.map((m) => [m.sn, gb.decodeCatalogResponse(m).sumNum, (m.fields['DeviceList'] as gb.ManscdpNode)['@Num']]),
    [
      ['42', 25, '10'],
      ['42', 25, '10'],
      ['42', 25, '5'],
    ],
  );
  const all = parsed.flatMap((m) => gb.decodeCatalogResponse(m).items.map((i) => i.deviceId));
  assert.deepEqual(all, items.map((i) => i.deviceId));
  assert.deepEqual(gb.paginateCatalog({ sn: '1', deviceId: 'd' }, []), [{ sn: '1', deviceId: 'd', sumNum: 0, items: [] }]);
  assert.equal(gb.paginateCatalog({ sn: '1', deviceId: 'd' }, items).length, 3); // default page size 10
});

test('paging refuses a page size below 1', () => {
  assert.throws(() => gb.paginateCatalog(H, [], 0), (e: unknown) => gb.isGbError(e) && e.code === 'GB_ERR_ARGUMENT');
});

/** Builds the body of a typed command back, so captured messages can be re-encoded. */
function rebuild(cmd: ManscdpCommand, charset: ManscdpCharset): Buffer | undefined {
  const o = { charset };
  switch (cmd.kind) {
    case 'Notify/Keepalive': return gb.buildKeepalive(cmd.body, o);
    case 'Query/Catalog': return gb.buildCatalogQuery(cmd.body, o);
    case 'Response/Catalog': return gb.buildCatalogResponse(cmd.body, o);
    case 'Notify/Catalog': return gb.buildCatalogNotify(cmd.body, o);
    case 'Query/DeviceInfo': return gb.buildDeviceInfoQuery(cmd.body, o);
    case 'Response/DeviceInfo': return gb.buildDeviceInfoResponse(cmd.body, o);
    case 'Query/DeviceStatus': return gb.buildDeviceStatusQuery(cmd.body, o);
    case 'Response/DeviceStatus': return gb.buildDeviceStatusResponse(cmd.body, o);
    case 'Query/RecordInfo': return gb.buildRecordInfoQuery(cmd.body, o);
    case 'Response/RecordInfo': return gb.buildRecordInfoResponse(cmd.body, o);
    case 'Control/DeviceControl': return gb.buildDeviceControl(cmd.body, o);
    case 'Response/DeviceControl': return gb.buildResultResponse('DeviceControl', cmd.body, o);
    case 'Notify/Alarm': return gb.buildAlarmNotify(cmd.body, o);
    case 'Notify/MobilePosition': return gb.buildMobilePositionNotify(cmd.body, o);
    default: return undefined;
  }
}

test('every captured MANSCDP body re-encodes (GB2312 and UTF-8) to the same typed command', () => {
  let count = 0;
  for (const s of allSamples().filter((b) => b.kind === 'manscdp')) {
    const cmd = gb.parseManscdpCommand(s.bytes);
    for (const charset of CHARSETS) {
      const bytes = rebuild(cmd, charset);
      assert.ok(bytes, `${s.file} #${s.index}: ${cmd.kind} has no rebuild case`);
      assert.deepEqual(gb.parseManscdpCommand(bytes), cmd, `${s.file} #${s.index} ${charset}`);
      count++;
    }
  }
  assert.equal(count, 2 * 60);
});
