// One catalog query's answer (GB/T 28181-2016 §9.5, §A.2.6): the device sends one or more Response
// MESSAGEs, each repeating the total `SumNum` and carrying a page of items. Items are deduplicated by
// id (a device may resend a page); the answer is complete when every announced item arrived. A wait
// that ends early keeps what arrived, flagged incomplete. Pure: no I/O, no clock.
import type { CatalogItem, CatalogResponse } from '@vms/gb28181';
import type { Assembly } from './pending-queries.ts';

export interface CatalogAnswer {
  /** Every announced item arrived. */
  readonly complete: boolean;
  /** SumNum announced by the device. */
  readonly total: number | null;
  readonly items: readonly CatalogItem[];
}

export interface CatalogAssembly extends Assembly<CatalogResponse, CatalogAnswer> {
  readonly total: number | null;
  readonly received: number;
}

/**
 * `maxItems` bounds what one answer may hold (SPEC SEC-3: the device's channel cap): items with new
 * ids past it are dropped, so a device announcing a huge SumNum cannot make us buffer without end;
 * such an answer never completes and ends on the wait's timeout, keeping what fit.
 */
export function createCatalogAssembly(maxItems = Number.POSITIVE_INFINITY): CatalogAssembly {
  const items = new Map<string, CatalogItem>();
  let total: number | null = null;
  let pages = 0;
  const answer = (complete: boolean): CatalogAnswer => ({ complete, total, items: [...items.values()] });
  return {
    add(response) {
      pages++;
      // The first announcement counts: a device that changes SumNum mid-answer gets the timeout path.
      total ??= response.sumNum;
      for (const item of response.items) if (items.size < maxItems || items.has(item.deviceId)) items.set(item.deviceId, item);
      return items.size >= total;
    },
    partial: () => (pages > 0 ? answer(false) : undefined),
    result: () => answer(true),
    get total() {
      return total;
    },
    get received() {
      return items.size;
    },
  };
}
