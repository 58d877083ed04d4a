/**
 * One `<Item>` of a catalog (GB/T 28181-2016 §A.2.6 `itemType`): a device, channel, business
 * group, virtual organisation or civil area. All values stay strings exactly as sent. The camera
 * attributes of `<Info>` are flattened into the same object; many devices put `PTZType` directly
 * under `<Item>`, so both places are read, and the standard place (`<Info>`) is written.
 */
import { GbMissingFieldError } from '../errors.ts';
import { extraFields, getNode, readFields, requireText, specTags, writeFields, type FieldSpec } from '../fields.ts';
import type { ManscdpNode } from '../xml.ts';

export interface CatalogItem {
  deviceId: string;
  /** Catalog Notify only (§A.2.5): ON, OFF, VLOST, DEFECT, ADD, DEL, UPDATE. */
  event?: string;
  name?: string;
  manufacturer?: string;
  model?: string;
  owner?: string;
  civilCode?: string;
  block?: string;
  address?: string;
  parental?: string;
  parentId?: string;
  /** Business group of a virtual organisation (2016: under Info; 2022: under Item; both read). */
  businessGroupId?: string;
  safetyWay?: string;
  registerWay?: string;
  certNum?: string;
  certifiable?: string;
  errCode?: string;
  endTime?: string;
  secrecy?: string;
  ipAddress?: string;
  port?: string;
  password?: string;
  /** ON / OFF (some devices send ONLINE / OFFLINE or OK). */
  status?: string;
  longitude?: string;
  latitude?: string;
  // <Info> camera attributes
  ptzType?: string;
  positionType?: string;
  roomType?: string;
  useType?: string;
  supplyLightType?: string;
  directionType?: string;
  resolution?: string;
  downloadSpeed?: string;
  svcSpaceSupportMode?: string;
  svcTimeSupportMode?: string;
  /** Item children this package does not model (vendor extensions such as `<Online>`), kept as parsed. */
  extra?: ManscdpNode;
  /** Same, for unknown children of `<Info>`. */
  infoExtra?: ManscdpNode;
}

/** Catalog change events of the catalog Notify (§9.11, §A.2.5). */
export const CATALOG_EVENTS = ['ON', 'OFF', 'VLOST', 'DEFECT', 'ADD', 'DEL', 'UPDATE'] as const;
export type CatalogEvent = (typeof CATALOG_EVENTS)[number];

const ITEM_FIELDS: FieldSpec<CatalogItem> = [
  ['deviceId', 'DeviceID'],
  ['event', 'Event'],
  ['name', 'Name'],
  ['manufacturer', 'Manufacturer'],
  ['model', 'Model'],
  ['owner', 'Owner'],
  ['civilCode', 'CivilCode'],
  ['block', 'Block'],
  ['address', 'Address'],
  ['parental', 'Parental'],
  ['parentId', 'ParentID'],
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
  ['password', 'Password'],
  ['status', 'Status'],
  ['longitude', 'Longitude'],
  ['latitude', 'Latitude'],
];

const INFO_FIELDS: FieldSpec<CatalogItem> = [
  ['ptzType', 'PTZType'],
  ['positionType', 'PositionType'],
  ['roomType', 'RoomType'],
  ['useType', 'UseType'],
  ['supplyLightType', 'SupplyLightType'],
  ['directionType', 'DirectionType'],
  ['resolution', 'Resolution'],
  ['downloadSpeed', 'DownloadSpeed'],
  ['svcSpaceSupportMode', 'SVCSpaceSupportMode'],
  ['svcTimeSupportMode', 'SVCTimeSupportMode'],
];

const KNOWN_ITEM_TAGS = [...specTags(ITEM_FIELDS), ...specTags(INFO_FIELDS), 'Info'];
const KNOWN_INFO_TAGS = [...specTags(INFO_FIELDS), 'BusinessGroupID'];

export function decodeCatalogItem(node: ManscdpNode): CatalogItem {
  const deviceId = requireText(node, 'DeviceID');
  const info = getNode(node, 'Info') ?? {};
  // Camera attributes: <Info> (the standard's place) wins over stray copies directly under <Item>.
  // BusinessGroupID: <Item> (2022) wins over <Info> (2016).
  const item: CatalogItem = {
    ...readFields(node, INFO_FIELDS),
    ...readFields(info, INFO_FIELDS),
    ...readFields(info, [['businessGroupId', 'BusinessGroupID']] as FieldSpec<CatalogItem>),
    ...readFields(node, ITEM_FIELDS),
    deviceId,
  };
  if (item.event !== undefined) item.event = canonicalEvent(item.event);
  const extra = extraFields(node, KNOWN_ITEM_TAGS);
  if (extra !== undefined) item.extra = extra;
  const infoExtra = extraFields(info, KNOWN_INFO_TAGS);
  if (infoExtra !== undefined) item.infoExtra = infoExtra;
  return item;
}

export function encodeCatalogItem(item: CatalogItem): ManscdpNode {
  if (item.deviceId === '') throw new GbMissingFieldError('DeviceID');
  const node = writeFields({}, item, ITEM_FIELDS);
  const info = writeFields({}, item, INFO_FIELDS);
  Object.assign(info, item.infoExtra);
  if (Object.keys(info).length > 0) node['Info'] = info;
  return Object.assign(node, item.extra);
}

function canonicalEvent(event: string): string {
  const upper = event.toUpperCase();
  return (CATALOG_EVENTS as readonly string[]).includes(upper) ? upper : event;
}

