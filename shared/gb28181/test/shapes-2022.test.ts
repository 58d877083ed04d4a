// GB/T 28181-2022 message shapes as public implementations write them (no 2022 capture exists in
// the repository; provenance of each excerpt in test/fixtures/README.md, "2022 message shapes").
// The expected values are typed by hand from those excerpts, never produced by our own builders.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as gb from '../src/index.ts';

const head = (root: string, cmdType: string, body: string): Buffer =>
  Buffer.from(`<?xml version="1.0" encoding="GB2312"?>\r\n<${root}>\r\n<CmdType>${cmdType}</CmdType>\r\n<SN>12</SN>\r\n<DeviceID>34020000001320000001</DeviceID>\r\n${body}</${root}>\r\n`, 'utf8');

test('§A.2.6.16 SDCardStatus: SDCardStatusInfo / Item (excerpt E1)', () => {
  const msg = gb.parseManscdp(head('Response', 'SDCardStatus', '<SumNum>1</SumNum>\r\n<SDCardStatusInfo Num="1">\r\n<Item>\r\n<ID>1</ID>\r\n<HddName>SD Card 1</HddName>\r\n<Status>ok</Status>\r\n<FormatProgress>0</FormatProgress>\r\n<Capacity>32768</Capacity>\r\n<FreeSpace>24576</FreeSpace>\r\n</Item>\r\n</SDCardStatusInfo>\r\n'));
  assert.deepEqual(gb.listItems(msg, 'SDCardStatusInfo'), [{ ID: '1', HddName: 'SD Card 1', Status: 'ok', FormatProgress: '0', Capacity: '32768', FreeSpace: '24576' }]);
});

test('§A.2.6.13/14 cruise tracks: CruiseTrackList / CruiseTrack and CruisePointList / CruisePoint, arrays even with one member (excerpts E2, E3)', () => {
  const list = gb.parseManscdp(head('Response', 'CruiseTrackListQuery', '<SumNum>1</SumNum><CruiseTrackList Num="1"><CruiseTrack><Number>0</Number><Name>T0</Name></CruiseTrack></CruiseTrackList>'));
  assert.deepEqual(gb.listItems(list, 'CruiseTrackList', 'CruiseTrack'), [{ Number: '0', Name: 'T0' }]);
  const track = gb.parseManscdp(
    head('Response', 'CruiseTrackQuery', '<Number>1</Number><Name>夜间</Name><SumNum>2</SumNum><CruisePointList Num="2"><CruisePoint><PresetIndex>3</PresetIndex><StayTime>10</StayTime><Speed>5</Speed></CruisePoint><CruisePoint><PresetIndex>7</PresetIndex><StayTime>20</StayTime><Speed>8</Speed></CruisePoint></CruisePointList>'),
  );
  assert.deepEqual(gb.listItems(track, 'CruisePointList', 'CruisePoint').map((p) => p['PresetIndex']), ['3', '7']);
  const one = gb.parseManscdp(head('Response', 'CruiseTrackQuery', '<SumNum>1</SumNum><CruisePointList Num="1"><CruisePoint><PresetIndex>3</PresetIndex><StayTime>5</StayTime><Speed>8</Speed></CruisePoint></CruisePointList>'));
  assert.ok(Array.isArray((one.fields['CruisePointList'] as gb.ManscdpNode)['CruisePoint']), 'a single CruisePoint is still a list');
});

test('§A.2.5.9 DeviceUpgradeResult: read from the public form, written in its order (excerpt E4)', () => {
  const pub = head('Notify', 'DeviceUpgradeResult', '<SessionID>upgrade-delete-race-session-00001</SessionID><UpgradeResult>OK</UpgradeResult><Firmware>V2.0.0</Firmware>');
  const r = gb.decodeDeviceUpgradeResult(gb.parseManscdp(pub));
  assert.deepEqual([r.sessionId, r.result, r.firmware], ['upgrade-delete-race-session-00001', 'OK', 'V2.0.0']);
  const ours = gb.buildDeviceUpgradeResult({ sn: '12', deviceId: '34020000001320000001', sessionId: 's', result: 'ERROR', firmware: 'V1', upgradeFailedReason: '02' }).toString('latin1');
  const order = ['<SessionID>', '<UpgradeResult>', '<Firmware>', '<UpgradeFailedReason>'].map((t) => ours.indexOf(t));
  assert.ok(order.every((at, i) => at > 0 && (i === 0 || at > (order[i - 1] ?? 0))), ours);
});

test('§A.2.3.2 snapshot rides DeviceConfig as SnapShotConfig; §A.2.5.7 UploadSnapShotFinished (excerpts E5, E6)', () => {
  const cfg = gb.parseManscdpCommand(head('Control', 'DeviceConfig', '<SnapShotConfig>\r\n<SnapNum>1</SnapNum>\r\n<Interval>1</Interval>\r\n<UploadURL>http://192.0.2.10:8080/edge/upload/picture/token</UploadURL>\r\n<SessionID>snapshot-session</SessionID>\r\n</SnapShotConfig>\r\n'));
  assert.equal(cfg.kind, 'Control/DeviceConfig');
  if (cfg.kind !== 'Control/DeviceConfig') return;
  assert.deepEqual(cfg.body.snapShotConfig, { snapNum: '1', interval: '1', uploadUrl: 'http://192.0.2.10:8080/edge/upload/picture/token', sessionId: 'snapshot-session' });
  const done = gb.decodeUploadSnapShotFinished(gb.parseManscdp(head('Notify', 'UploadSnapShotFinished', '<SessionID>0123456789abcdef0123456789abcdef</SessionID><SnapShotList><SnapShotFileID>f-1</SnapShotFileID><SnapShotFileID>f-2</SnapShotFileID></SnapShotList>')));
  assert.deepEqual(done.fileIds, ['f-1', 'f-2']);
});
