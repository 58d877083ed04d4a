// Catalog items (GB/T 28181-2016 §A.2.6 itemType) as stored channels. Pure mapping; values keep the
// device's spelling except the fields the API types (status, parental, coordinates, PTZ type).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isStatusOnline, type CatalogItem } from '@vms/gb28181';
import type { ChannelId, ChannelInput } from '../devices/device.types.ts';

/** Item fields without a column, kept verbatim in `extra` under their GB tag names. */
const EXTRA_FIELDS: readonly (readonly [keyof CatalogItem, string])[] = [
  ['block', 'Block'],
  ['businessGroupId', 'BusinessGroupID'],
  ['safetyWay', 'SafetyWay'],
  ['registerWay', 'RegisterWay'],
  ['certNum', 'CertNum'],
  ['certifiable', 'Certifiable'],
  ['errCode', 'ErrCode'],
  ['endTime', 'EndTime'],
  ['secrecy', 'Secrecy'],
  ['ipAddress', 'IPAddress'],
  ['port', 'Port'],
  ['positionType', 'PositionType'],
  ['roomType', 'RoomType'],
  ['useType', 'UseType'],
  ['supplyLightType', 'SupplyLightType'],
  ['directionType', 'DirectionType'],
  ['resolution', 'Resolution'],
  ['downloadSpeed', 'DownloadSpeed'],
  ['svcSpaceSupportMode', 'SVCSpaceSupportMode'],
  ['svcTimeSupportMode', 'SVCTimeSupportMode'],
  // `password` is deliberately not kept: it is the channel's own credential.
];

const text = (v: string | undefined): string | null => {
  const t = v?.trim();
  return t === undefined || t === '' ? null : t;
};

const decimal = (v: string | undefined): number | null => {
  const t = text(v);
  if (t === null) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
};

const integer = (v: string | undefined): number | null => {
  const n = decimal(v);
  return n !== null && Number.isInteger(n) ? n : null;
};

export function channelFromItem(item: CatalogItem, statusOverride?: 'ON' | 'OFF'): ChannelInput {
  const extra: Record<string, string> = {};
  for (const [field, tag] of EXTRA_FIELDS) {
    const v = item[field];
    if (typeof v === 'string' && v !== '') extra[tag] = v;
  }
  for (const [tag, v] of Object.entries(item.extra ?? {})) if (typeof v === 'string' && extra[tag] === undefined) extra[tag] = v;
  return {
    channelId: item.deviceId,
    name: text(item.name),
    manufacturer: text(item.manufacturer),
    model: text(item.model),
    owner: text(item.owner),
    civilCode: text(item.civilCode),
    address: text(item.address),
    parentId: text(item.parentId),
    parental: item.parental?.trim() === '1',
    status: statusOverride ?? (isStatusOnline(item.status) ? 'ON' : 'OFF'),
    longitude: decimal(item.longitude),
    latitude: decimal(item.latitude),
    ptzType: integer(item.ptzType),
    extra,
  };
}

/** Items mapped per turn of the event loop by channelsFromItems. */
export const ITEMS_PER_TURN = 1000;

/**
 * A whole answer's items as channels, ITEMS_PER_TURN at a time with a turn of the event loop between:
 * a capped catalog (50,000 items) mapped in one go held the loop for a third of a second and more on a
 * loaded machine, /healthz and every other request with it (SPEC SEC-3: at most 50 ms per input).
 */
export async function channelsFromItems(items: readonly CatalogItem[]): Promise<ChannelInput[]> {
  const out: ChannelInput[] = [];
  for (let i = 0; i < items.length; i += ITEMS_PER_TURN) {
    if (i > 0) await nextTurn();
    const end = Math.min(items.length, i + ITEMS_PER_TURN);
    for (let k = i; k < end; k++) out.push(channelFromItem(items[k] as CatalogItem));
  }
  return out;
}

export interface CatalogNotifyChanges {
  /** ADD / UPDATE (or no event): the items as reported. */
  readonly upserts: ChannelInput[];
  /** ON / OFF / VLOST / DEFECT: only the status changes; the caller keeps the stored fields. */
  readonly statusChanges: { readonly item: CatalogItem; readonly status: 'ON' | 'OFF' }[];
  /** DEL. */
  readonly removed: ChannelId[];
}

/** Catalog Notify (§9.11, §A.2.5) events sorted by what they do to the stored channels. */
export function changesFromNotify(items: readonly CatalogItem[]): CatalogNotifyChanges {
  const out: CatalogNotifyChanges = { upserts: [], statusChanges: [], removed: [] };
  for (const item of items) {
    switch (item.event) {
      case 'DEL':
        out.removed.push(item.deviceId);
        break;
      case 'ON':
        out.statusChanges.push({ item, status: 'ON' });
        break;
      case 'OFF':
      case 'VLOST':
      case 'DEFECT':
        out.statusChanges.push({ item, status: 'OFF' });
        break;
      default:
        out.upserts.push(channelFromItem(item));
    }
  }
  return out;
}
