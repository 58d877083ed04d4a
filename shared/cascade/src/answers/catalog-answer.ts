/**
 * The catalog an upstream platform sees (SPEC CASC-2; GB/T 28181-2016 §9.5, §A.2.6): the channels
 * shared with it, placed under the platform's catalog group (or directly under our id), answered in
 * pages that all repeat the query's SN and the total SumNum. Pure: channel data comes in, MANSCDP
 * bytes go out; sending (and its pacing) is the caller's, see sendCatalogPages.
 */
import { buildCatalogResponsePages, type CatalogItem, type ManscdpHeader } from '@vms/gb28181';
import type { ChannelKey, SharedChannel, UpstreamPlatform } from '../platform/platform.ts';

/** Type code (digits 11-13) of a business group (Annex D, Table D.1). */
const BUSINESS_GROUP_TYPE = '215';

export interface CatalogAnswerOptions {
  /** Items per Response MESSAGE. Default @vms/gb28181's DEFAULT_CATALOG_PAGE_SIZE. */
  readonly pageSize?: number;
}

/** The catalog item for the platform's group, when it has one: sent before the channels. */
export function catalogGroupItem(p: UpstreamPlatform): CatalogItem | null {
  const groupId = p.catalog.groupId;
  if (groupId === null) return null;
  const item: CatalogItem = { deviceId: groupId, name: p.catalog.groupName ?? groupId };
  // §A.2.6: a virtual organisation (216) names its parent; a business group (215) hangs at the root
  if (groupId.slice(10, 13) !== BUSINESS_GROUP_TYPE) item.parentId = p.localId;
  return item;
}

/**
 * A channel as this platform must see it: parent = the share's own ParentID, else the platform's
 * group, else our id (the device that reported it is not in the upstream's catalog); business
 * group = the share's own, else the platform's when that is a business group. The device password
 * and any notify event are never passed on.
 */
export function placeChannel(p: UpstreamPlatform, share: Pick<SharedChannel, 'catalogGroupId' | 'parentId'>, item: CatalogItem): CatalogItem {
  const { event: _event, password: _password, businessGroupId: _ownGroup, ...rest } = item;
  const out: CatalogItem = { ...rest, parentId: share.parentId ?? p.catalog.groupId ?? p.localId };
  const platformGroup = p.catalog.groupId !== null && p.catalog.groupId.slice(10, 13) === BUSINESS_GROUP_TYPE ? p.catalog.groupId : null;
  const group = share.catalogGroupId ?? platformGroup;
  if (group !== null) out.businessGroupId = group;
  return out;
}

/**
 * Every item of the platform's catalog, in a stable order: the group item, then the shared channels
 * in the order given. Shares whose channel is unknown (deleted, not reported yet) are left out.
 */
export function catalogItemsForPlatform(
  p: UpstreamPlatform,
  shared: readonly SharedChannel[],
  channelOf: (key: ChannelKey) => CatalogItem | undefined,
): CatalogItem[] {
  const items: CatalogItem[] = [];
  const group = catalogGroupItem(p);
  if (group !== null) items.push(group);
  for (const share of shared) {
    const item = channelOf(share);
    if (item !== undefined) items.push(placeChannel(p, share, item));
  }
  return items;
}

/** The Response/Catalog MESSAGE bodies answering `query` (SN and DeviceID echoed), in the platform's charset. */
export function buildCatalogAnswer(p: UpstreamPlatform, query: ManscdpHeader, items: readonly CatalogItem[], opts: CatalogAnswerOptions = {}): Buffer[] {
  return buildCatalogResponsePages({ sn: query.sn, deviceId: query.deviceId }, items, {
    charset: p.charset,
    ...(opts.pageSize === undefined ? {} : { pageSize: opts.pageSize }),
  });
}
