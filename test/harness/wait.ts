/** Polling and sleeping helpers shared by every harness start-up and by tests. */
import { setTimeout as delay } from 'node:timers/promises';

export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Shown in the timeout error. */
  description?: string;
  /** Stops polling early; waitFor then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export class WaitTimeoutError extends Error {
  readonly code = 'HARNESS_ERR_WAIT_TIMEOUT';
  constructor(description: string, timeoutMs: number, readonly lastError?: unknown) {
    super(`waitFor: ${description} not met within ${timeoutMs} ms`, { cause: lastError });
    this.name = 'WaitTimeoutError';
  }
}

/**
 * Calls `fn` until it returns a value other than `false`, `undefined` or `null` (a thrown error
 * counts as "not yet"), and resolves with that value. Rejects with WaitTimeoutError, carrying the
 * last error thrown, once `timeoutMs` (default 5000) has passed.
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  opts: WaitForOptions = {},
): Promise<Exclude<T, false | null | undefined>> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const intervalMs = opts.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      const value = await fn();
      if (value !== false && value !== undefined && value !== null) {
        return value as Exclude<T, false | null | undefined>;
      }
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) throw new WaitTimeoutError(opts.description ?? 'condition', timeoutMs, lastError);
    try {
      await delay(intervalMs, undefined, { signal: opts.signal });
    } catch (err) {
      opts.signal?.throwIfAborted(); // rethrow the caller's reason rather than a bare AbortError
      throw err;
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return delay(ms);
}

/** How long `p` took to settle, and its error if it rejected (for bounds on failing calls). */
export async function timed(p: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const t0 = performance.now();
  try {
    await p;
    return { ms: performance.now() - t0, error: undefined };
  } catch (error) {
    return { ms: performance.now() - t0, error };
  }
}
