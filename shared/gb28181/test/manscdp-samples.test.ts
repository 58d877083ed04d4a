// Conformance on captured MANSCDP bodies (every one in the repository's captures, @vms/fixtures). Expected values
// were read off the capture files by hand; the parser never produces its own expectations.
import assert from 'node:assert/strict';
import {
  decodeCatalogNotify,
  decodeCatalogResponse,
  decodeDeviceControl,
  decodeDeviceInfoResponse,
  decodeDeviceStatusResponse,
  decodeKeepalive,
  decodeManscdpCommand,
  decodePtzCmd,
  decodeRecordInfoQuery,
  decodeRecordInfoResponse,
  parseManscdp,
  type ManscdpMessage,
} from '../src/index.ts';
import { allSamples, sample, test, throwsGb } from './support.ts';

const parse = (prefix: string, index: number): ManscdpMessage => parseManscdp(sample(prefix, index).bytes);

/** `<file>/<index>` -> `<root>/<CmdType>` of every MANSCDP body, by reading the captures. */
const KINDS: Record<string, string> = {
  '03/0': 'Notify/Keepalive',
  '03/1': 'Query/Catalog',
  '04/0': 'Notify/Keepalive',
  '04/1': 'Notify/Keepalive',
  '05/0': 'Query/Catalog',
  '05/1': 'Response/Catalog',
  '06/0': 'Response/Catalog',
  '07/0': 'Response/DeviceInfo',
  '07/1': 'Response/Catalog',
  '07/2': 'Response/Catalog',
  '07/3': 'Response/DeviceInfo',
  '08/0': 'Response/DeviceInfo',
  '08/1': 'Response/DeviceInfo',
  '09/0': 'Query/DeviceStatus',
  '09/1': 'Response/DeviceStatus',
  '10/0': 'Query/RecordInfo',
  '10/1': 'Response/RecordInfo',
  '11/0': 'Control/DeviceControl',
  '11/1': 'Response/DeviceControl',
  '13/0': 'Query/Catalog',
  '13/1': 'Response/Catalog',
  '13/2': 'Response/Catalog',
  '14/0': 'Notify/Keepalive',
  '14/1': 'Query/Catalog',
  '14/2': 'Query/DeviceInfo',
  '14/3': 'Query/DeviceStatus',
  '14/4': 'Query/RecordInfo',
  '14/5': 'Control/DeviceControl',
  '14/6': 'Control/DeviceControl',
  '14/7': 'Control/DeviceControl',
  '14/8': 'Notify/Alarm',
  '14/9': 'Control/DeviceControl',
  '14/10': 'Control/DeviceControl',
  '14/11': 'Query/Catalog',
  '14/12': 'Notify/Catalog',
  '14/13': 'Control/DeviceControl',
  '14/14': 'Control/DeviceControl',
  '15/0': 'Notify/Alarm',
  '15/1': 'Notify/Alarm',
  '15/2': 'Notify/MobilePosition',
  '16/0': 'Notify/Keepalive',
  '16/1': 'Query/DeviceInfo',
  '16/2': 'Response/DeviceInfo',
  '16/3': 'Query/DeviceStatus',
  '16/4': 'Response/DeviceStatus',
  '16/5': 'Query/Catalog',
  '16/6': 'Response/Catalog',
  '17/0': 'Query/Catalog',
  '17/1': 'Query/DeviceInfo',
  '17/2': 'Query/DeviceStatus',
  '17/3': 'Notify/Keepalive',
  '17/4': 'Query/RecordInfo',
  '17/5': 'Control/DeviceControl',
  '17/6': 'Query/Catalog',
  '18/0': 'Notify/Keepalive',
  '18/1': 'Query/Catalog',
  '18/2': 'Response/Catalog',
  '18/3': 'Query/DeviceInfo',
  '18/4': 'Response/DeviceInfo',
  '18/5': 'Control/DeviceControl',
};

test('every captured MANSCDP body parses and decodes to its typed command', () => {
  const bodies = allSamples().filter((s) => s.kind === 'manscdp');
  assert.equal(bodies.length, Object.keys(KINDS).length);
  for (const s of bodies) {
    const key = `${s.file.slice(0, 2)}/${s.index}`;
    const cmd = decodeManscdpCommand(parseManscdp(s.bytes));
    assert.equal(cmd.kind, KINDS[key], key);
  }
});

test('03 Hikvision 2013: no encoding declaration, 18-digit legacy ids', () => {
  const msg = parse('03', 0);
  assert.deepEqual(msg.encoding, { charset: 'UTF-8', mismatch: false });
  assert.deepEqual(decodeKeepalive(msg), { sn: '2749', deviceId: '130909113319427420', status: 'OK' });
  assert.equal(parse('03', 1).sn, '471');
});

test('04 keepalive variants: 13-digit SN stays a string; single-quoted GB2312 declaration', () => {
  const a = parse('04', 0);
  assert.equal(a.sn, '1796020507705');
  assert.deepEqual(a.encoding, { charset: 'UTF-8', declared: 'UTF-8', mismatch: false });
  const b = parse('04', 1);
  assert.deepEqual(b.encoding, { charset: 'GB2312', declared: 'GB2312', mismatch: false });
  assert.deepEqual(decodeKeepalive(b), { sn: '1', deviceId: '34020000001320000009', status: 'OK' });
});

test('05 Catalog response: SumNum 2, DeviceList Num="2", full items', () => {
  const msg = parse('05', 1);
  assert.deepEqual(msg.fields['DeviceList'] && (msg.fields['DeviceList'] as Record<string, unknown>)['@Num'], '2');
  const r = decodeCatalogResponse(msg);
  assert.equal(r.sn, '101');
  assert.equal(r.sumNum, 2);
  assert.deepEqual(r.items[0], {
    deviceId: '34020000001310000001',
    name: 'ch1',
    manufacturer: 'SimCamera',
    model: 'SC-2000',
    owner: 'Owner',
    civilCode: '340200000',
    address: 'Address',
    parental: '0',
    parentId: '34020000001320000001',
    safetyWay: '0',
    registerWay: '1',
    secrecy: '0',
    status: 'ON',
  });
  assert.equal(r.items[1]?.deviceId, '34020000001310000002');
  assert.equal(r.items[1]?.name, 'ch2');
});

test('06 UTF-8 bytes declared GB2312: Chinese names decode correctly, mismatch reported', () => {
  const msg = parse('06', 0);
  assert.deepEqual(msg.encoding, { charset: 'UTF-8', declared: 'GB2312', mismatch: true });
  const r = decodeCatalogResponse(msg);
  assert.equal(r.sumNum, 3);
  assert.deepEqual(
    r.items.map((i) => i.name),
    ['模拟设备1-通道1', '模拟设备1-通道2', '模拟设备1-通道3'],
  );
  assert.deepEqual(r.items[0], {
    deviceId: '34020000001320000101',
    name: '模拟设备1-通道1',
    manufacturer: 'IPC',
    model: 'IPC',
    owner: '34020000001320000001',
    civilCode: '340200',
    address: 'Address',
    parental: '0',
    safetyWay: '0',
    registerWay: '1',
    secrecy: '0',
    status: 'ON',
    extra: { Online: 'ON', AlarmStatus: 'READY' },
  });
});

test('06 quirk: Content-Length (1350) is the GB2312 length; the body cut there is malformed', () => {
  const s = sample('06', 0);
  assert.equal(s.bytes.length, 1368); // UTF-8 body as captured (the 18 Chinese characters take 3 bytes each)
  throwsGb(() => parseManscdp(s.bytes.subarray(0, 1350)), 'GB_ERR_XML');
});

test('07 sbgb28181: unsolicited DeviceInfo, Catalog without Num attribute', () => {
  assert.deepEqual(decodeDeviceInfoResponse(parse('07', 0)), {
    sn: '1',
    deviceId: '34020000001320000009',
    deviceName: 'Superdock',
    manufacturer: 'StrawberryInno',
    model: 'test',
    firmware: '1.0',
    result: 'OK',
  });
  const msg = parse('07', 1);
  assert.deepEqual(msg.fields['DeviceList'], {
    Item: [{ DeviceID: '34020000001310000009', Name: 'ch1', Manufacturer: 'StrawberryInno', Model: 'v1', Status: 'ON' }],
  });
  assert.deepEqual(decodeCatalogResponse(msg), {
    sn: '1',
    deviceId: '34020000001320000009',
    sumNum: 1,
    items: [{ deviceId: '34020000001310000009', name: 'ch1', manufacturer: 'StrawberryInno', model: 'v1', status: 'ON' }],
  });
  assert.equal(parse('07', 2).sn, '101');
});

test('08 DeviceInfo variants: no Result; no declaration + leading blank line + Chinese name', () => {
  assert.deepEqual(decodeDeviceInfoResponse(parse('08', 0)), {
    sn: '102',
    deviceId: '34020000001320000001',
    deviceName: 'Cam-1',
    manufacturer: 'SimCamera',
    model: 'SC-2000',
    firmware: 'V1.0.0',
    channel: '2',
  });
  const msg = parse('08', 1);
  assert.deepEqual(msg.encoding, { charset: 'UTF-8', mismatch: false });
  assert.equal(decodeDeviceInfoResponse(msg).deviceName, '模拟设备1');
  assert.equal(decodeDeviceInfoResponse(msg).result, 'OK');
});

test('09 DeviceStatus response', () => {
  assert.deepEqual(decodeDeviceStatusResponse(parse('09', 1)), {
    sn: '103',
    deviceId: '34020000001320000001',
    result: 'OK',
    online: 'ONLINE',
    status: 'ON',
    encode: 'ON',
    record: 'OFF',
  });
});

test('10 RecordInfo: query fields, 20 items in one 7382-byte body', () => {
  assert.deepEqual(decodeRecordInfoQuery(parse('10', 0)), {
    sn: '104',
    deviceId: '34020000001310000001',
    startTime: '2024-01-01T00:00:00',
    endTime: '2024-01-01T23:59:59',
    secrecy: '0',
    type: 'all',
  });
  assert.equal(sample('10', 1).bytes.length, 7382);
  const r = decodeRecordInfoResponse(parse('10', 1));
  assert.equal(r.sn, '104');
  assert.equal(r.deviceId, '34020000001320000001'); // the device, not the queried channel
  assert.equal(r.name, 'RecordInfo');
  assert.equal(r.sumNum, 20);
  assert.equal(r.items.length, 20);
  assert.deepEqual(r.items[0], {
    deviceId: '34020000001310000001',
    name: 'ch1_Record_1',
    filePath: '/record/20240101/34020000001310000001/1.mp4',
    address: 'Address',
    startTime: '2024-01-01T00:00:00',
    endTime: '2024-01-01T01:00:00',
    secrecy: '0',
    type: 'time',
    recorderId: '34020000001320000001',
    fileSize: '102400',
  });
  assert.equal(r.items[19]?.deviceId, '34020000001310000002');
  assert.equal(r.items[19]?.name, 'ch2_Record_10');
  assert.equal(r.items[19]?.startTime, '2024-01-01T09:00:00');
  assert.equal(r.items.filter((i) => i.deviceId === '34020000001310000001').length, 10);
});

test('11 DeviceControl PTZCmd with ControlPriority, and the Result OK answer', () => {
  const control = decodeDeviceControl(parse('11', 0));
  assert.deepEqual(control, {
    sn: '105',
    deviceId: '34020000001310000001',
    command: { type: 'PTZCmd', ptzCmd: 'A50F010180000036', controlPriority: '5' },
  });
  assert.deepEqual(decodePtzCmd('A50F010180000036'), {
    address: 1,
    command: { kind: 'move', direction: 'right', panSpeed: 0x80, tiltSpeed: 0, zoomSpeed: 0 },
  });
  assert.deepEqual(decodeManscdpCommand(parse('11', 1)).body, { sn: '105', deviceId: '34020000001320000001', result: 'OK' });
});

test('13 subscription answers: Catalog Response with only Result; one without XML declaration', () => {
  assert.deepEqual(decodeCatalogResponse(parse('13', 1)), {
    sn: '106',
    deviceId: '34020000001320000009',
    sumNum: 0,
    items: [],
    result: 'OK',
  });
  const noDecl = parse('13', 2);
  assert.deepEqual(noDecl.encoding, { charset: 'UTF-8', mismatch: false });
  assert.equal(noDecl.sn, '20625345');
});

test('14 SPVMN templates: controls, alarm, catalog notify (placeholders kept as text)', () => {
  assert.equal(parse('14', 0).deviceId, '${querydeviceID}');
  const ptz = ['14/5', '14/6', '14/7'].map((k) => {
    const [f, i] = k.split('/') as [string, string];
    const c = decodeDeviceControl(parse(f, Number(i))).command;
    assert.equal(c.type, 'PTZCmd');
    return c.type === 'PTZCmd' ? decodePtzCmd(c.ptzCmd).command : undefined;
  });
  assert.deepEqual(ptz, [
    { kind: 'move', direction: 'left', panSpeed: 0x1f, tiltSpeed: 0, zoomSpeed: 0 },
    { kind: 'move', direction: 'right', panSpeed: 0x1f, tiltSpeed: 0, zoomSpeed: 0 },
    { kind: 'stop' },
  ]);
  assert.deepEqual(decodeManscdpCommand(parse('14', 8)).body, {
    sn: '100',
    deviceId: '${alarmdeviceID}',
    alarmPriority: '4',
    alarmTime: '2009-12-04T16:23:32',
    alarmMethod: '2',
  });
  assert.deepEqual(decodeDeviceControl(parse('14', 9)).command, { type: 'GuardCmd', value: 'SetGuard' });
  assert.deepEqual(decodeDeviceControl(parse('14', 10)).command, { type: 'AlarmCmd', value: 'ResetAlarm', alarmMethod: '2' });
  assert.deepEqual(decodeCatalogNotify(parse('14', 12)), {
    sn: '162',
    deviceId: '${sipserverID}',
    status: 'OK',
    sumNum: 2,
    items: [
      { deviceId: '${domainName}1310000001', event: 'OFF' },
      { deviceId: '${domainName}1310000002', event: 'OFF' },
    ],
  });
  assert.deepEqual(decodeDeviceControl(parse('14', 13)).command, { type: 'RecordCmd', value: 'Record' });
  assert.deepEqual(decodeDeviceControl(parse('14', 14)).command, { type: 'TeleBoot' });
  assert.deepEqual(decodeRecordInfoQuery(parse('14', 4)), {
    sn: '17430',
    deviceId: '${historycameraID}',
    startTime: '2010-11-11T19:46:17',
    endTime: '2010-11-12T19:46:17',
    type: 'time',
  });
});

test('15 lunasaw templates: lower-case <info>, padded values are trimmed', () => {
  assert.deepEqual(decodeManscdpCommand(parse('15', 0)).body, {
    sn: '744523',
    deviceId: '2133',
    alarmPriority: 'AlarmPriority',
    alarmMethod: 'deviceAlarm.getAlarmMethod()',
    alarmTime: 'DateUtil.yyyy_MM_dd_HH_mm_ssToISO8601(deviceAlarm.getAlarmTime())',
    alarmDescription: 'deviceAlarm.getAlarmDescription()',
    longitude: 'deviceAlarm.getLongitude()',
    latitude: 'deviceAlarm.getLatitude()',
    alarmType: 'deviceAlarm.getAlarmType()',
  });
  assert.deepEqual(decodeManscdpCommand(parse('15', 2)).body, {
    sn: '383451',
    deviceId: '123',
    time: 'gpsMsgInfo.getTime()',
    longitude: 'gpsMsgInfo.getLng()',
    latitude: 'gpsMsgInfo.getLat()',
    speed: 'gpsMsgInfo.getSpeed()',
    direction: 'gpsMsgInfo.getDirection()',
    altitude: 'gpsMsgInfo.getAltitude()',
  });
});

test('16 VAG.Node: standalone="yes" UTF-8, indented XML, SN 0; 10-digit CivilCode', () => {
  const q = parse('16', 1);
  assert.deepEqual([q.sn, q.deviceId, q.encoding.declared], ['0', '34020000001180000001', 'UTF-8']);
  assert.deepEqual(decodeDeviceStatusResponse(parse('16', 4)), {
    sn: '1',
    deviceId: '34020000001180000001',
    result: 'OK',
    online: 'ONLINE',
    status: 'OK',
    encode: 'ON',
    record: 'OFF',
    deviceTime: '2024-01-01T00:00:00',
  });
  const r = decodeCatalogResponse(parse('16', 6));
  assert.equal(r.items[0]?.civilCode, '3402000000');
  assert.equal(r.items[0]?.parentId, '34020000001180000001');
});

test('17/18 SPVMN as lower platform and as platform', () => {
  assert.deepEqual(decodeKeepalive(parse('17', 3)), { sn: '43', deviceId: '34020000002000000001', status: 'OK' });
  assert.deepEqual(decodeDeviceControl(parse('17', 5)).command, { type: 'PTZCmd', ptzCmd: 'A50F010180000036', controlPriority: '5' });
  assert.equal(decodeCatalogResponse(parse('18', 2)).items[0]?.name, 'cam1');
  assert.deepEqual(decodeDeviceControl(parse('18', 5)).command, { type: 'PTZCmd', ptzCmd: 'A50F01021F0000D6' });
});
