/**
 * DeviceInfo (GB/T 28181-2016 §9.5; query §A.2.4, response §A.2.6). Some devices answer without
 * `<Result>` (sample 08), and one simulator puts the Response in the 200 OK body of the query
 * instead of a separate MESSAGE; the body is the same either way.
 */
import { extraFields, readFields, specTags, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { buildCommand, decodeHeaderOnly, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export type DeviceInfoQuery = ManscdpHeader;

export interface DeviceInfoResponse extends ManscdpHeader {
  deviceName?: string;
  result?: string;
  manufacturer?: string;
  model?: string;
  firmware?: string;
  /** Number of video input channels, as sent. */
  channel?: string;
  extra?: ManscdpNode;
}

const RESPONSE_FIELDS: FieldSpec<DeviceInfoResponse> = [
  ['deviceName', 'DeviceName'],
  ['result', 'Result'],
  ['manufacturer', 'Manufacturer'],
  ['model', 'Model'],
  ['firmware', 'Firmware'],
  ['channel', 'Channel'],
];

export function decodeDeviceInfoQuery(msg: ManscdpMessage): DeviceInfoQuery {
  return decodeHeaderOnly(msg, 'Query', 'DeviceInfo');
}

export function buildDeviceInfoQuery(query: DeviceInfoQuery, opts?: BuildOptions): Buffer {
  return buildCommand('Query', 'DeviceInfo', query, {}, opts);
}

export function decodeDeviceInfoResponse(msg: ManscdpMessage): DeviceInfoResponse {
  expectCommand(msg, 'Response', 'DeviceInfo');
  const out: DeviceInfoResponse = { ...headerOf(msg), ...readFields(msg.fields, RESPONSE_FIELDS) };
  const extra = extraFields(msg.fields, specTags(RESPONSE_FIELDS));
  if (extra !== undefined) out.extra = extra;
  return out;
}

export function buildDeviceInfoResponse(response: DeviceInfoResponse, opts?: BuildOptions): Buffer {
  const fields = writeFields({}, response, RESPONSE_FIELDS);
  return buildCommand('Response', 'DeviceInfo', response, Object.assign(fields, response.extra), opts);
}
