// The simulated device's channels and what it reports about them: catalog items (§A.2.6 itemType)
// and synthetic record files for RecordInfo (§9.7). Pure functions of the options.
import { formatGbTime, type CatalogItem, type RecordItem } from '@vms/gb28181';
import type { ResolvedDeviceOptions } from './options.ts';

/** GB/T 28181 Annex D: type code 131 = camera, the usual channel type. */
export const CHANNEL_TYPE_CODE = '131';
const SERIAL_DIGITS = 6; // digits 15-20
const SERIAL_MODULO = 10 ** SERIAL_DIGITS;

export interface SimChannel {
  id: string;
  name: string;
}

/**
 * `count` channel ids under `deviceId`: its centre/industry code, type 131, its network digit, and
 * serials ((device serial - 1) * count + 1 ..): distinct across a fleet of consecutive device ids as
 * long as serial * count stays below 10^6. Pass explicit ids when that is not enough.
 */
export function defaultChannelIds(deviceId: string, count: number): string[] {
  const serial = Number(deviceId.slice(-SERIAL_DIGITS));
  const prefix = deviceId.slice(0, 10) + CHANNEL_TYPE_CODE + deviceId.slice(13, 14);
  return Array.from({ length: count }, (_, i) => {
    const n = ((Math.max(serial, 1) - 1) * count + i + 1) % SERIAL_MODULO;
    return prefix + String(n).padStart(SERIAL_DIGITS, '0');
  });
}

/** The device id `offset` places after `first` (serial digits 15-20 incremented), for fleets. */
export function deviceIdAt(first: string, offset: number): string {
  const serial = Number(first.slice(-SERIAL_DIGITS)) + offset;
  return first.slice(0, -SERIAL_DIGITS) + String(serial % SERIAL_MODULO).padStart(SERIAL_DIGITS, '0');
}

export function buildChannels(o: ResolvedDeviceOptions): SimChannel[] {
  const ids = o.channelIds ?? defaultChannelIds(o.deviceId, o.channels);
  return ids.map((id, i) => ({ id, name: `${o.name}通道${i + 1}` }));
}

/** Catalog items as a real IPC/NVR reports them: channels under the device, status ON, PTZ dome. */
export function catalogItems(
  o: ResolvedDeviceOptions,
  channels: readonly SimChannel[],
  extra: { sipPort: number; event?: string },
): CatalogItem[] {
  return channels.map((ch, i) => {
    const item: CatalogItem = {
      deviceId: ch.id,
      name: ch.name,
      manufacturer: o.manufacturer,
      model: o.model,
      owner: 'Owner',
      civilCode: o.deviceId.slice(0, 6),
      address: `模拟地址${i + 1}号`,
      parental: '0',
      parentId: o.deviceId,
      safetyWay: '0',
      registerWay: '1',
      secrecy: '0',
      ipAddress: o.localHost,
      port: String(extra.sipPort),
      status: 'ON',
      longitude: (116.397 + i * 0.001).toFixed(6),
      latitude: (39.908 + i * 0.001).toFixed(6),
      ptzType: '1',
    };
    if (extra.event !== undefined) item.event = extra.event;
    return item;
  });
}

export interface RecordSearch {
  channel: SimChannel;
  start: Date;
  end: Date;
  /** `Type` of the query (time/alarm/manual/all); records carry it back, `time` for `all`. */
  type?: string | undefined;
}

/**
 * Back-to-back record files of `recordSegmentS` seconds covering [start, end), at most `maxRecords`;
 * the last one is cut at `end`. Nothing for an empty or inverted range.
 */
export function syntheticRecords(o: ResolvedDeviceOptions, q: RecordSearch): RecordItem[] {
  const out: RecordItem[] = [];
  const segmentMs = o.recordSegmentS * 1000;
  const type = q.type === undefined || q.type === 'all' ? 'time' : q.type;
  for (let t = q.start.getTime(); t < q.end.getTime() && out.length < o.maxRecords; t += segmentMs) {
    const from = new Date(t);
    const to = new Date(Math.min(t + segmentMs, q.end.getTime()));
    const stamp = formatGbTime(from, o.utcOffsetMinutes).replace(/\D/g, '');
    out.push({
      deviceId: q.channel.id,
      name: q.channel.name,
      filePath: `/record/${q.channel.id}/${stamp}.ps`,
      address: 'sim',
      startTime: formatGbTime(from, o.utcOffsetMinutes),
      endTime: formatGbTime(to, o.utcOffsetMinutes),
      secrecy: '0',
      type,
      // ~2 Mbit/s
      fileSize: String(Math.round(((to.getTime() - from.getTime()) / 1000) * 256 * 1024)),
    });
  }
  return out;
}

/** Consecutive pages of at most `size` items (one empty page for none, like paginateCatalog). */
export function pages<T>(items: readonly T[], size: number): T[][] {
  if (items.length === 0) return [[]];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
