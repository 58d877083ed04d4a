/**
 * DeviceConfig (GB/T 28181-2016 §9.3.2, §A.2.3.2; 2022 §A.2.3.2): the platform writes a section of the
 * device's configuration and the device answers Response/DeviceConfig with `<Result>`. Two sections
 * are modelled: BasicParam (the registration settings: name, expiry, heartbeat interval and count)
 * and the 2022 SnapShotConfig (take `SnapNum` pictures `Interval` seconds apart and upload each to
 * `UploadURL`, naming `SessionID`; the device then sends Notify/UploadSnapShotFinished).
 */
import { getNode, readFields, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

/** The writable subset of §A.2.3.2 BasicParam. */
export interface BasicParamConfig {
  name?: string;
  /** Registration expiry, seconds. */
  expiration?: string;
  /** Heartbeat interval, seconds. */
  heartBeatInterval?: string;
  /** Heartbeats missed before the device counts as offline. */
  heartBeatCount?: string;
}

/** GB/T 28181-2022 §A.2.3.2 SnapShotConfig. */
export interface SnapShotConfig {
  /** Pictures to take, 1-10. */
  snapNum: string;
  /** Seconds between two pictures. */
  interval: string;
  uploadUrl: string;
  /** Names this request in the uploads and the finishing Notify. */
  sessionId: string;
}

export interface DeviceConfig extends ManscdpHeader {
  basicParam?: BasicParamConfig;
  snapShotConfig?: SnapShotConfig;
}

const BASIC_FIELDS: FieldSpec<BasicParamConfig> = [
  ['name', 'Name'],
  ['expiration', 'Expiration'],
  ['heartBeatInterval', 'HeartBeatInterval'],
  ['heartBeatCount', 'HeartBeatCount'],
];

const SNAPSHOT_FIELDS: FieldSpec<SnapShotConfig> = [
  ['snapNum', 'SnapNum'],
  ['interval', 'Interval'],
  ['uploadUrl', 'UploadURL'],
  ['sessionId', 'SessionID'],
];

export function decodeDeviceConfig(msg: ManscdpMessage): DeviceConfig {
  expectCommand(msg, 'Control', 'DeviceConfig');
  const out: DeviceConfig = headerOf(msg);
  const basic = getNode(msg.fields, 'BasicParam');
  if (basic !== undefined) out.basicParam = readFields(basic, BASIC_FIELDS);
  const snap = getNode(msg.fields, 'SnapShotConfig');
  if (snap !== undefined) {
    const read = readFields(snap, SNAPSHOT_FIELDS);
    out.snapShotConfig = { snapNum: read.snapNum ?? '', interval: read.interval ?? '', uploadUrl: read.uploadUrl ?? '', sessionId: read.sessionId ?? '' };
  }
  return out;
}

export function buildDeviceConfig(config: DeviceConfig, opts?: BuildOptions): Buffer {
  const fields: ManscdpNode = {};
  if (config.basicParam !== undefined) fields['BasicParam'] = writeFields({}, config.basicParam, BASIC_FIELDS);
  if (config.snapShotConfig !== undefined) fields['SnapShotConfig'] = writeFields({}, config.snapShotConfig, SNAPSHOT_FIELDS);
  return buildCommand('Control', 'DeviceConfig', config, fields, opts);
}
