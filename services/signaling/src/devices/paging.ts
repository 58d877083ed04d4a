import type { Page, PageRequest } from './device.types.ts';

/** Page sizes are clamped here so both stores page identically. */
export const MAX_PAGE_SIZE = 1000;

export function normalizePage(request: PageRequest): PageRequest {
  const page = Number.isInteger(request.page) && request.page >= 1 ? request.page : 1;
  const size = Number.isInteger(request.size) && request.size >= 1 ? Math.min(request.size, MAX_PAGE_SIZE) : 20;
  return { page, size };
}

export const offsetOf = (p: PageRequest): number => (p.page - 1) * p.size;

export function pageOf<T>(sorted: readonly T[], request: PageRequest): Page<T> {
  const p = normalizePage(request);
  const start = offsetOf(p);
  return { items: sorted.slice(start, start + p.size), total: sorted.length, page: p.page, size: p.size };
}
