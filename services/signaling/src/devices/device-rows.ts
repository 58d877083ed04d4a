// Row shapes and mapping of gb_device / gb_channel, one for both stores: MySQL (`deploy/sql/V001__devices.sql`,
// times as DATETIME → Date) and the embedded SQLite store (`storage/embedded-schema.sqlite.ts`, times as epoch
// milliseconds). SQL text stays in the adapter files.
import type { Channel, ChannelInput, Charset, Device, Transport } from './device.types.ts';

export const DEVICE_COLUMNS =
  'device_id, tenant_id, name, manufacturer, model, firmware, transport, charset, password, remote_ip, remote_port, ' +
  'registered_at, keepalive_at, expires_sec, online, channel_count, created_at, updated_at';

export const CHANNEL_COLUMNS =
  'device_id, channel_id, name, manufacturer, model, owner, civil_code, address, parent_id, parental, status, ' +
  'longitude, latitude, ptz_type, extra, updated_at';

/** A stored instant: MySQL hands back a Date, SQLite the epoch milliseconds it was given. */
export type StoredTime = Date | number;

export interface DeviceRowFields<T extends StoredTime> {
  device_id: string;
  tenant_id: string;
  name: string | null;
  manufacturer: string | null;
  model: string | null;
  firmware: string | null;
  transport: string;
  charset: string;
  password: string | null;
  remote_ip: string | null;
  remote_port: number | null;
  registered_at: T | null;
  keepalive_at: T | null;
  expires_sec: number | null;
  online: number;
  channel_count: number;
  created_at: T;
  updated_at: T;
}

export interface ChannelRowFields<T extends StoredTime> {
  device_id: string;
  channel_id: string;
  name: string | null;
  manufacturer: string | null;
  model: string | null;
  owner: string | null;
  civil_code: string | null;
  address: string | null;
  parent_id: string | null;
  parental: number;
  status: string;
  longitude: number | null;
  latitude: number | null;
  ptz_type: number | null;
  /** JSON text (SQLite, MariaDB's LONGTEXT) or an object MySQL already parsed. */
  extra: string | Record<string, string> | null;
  updated_at: T;
}

const toMs = (t: StoredTime): number => (typeof t === 'number' ? t : t.getTime());
const toMsOrNull = (t: StoredTime | null): number | null => (t === null ? null : toMs(t));

export function deviceFromRow(r: DeviceRowFields<StoredTime>): Device {
  return Object.freeze({
    deviceId: r.device_id,
    tenantId: r.tenant_id,
    name: r.name,
    manufacturer: r.manufacturer,
    model: r.model,
    firmware: r.firmware,
    transport: r.transport as Transport,
    charset: r.charset as Charset,
    password: r.password,
    remoteIp: r.remote_ip,
    remotePort: r.remote_port,
    registeredAt: toMsOrNull(r.registered_at),
    keepaliveAt: toMsOrNull(r.keepalive_at),
    expiresSec: r.expires_sec,
    online: r.online === 1,
    channelCount: r.channel_count,
    createdAt: toMs(r.created_at),
    updatedAt: toMs(r.updated_at),
  });
}

/** A stored `extra` that is not a JSON object (hand-edited, truncated) reads as empty rather than failing the read. */
function parseExtra(value: ChannelRowFields<StoredTime>['extra']): Record<string, string> {
  if (value === null) return {};
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return {};
    }
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, string>) : {};
}

export function channelFromRow(r: ChannelRowFields<StoredTime>): Channel {
  return Object.freeze({
    deviceId: r.device_id,
    channelId: r.channel_id,
    name: r.name,
    manufacturer: r.manufacturer,
    model: r.model,
    owner: r.owner,
    civilCode: r.civil_code,
    address: r.address,
    parentId: r.parent_id,
    parental: r.parental === 1,
    status: r.status === 'ON' ? 'ON' : 'OFF',
    longitude: r.longitude,
    latitude: r.latitude,
    ptzType: r.ptz_type,
    extra: Object.freeze(parseExtra(r.extra)),
    updatedAt: toMs(r.updated_at),
  });
}

/** Values in CHANNEL_COLUMNS order, for a multi-row `INSERT … VALUES ?` (MySQL) or a prepared insert (SQLite). */
export function channelValues(deviceId: string, c: ChannelInput, at: StoredTime): unknown[] {
  return [
    deviceId,
    c.channelId,
    c.name,
    c.manufacturer,
    c.model,
    c.owner,
    c.civilCode,
    c.address,
    c.parentId,
    c.parental ? 1 : 0,
    c.status,
    c.longitude,
    c.latitude,
    c.ptzType,
    JSON.stringify(c.extra),
    at,
  ];
}
