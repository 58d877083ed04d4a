// Stored channels as catalog items for an upstream (SPEC CASC-2): the reverse of
// src/sip/catalog-channels.ts. Pure. Tags kept verbatim in `extra` go back to their item fields.
import type { CatalogItem } from '@vms/gb28181';
import type { Channel } from '../devices/device.types.ts';

/** GB tag (as stored in `extra`) → item field. `Password` is never stored, so never sent. */
const EXTRA_TAGS: Readonly<Record<string, keyof CatalogItem>> = {
  Block: 'block',
  BusinessGroupID: 'businessGroupId',
  SafetyWay: 'safetyWay',
  RegisterWay: 'registerWay',
  CertNum: 'certNum',
  Certifiable: 'certifiable',
  ErrCode: 'errCode',
  EndTime: 'endTime',
  Secrecy: 'secrecy',
  IPAddress: 'ipAddress',
  Port: 'port',
  PositionType: 'positionType',
  RoomType: 'roomType',
  UseType: 'useType',
  SupplyLightType: 'supplyLightType',
  DirectionType: 'directionType',
  Resolution: 'resolution',
  DownloadSpeed: 'downloadSpeed',
  SVCSpaceSupportMode: 'svcSpaceSupportMode',
  SVCTimeSupportMode: 'svcTimeSupportMode',
};

export function itemFromChannel(c: Channel): CatalogItem {
  const item: CatalogItem = { deviceId: c.channelId, parental: c.parental ? '1' : '0', status: c.status };
  if (c.name !== null) item.name = c.name;
  if (c.manufacturer !== null) item.manufacturer = c.manufacturer;
  if (c.model !== null) item.model = c.model;
  if (c.owner !== null) item.owner = c.owner;
  if (c.civilCode !== null) item.civilCode = c.civilCode;
  if (c.address !== null) item.address = c.address;
  if (c.parentId !== null) item.parentId = c.parentId;
  if (c.longitude !== null) item.longitude = String(c.longitude);
  if (c.latitude !== null) item.latitude = String(c.latitude);
  if (c.ptzType !== null) item.ptzType = String(c.ptzType);
  const fields = item as unknown as Record<string, string>;
  for (const [tag, value] of Object.entries(c.extra)) {
    const field = EXTRA_TAGS[tag];
    if (field !== undefined) fields[field] = value;
  }
  return item;
}
