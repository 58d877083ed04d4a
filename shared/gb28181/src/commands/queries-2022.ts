/**
 * GB/T 28181-2022 queries and notifications (§A.2.4, §A.2.5, §A.2.6): SDCardStatus, PTZPosition,
 * HomePositionQuery, CruiseTrackListQuery and CruiseTrackQuery are Queries carrying only the header
 * (CruiseTrackQuery adds the track `Number`); their Responses are read with the generic field
 * readers. The two notifications that close long-running 2022 commands are typed here:
 * UploadSnapShotFinished (after SnapShotConfig) and DeviceUpgradeResult (after DeviceUpgrade).
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
  const fields: ManscdpNode = { SessionID: n.sessionId };
  if (n.firmware !== undefined) fields['Firmware'] = n.firmware;
  fields['UpgradeResult'] = n.result;
  if (n.upgradeFailedReason !== undefined) fields['UpgradeFailedReason'] = n.upgradeFailedReason;
  return buildManscdp({ root: 'Notify', cmdType: 'DeviceUpgradeResult', sn: n.sn, deviceId: n.deviceId, fields }, opts);
}

/** Items of a list element in a generic Response (SDCardList, CruiseTrackList...), as parsed. */
export function listItems(msg: ManscdpMessage, listTag: string): ManscdpNode[] {
  return getItems(msg.fields, listTag);
}
