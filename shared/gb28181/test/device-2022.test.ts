// DeviceConfig (BasicParam, SnapShotConfig), the 2016 DragZoom and the GB/T 28181-2022 controls,
// queries and notifications: build -> parse -> decode round trips, and the element layout checked
// against hand-written bodies (element names as in the standard's §A.2.3 / §A.2.4 / §A.2.5 tables).
import assert from 'node:assert/strict';
import * as gb from '../src/index.ts';
import type { ManscdpCharset } from '../src/index.ts';
import { test } from './support.ts';

const CHARSETS: ManscdpCharset[] = ['GB2312', 'UTF-8'];
const H = { sn: '42', deviceId: '34020000001320000001' };

function roundTrip<T>(build: (v: T, o: { charset: ManscdpCharset }) => Buffer, decode: (m: gb.ManscdpMessage) => T, value: T): void {
  for (const charset of CHARSETS) assert.deepEqual(decode(gb.parseManscdp(build(value, { charset }))), value, charset);
}

const bodyOf = (bytes: Buffer): string => bytes.toString('latin1').replace(/^<\?xml[^>]*>\r\n/, '').replace(/\r\n$/, '');

test('DeviceControl 2022 commands and drag-to-zoom round-trip as typed commands', () => {
  const area: gb.DragZoomArea = { length: '1920', width: '1080', midPointX: '960', midPointY: '540', lengthX: '200', lengthY: '100' };
  const commands: gb.DeviceControlCommand[] = [
    { type: 'DragZoom', direction: 'in', zoom: area },
    { type: 'DragZoom', direction: 'out', zoom: area },
    { type: 'PTZPreciseCtrl', pan: '120.50', tilt: '-10.00', zoom: '4.0' },
    { type: 'TargetTrack', value: 'Auto' },
    { type: 'TargetTrack', value: 'Manual', deviceId2: '34020000001310000002', targetArea: area },
    { type: 'DeviceUpgrade', firmware: 'V5.7.0', fileUrl: 'http://10.0.0.1/fw.bin', manufacturer: 'Acme', sessionId: 'up-1' },
    { type: 'FormatSDCard', index: '1' },
  ];
  for (const command of commands) roundTrip(gb.buildDeviceControl, gb.decodeDeviceControl, { ...H, command });
});

test('DeviceControl layouts: DragZoomIn, PTZPreciseCtrl, DeviceUpgrade, FormatSDCard', () => {
  const build = (command: gb.DeviceControlCommand): string => bodyOf(gb.buildDeviceControl({ ...H, command }, { charset: 'GB2312' }));
  const head = '<Control>\n<CmdType>DeviceControl</CmdType>\n<SN>42</SN>\n<DeviceID>34020000001320000001</DeviceID>\n';
  assert.equal(
    build({ type: 'DragZoom', direction: 'in', zoom: { length: '1920', width: '1080', midPointX: '960', midPointY: '540', lengthX: '200', lengthY: '100' } }),
    `${head}<DragZoomIn>\n<Length>1920</Length>\n<Width>1080</Width>\n<MidPointX>960</MidPointX>\n<MidPointY>540</MidPointY>\n<LengthX>200</LengthX>\n<LengthY>100</LengthY>\n</DragZoomIn>\n</Control>`,
  );
  assert.equal(build({ type: 'PTZPreciseCtrl', pan: '1', tilt: '2', zoom: '3' }), `${head}<PTZPreciseCtrl>\n<Pan>1</Pan>\n<Tilt>2</Tilt>\n<Zoom>3</Zoom>\n</PTZPreciseCtrl>\n</Control>`);
  assert.equal(
    build({ type: 'DeviceUpgrade', firmware: 'V2', fileUrl: 'http://h/f', manufacturer: 'M', sessionId: 's' }),
    `${head}<DeviceUpgrade>\n<Firmware>V2</Firmware>\n<FileURL>http://h/f</FileURL>\n<Manufacturer>M</Manufacturer>\n<SessionID>s</SessionID>\n</DeviceUpgrade>\n</Control>`,
  );
  assert.equal(build({ type: 'FormatSDCard', index: '1' }), `${head}<FormatSDCard>1</FormatSDCard>\n</Control>`);
});

test('DeviceConfig BasicParam and SnapShotConfig; Response/DeviceConfig is a Result answer', () => {
  const basic: gb.DeviceConfig = { ...H, basicParam: { name: '东门 IPC', expiration: '3600', heartBeatInterval: '30', heartBeatCount: '3' } };
  roundTrip(gb.buildDeviceConfig, gb.decodeDeviceConfig, basic);
  const snap: gb.DeviceConfig = { ...H, snapShotConfig: { snapNum: '3', interval: '1', uploadUrl: 'http://10.0.0.1:18080/vms/snapshot/upload/abc', sessionId: 'abc' } };
  roundTrip(gb.buildDeviceConfig, gb.decodeDeviceConfig, snap);
  assert.equal(
    bodyOf(gb.buildDeviceConfig({ ...H, basicParam: { heartBeatInterval: '30' } })),
    '<Control>\n<CmdType>DeviceConfig</CmdType>\n<SN>42</SN>\n<DeviceID>34020000001320000001</DeviceID>\n<BasicParam>\n<HeartBeatInterval>30</HeartBeatInterval>\n</BasicParam>\n</Control>',
  );
  const answer = gb.parseManscdpCommand(gb.buildResultResponse('DeviceConfig', { ...H, result: 'ERROR' }));
  assert.deepEqual(answer, { kind: 'Response/DeviceConfig', body: { ...H, result: 'ERROR' } });
  assert.equal(gb.parseManscdpCommand(gb.buildDeviceConfig(basic)).kind, 'Control/DeviceConfig');
});

test('2022 queries carry only the header (CruiseTrackQuery adds Number); notifications decode', () => {
  for (const cmdType of gb.QUERIES_2022) {
    const msg = gb.parseManscdp(gb.buildQuery2022(cmdType, H, { number: '2' }));
    assert.deepEqual([msg.root, msg.cmdType, msg.sn, msg.deviceId], ['Query', cmdType, '42', H.deviceId]);
    assert.deepEqual(msg.fields, cmdType === 'CruiseTrackQuery' ? { Number: '2' } : {});
  }
  const finished: gb.UploadSnapShotFinished = { ...H, sessionId: 'abc', fileIds: ['34020000001320000001202601010000000001', '34020000001320000001202601010000000002'] };
  roundTrip(gb.buildUploadSnapShotFinished, gb.decodeUploadSnapShotFinished, finished);
  assert.equal(gb.parseManscdpCommand(gb.buildUploadSnapShotFinished(finished)).kind, 'Notify/UploadSnapShotFinished');
  const upgraded: gb.DeviceUpgradeResult = { ...H, sessionId: 'up-1', firmware: 'V2', result: 'ERROR', upgradeFailedReason: 'checksum' };
  roundTrip(gb.buildDeviceUpgradeResult, gb.decodeDeviceUpgradeResult, upgraded);
  // a notification without SessionID is refused, not half-read
  const broken = gb.buildManscdp({ root: 'Notify', cmdType: 'DeviceUpgradeResult', sn: 1, deviceId: H.deviceId, fields: { UpgradeResult: 'OK' } });
  assert.throws(() => gb.parseManscdpCommand(broken), (e: unknown) => gb.isGbError(e) && e.code === 'GB_ERR_MISSING_FIELD');
});
