/**
 * MobilePosition (GB/T 28181-2016 §9.11): the platform subscribes with Query/MobilePosition and an
 * `<Interval>` in seconds (§A.2.4); the device then NOTIFYs Notify/MobilePosition (§A.2.5) with
 * GPS time, WGS-84 longitude/latitude and optional speed (km/h), direction (degrees from north) and
 * altitude (m). Coordinates stay strings: `0.0000` must survive a round trip unchanged.
 */
import { readFields, requireText, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export interface MobilePositionQuery extends ManscdpHeader {
  /** Report interval in seconds (defaults to 5 on the device when absent). */
  interval?: string;
}

export interface MobilePositionNotify extends ManscdpHeader {
  time: string;
  longitude: string;
  latitude: string;
  speed?: string;
  direction?: string;
  altitude?: string;
}

const NOTIFY_FIELDS: FieldSpec<MobilePositionNotify> = [
  ['time', 'Time'],
  ['longitude', 'Longitude'],
  ['latitude', 'Latitude'],
  ['speed', 'Speed'],
  ['direction', 'Direction'],
  ['altitude', 'Altitude'],
];

export function decodeMobilePositionQuery(msg: ManscdpMessage): MobilePositionQuery {
  expectCommand(msg, 'Query', 'MobilePosition');
  return { ...headerOf(msg), ...readFields(msg.fields, [['interval', 'Interval']] as FieldSpec<MobilePositionQuery>) };
}

export function buildMobilePositionQuery(query: MobilePositionQuery, opts?: BuildOptions): Buffer {
  return buildCommand('Query', 'MobilePosition', query, writeFields({}, query, [['interval', 'Interval']]), opts);
}

export function decodeMobilePositionNotify(msg: ManscdpMessage): MobilePositionNotify {
  expectCommand(msg, 'Notify', 'MobilePosition');
  return {
    ...readFields(msg.fields, NOTIFY_FIELDS),
    ...headerOf(msg),
    time: requireText(msg.fields, 'Time'),
    longitude: requireText(msg.fields, 'Longitude'),
    latitude: requireText(msg.fields, 'Latitude'),
  };
}

export function buildMobilePositionNotify(notify: MobilePositionNotify, opts?: BuildOptions): Buffer {
  return buildCommand('Notify', 'MobilePosition', notify, writeFields({}, notify, NOTIFY_FIELDS), opts);
}
