// Row shapes and mapping of the embedded store's gb_device / gb_channel (storage/embedded-schema.sqlite.ts).
import type { Channel, ChannelInput, Charset, Device, Transport } from './device.types.ts';

export const DEVICE_COLUMNS =
  'device_id, tenant_id, name, manufacturer, model, firmware, transport, charset, password, remote_ip, remote_port, ' +
  'registered_at, keepalive_at, expires_sec, online, channel_count, created_at, updated_at';

export const CHANNEL_COLUMNS =
  'device_id, channel_id, name, manufacturer, model, owner, civil_code, address, parent_id, parental, status, ' +
  'longitude, latitude, ptz_type, extra, updated_at';

export interface DeviceRow {
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
  registered_at: number | null;
  keepalive_at: number | null;
  expires_sec: number | null;
  online: number;
  channel_count: number;
  created_at: number;
  updated_at: number;
}

export interface ChannelRow {
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
  extra: string | null;
  updated_at: number;
}

export function deviceFromRow(r: DeviceRow): Device {
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
    registeredAt: r.registered_at,
    keepaliveAt: r.keepalive_at,
    expiresSec: r.expires_sec,
    online: r.online === 1,
    channelCount: r.channel_count,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}

function parseExtra(value: string | null): Record<string, string> {
  if (value === null) return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

export function channelFromRow(r: ChannelRow): Channel {
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
    updatedAt: r.updated_at,
  });
}

/** Values in CHANNEL_COLUMNS order. */
export function channelValues(deviceId: string, c: ChannelInput, at: number): unknown[] {
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
