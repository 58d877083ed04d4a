/**
 * Alarm Notify (GB/T 28181-2016 §9.4, §A.2.5): sent by the device as a MESSAGE (or in a NOTIFY under
 * an alarm subscription); the platform acknowledges with Response/Alarm `<Result>OK</Result>`
 * (common.ts). AlarmMethod: 1 phone, 2 device, 3 SMS, 4 GPS, 5 video, 6 device fault, 7 other.
 */
import { getNode, readFields, requireText, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export interface AlarmNotify extends ManscdpHeader {
  /** 1 first-level (highest) .. 4 fourth-level. */
  alarmPriority: string;
  alarmMethod: string;
  /** Mandatory in the standard; optional here so an alarm without it is still delivered. */
  alarmTime?: string;
  alarmDescription?: string;
  longitude?: string;
  latitude?: string;
  /** `Info/AlarmType`: sub-type per alarm method (§A.2.5). */
  alarmType?: string;
  /** `Info/AlarmTypeParam/EventType`: 1 enter area, 2 leave area (video alarms). */
  eventType?: string;
}

const FIELDS: FieldSpec<AlarmNotify> = [
  ['alarmPriority', 'AlarmPriority'],
  ['alarmMethod', 'AlarmMethod'],
  ['alarmTime', 'AlarmTime'],
  ['alarmDescription', 'AlarmDescription'],
  ['longitude', 'Longitude'],
  ['latitude', 'Latitude'],
];

export function decodeAlarmNotify(msg: ManscdpMessage): AlarmNotify {
  expectCommand(msg, 'Notify', 'Alarm');
  const out: AlarmNotify = {
    ...readFields(msg.fields, FIELDS),
    ...headerOf(msg),
    alarmPriority: requireText(msg.fields, 'AlarmPriority'),
    alarmMethod: requireText(msg.fields, 'AlarmMethod'),
  };
  const info = getNode(msg.fields, 'Info');
  if (info !== undefined) {
    Object.assign(out, readFields(info, [['alarmType', 'AlarmType']] as FieldSpec<AlarmNotify>));
    const param = getNode(info, 'AlarmTypeParam');
    if (param !== undefined) Object.assign(out, readFields(param, [['eventType', 'EventType']] as FieldSpec<AlarmNotify>));
  }
  return out;
}

export function buildAlarmNotify(alarm: AlarmNotify, opts?: BuildOptions): Buffer {
  const fields = writeFields({}, alarm, FIELDS);
  if (alarm.alarmType !== undefined || alarm.eventType !== undefined) {
    const info: ManscdpNode = {};
    if (alarm.alarmType !== undefined) info['AlarmType'] = alarm.alarmType;
    if (alarm.eventType !== undefined) info['AlarmTypeParam'] = { EventType: alarm.eventType };
    fields['Info'] = info;
  }
  return buildCommand('Notify', 'Alarm', alarm, fields, opts);
}

/**
 * Query/Alarm (§A.2.4): the body of an alarm SUBSCRIBE (§9.11). Priorities and method `0` mean all;
 * a time range limits the alarms the device reports (absent: from now on).
 */
export interface AlarmQuery extends ManscdpHeader {
  startAlarmPriority?: string;
  endAlarmPriority?: string;
  alarmMethod?: string;
  alarmType?: string;
  startAlarmTime?: string;
  endAlarmTime?: string;
}

const QUERY_FIELDS: FieldSpec<AlarmQuery> = [
  ['startAlarmPriority', 'StartAlarmPriority'],
  ['endAlarmPriority', 'EndAlarmPriority'],
  ['alarmMethod', 'AlarmMethod'],
  ['alarmType', 'AlarmType'],
  ['startAlarmTime', 'StartAlarmTime'],
  ['endAlarmTime', 'EndAlarmTime'],
];

export function buildAlarmQuery(query: AlarmQuery, opts?: BuildOptions): Buffer {
  return buildCommand('Query', 'Alarm', query, writeFields({}, query, QUERY_FIELDS), opts);
}

export function decodeAlarmQuery(msg: ManscdpMessage): AlarmQuery {
  expectCommand(msg, 'Query', 'Alarm');
  return { ...readFields(msg.fields, QUERY_FIELDS), ...headerOf(msg) };
}
