/**
 * Splitting a catalog answer over several Response MESSAGEs (GB/T 28181-2016 §9.5: a device
 * may send its catalog in several messages). Every page repeats the same `SN` and the total `SumNum`;
 * `DeviceList Num` is the page's own count. Keeps each MESSAGE small enough for one UDP datagram.
 */
import { GbArgumentError } from '../errors.ts';
import type { BuildOptions } from '../manscdp.ts';
import type { CatalogItem } from './catalog-item.ts';
import { buildCatalogResponse, type CatalogResponse } from './catalog.ts';
import type { ManscdpHeader } from './common.ts';

/**
 * A fully populated item is ~0.6 KB of XML, so ten make a ~6 KB MESSAGE: one UDP datagram of the
 * size devices already handle (sample 10 is a 7.7 KB datagram), far below the 64 KiB UDP limit.
 */
export const DEFAULT_CATALOG_PAGE_SIZE = 10;

/** Pages of at most `pageSize` items, all with `sumNum = items.length`; one empty page for no items. */
export function paginateCatalog(
  header: ManscdpHeader,
  items: readonly CatalogItem[],
  pageSize: number = DEFAULT_CATALOG_PAGE_SIZE,
): CatalogResponse[] {
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new GbArgumentError('page size must be a positive integer');
  const base = { sn: header.sn, deviceId: header.deviceId, sumNum: items.length };
  if (items.length === 0) return [{ ...base, items: [] }];
  const pages: CatalogResponse[] = [];
  for (let i = 0; i < items.length; i += pageSize) pages.push({ ...base, items: items.slice(i, i + pageSize) });
  return pages;
}

export function buildCatalogResponsePages(
  header: ManscdpHeader,
  items: readonly CatalogItem[],
  opts: BuildOptions & { pageSize?: number } = {},
): Buffer[] {
  return paginateCatalog(header, items, opts.pageSize).map((page) => buildCatalogResponse(page, opts));
}
