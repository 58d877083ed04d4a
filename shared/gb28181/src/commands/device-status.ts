/**
 * DeviceStatus (GB/T 28181-2016 §9.5; query §A.2.4, response §A.2.6): online state, working
 * status, encoder/recorder state, device clock and the duty status of alarm inputs. The 2016 text
 * spells the alarm list `<Alarmstatus>`; lookups are case-insensitive, so `AlarmStatus` works too.
 */
import { extraFields, getItems, readFields, requireText, specTags, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { buildCommand, decodeHeaderOnly, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export type DeviceStatusQuery = ManscdpHeader;

export interface AlarmDutyStatus {
  deviceId: string;
  /** ONDUTY, OFFDUTY or ALARM. */
  dutyStatus?: string;
}

export interface DeviceStatusResponse extends ManscdpHeader {
  result?: string;
  /** ONLINE / OFFLINE. */
  online?: string;
  /** OK / ERROR (some devices send ON). */
  status?: string;
  reason?: string;
  encode?: string;
  record?: string;
  deviceTime?: string;
  alarms?: AlarmDutyStatus[];
  extra?: ManscdpNode;
}

const RESPONSE_FIELDS: FieldSpec<DeviceStatusResponse> = [
  ['result', 'Result'],
  ['online', 'Online'],
  ['status', 'Status'],
  ['reason', 'Reason'],
  ['encode', 'Encode'],
  ['record', 'Record'],
  ['deviceTime', 'DeviceTime'],
];
const ALARM_LIST_TAG = 'Alarmstatus';

export function decodeDeviceStatusQuery(msg: ManscdpMessage): DeviceStatusQuery {
  return decodeHeaderOnly(msg, 'Query', 'DeviceStatus');
}

export function buildDeviceStatusQuery(query: DeviceStatusQuery, opts?: BuildOptions): Buffer {
  return buildCommand('Query', 'DeviceStatus', query, {}, opts);
}

export function decodeDeviceStatusResponse(msg: ManscdpMessage): DeviceStatusResponse {
  expectCommand(msg, 'Response', 'DeviceStatus');
  const out: DeviceStatusResponse = { ...headerOf(msg), ...readFields(msg.fields, RESPONSE_FIELDS) };
  const alarms = getItems(msg.fields, ALARM_LIST_TAG).map((item): AlarmDutyStatus => {
    const alarm: AlarmDutyStatus = { deviceId: requireText(item, 'DeviceID') };
    return { ...alarm, ...readFields(item, [['dutyStatus', 'DutyStatus']] as FieldSpec<AlarmDutyStatus>) };
  });
  if (alarms.length > 0) out.alarms = alarms;
  const extra = extraFields(msg.fields, [...specTags(RESPONSE_FIELDS), ALARM_LIST_TAG]);
  if (extra !== undefined) out.extra = extra;
  return out;
}

export function buildDeviceStatusResponse(response: DeviceStatusResponse, opts?: BuildOptions): Buffer {
  const fields = writeFields({}, response, RESPONSE_FIELDS);
  if (response.alarms !== undefined) {
    fields[ALARM_LIST_TAG] = {
      '@Num': String(response.alarms.length),
      Item: response.alarms.map((a) => writeFields({ DeviceID: a.deviceId }, a, [['dutyStatus', 'DutyStatus']])),
    };
  }
  return buildCommand('Response', 'DeviceStatus', response, Object.assign(fields, response.extra), opts);
}
