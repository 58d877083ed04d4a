/**
 * GB/T 28181-2022 queries and notifications (§A.2.4, §A.2.5, §A.2.6): SDCardStatus, PTZPosition,
 * HomePositionQuery, CruiseTrackListQuery and CruiseTrackQuery are Queries carrying only the header
 * (CruiseTrackQuery adds the track `Number`); their Responses are read with the generic field
 * readers. The two notifications that close long-running 2022 commands are typed here:
 * UploadSnapShotFinished (after SnapShotConfig) and DeviceUpgradeResult (after DeviceUpgrade).
 *
 * Element names and order, with no 2022 capture at hand, were checked against public write-ups and
 * independent implementations (provenance in test/fixtures/README.md, "2022 message shapes"):
 *  - §A.2.6.16 SDCardStatus: `SumNum`, `SDCardStatusInfo Num=` / `Item` {ID, HddName, Status
 *    (ok|formatting|unformatted|idle|error), FormatProgress?, Capacity, FreeSpace (MB)};
 *  - §A.2.6.13 CruiseTrackListQuery: `SumNum`, `CruiseTrackList Num=` / `CruiseTrack` {Number, Name};
 *  - §A.2.6.14 CruiseTrackQuery: Number, Name, `SumNum`, `CruisePointList Num=` / `CruisePoint`
 *    {PresetIndex, StayTime, Speed};
 *  - §A.2.6.15 PTZPosition: Pan, Tilt, Zoom, HorizontalFieldAngle, VerticalFieldAngle, MaxViewDistance;
 *  - §A.2.5.7 UploadSnapShotFinished: SessionID, `SnapShotList` / `SnapShotFileID` (≤ 10);
 *  - §A.2.5.9 DeviceUpgradeResult: SessionID, UpgradeResult, Firmware, UpgradeFailedReason?;
 *  - §A.2.3.2 DeviceConfig carries `SnapShotConfig` {SnapNum, Interval, UploadURL, SessionID};
 *  - §9.3.2.1: PTZPreciseCtrl, FormatSDCard and TargetTrack get no Response/DeviceControl (the SIP
 *    200 ends them), DeviceUpgrade does.
 */
import { getItems, getText, getTexts, requireText } from '../fields.ts';
import { buildManscdp, type BuildOptions, type ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { expectCommand, type ManscdpHeader } from './common.ts';

export const QUERIES_2022 = ['SDCardStatus', 'PTZPosition', 'HomePositionQuery', 'CruiseTrackListQuery', 'CruiseTrackQuery'] as const;
export type Query2022 = (typeof QUERIES_2022)[number];

export interface Query2022Options {
  /** CruiseTrackQuery: the track number (§A.2.4.14). */
  number?: string;
}

export function buildQuery2022(cmdType: Query2022, header: ManscdpHeader, o: Query2022Options = {}, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = cmdType === 'CruiseTrackQuery' && o.number !== undefined ? { Number: o.number } : {};
  return buildManscdp({ root: 'Query', cmdType, sn: header.sn, deviceId: header.deviceId, fields }, opts);
}

export interface UploadSnapShotFinished extends ManscdpHeader {
  sessionId: string;
  /** Ids of the pictures uploaded (`SnapShotList/SnapShotFileID`). */
  fileIds: string[];
}

export function decodeUploadSnapShotFinished(msg: ManscdpMessage): UploadSnapShotFinished {
  expectCommand(msg, 'Notify', 'UploadSnapShotFinished');
  const list = msg.fields['SnapShotList'];
  const fileIds = list !== undefined && typeof list === 'object' && !Array.isArray(list) ? getTexts(list, 'SnapShotFileID') : [];
  return { sn: msg.sn, deviceId: msg.deviceId, sessionId: requireText(msg.fields, 'SessionID'), fileIds };
}

export function buildUploadSnapShotFinished(n: UploadSnapShotFinished, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = { SessionID: n.sessionId, SnapShotList: { SnapShotFileID: n.fileIds } };
  return buildManscdp({ root: 'Notify', cmdType: 'UploadSnapShotFinished', sn: n.sn, deviceId: n.deviceId, fields }, opts);
}

export interface DeviceUpgradeResult extends ManscdpHeader {
  sessionId: string;
  /** The firmware now running. */
  firmware?: string;
  /** `OK` / `ERROR` (§A.2.6 resultType). */
  result: string;
  upgradeFailedReason?: string;
}

export function decodeDeviceUpgradeResult(msg: ManscdpMessage): DeviceUpgradeResult {
  expectCommand(msg, 'Notify', 'DeviceUpgradeResult');
  const out: DeviceUpgradeResult = { sn: msg.sn, deviceId: msg.deviceId, sessionId: requireText(msg.fields, 'SessionID'), result: requireText(msg.fields, 'UpgradeResult') };
  const firmware = getText(msg.fields, 'Firmware');
  if (firmware !== undefined) out.firmware = firmware;
  const reason = getText(msg.fields, 'UpgradeFailedReason');
  if (reason !== undefined) out.upgradeFailedReason = reason;
  return out;
}

export function buildDeviceUpgradeResult(n: DeviceUpgradeResult, opts?: BuildOptions): Buffer {
  // §A.2.5.9 order: SessionID, UpgradeResult, Firmware, UpgradeFailedReason (strict peers check it)
  const fields: ManscdpNode = { SessionID: n.sessionId, UpgradeResult: n.result };
  if (n.firmware !== undefined) fields['Firmware'] = n.firmware;
  if (n.upgradeFailedReason !== undefined) fields['UpgradeFailedReason'] = n.upgradeFailedReason;
  return buildManscdp({ root: 'Notify', cmdType: 'DeviceUpgradeResult', sn: n.sn, deviceId: n.deviceId, fields }, opts);
}

/** Members of a list element in a generic Response (SDCardStatusInfo/Item, CruiseTrackList/CruiseTrack...), as parsed. */
export function listItems(msg: ManscdpMessage, listTag: string, itemTag = 'Item'): ManscdpNode[] {
  return getItems(msg.fields, listTag, itemTag);
}
