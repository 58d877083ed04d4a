/**
 * Paced sending of catalog pages: one MESSAGE after the other, a pause between them, so a large
 * catalog does not arrive as a burst of datagrams the upstream drops. Stops at the first failure
 * (the upstream is likely gone; it will query again) and when the signal aborts (leadership lost).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { CascadeError, CascadeSendError } from '../errors.ts';

/** Between two pages. Small: the pause only has to keep the upstream's receive buffer from overflowing. */
export const DEFAULT_PAGE_INTERVAL_MS = 50;

export interface SendPagesOptions {
  /** Pause between two pages. Default 50 ms. */
  readonly intervalMs?: number;
  /** Stops before the next page; the promise then resolves with `aborted: true`. */
  readonly signal?: AbortSignal;
  /** Injected in unit tests. Default: a timer. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface SendPagesResult {
  readonly sent: number;
  readonly aborted: boolean;
}

/**
 * Calls `send(page, index)` for each page in order, waiting for each and pausing `intervalMs` in
 * between. Rejects with CascadeSendError (carrying how many pages went out) when a send fails.
 */
export async function sendCatalogPages(
  pages: readonly Buffer[],
  send: (page: Buffer, index: number) => Promise<unknown>,
  opts: SendPagesOptions = {},
): Promise<SendPagesResult> {
  const intervalMs = opts.intervalMs ?? DEFAULT_PAGE_INTERVAL_MS;
  if (!Number.isFinite(intervalMs) || intervalMs < 0) throw new CascadeError('CASCADE_ERR_ARGUMENT', 'page interval must be >= 0 ms');
  const sleep = opts.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  // a function, not a property read: the signal changes while this awaits
  const aborted = (): boolean => opts.signal?.aborted === true;
  let sent = 0;
  for (const [index, page] of pages.entries()) {
    if (aborted()) return { sent, aborted: true };
    if (index > 0 && intervalMs > 0) {
      try {
        await sleep(intervalMs, opts.signal);
      } catch (err) {
        if (aborted()) return { sent, aborted: true };
        throw err;
      }
      if (aborted()) return { sent, aborted: true };
    }
    try {
      await send(page, index);
    } catch (err) {
      throw new CascadeSendError(sent, { cause: err });
    }
    sent++;
  }
  return { sent, aborted: false };
}
