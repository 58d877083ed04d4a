/**
 * Retry helper for transient store errors (SPEC FAIL-4: node heartbeats retry). Exponential
 * back-off, sleep injected so unit tests run instantly. Non-transient errors are thrown at once.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { isTransientClusterError } from './errors.ts';

export interface RetryOptions {
  /** Total attempts including the first. Default 3. */
  attempts?: number;
  /** Delay before the 2nd attempt; doubles each time. Default 100 ms. */
  baseDelayMs?: number;
  /** Ceiling of the delay. Default 2000 ms. */
  maxDelayMs?: number;
  /** Default: transient ClusterErrors only. */
  isRetryable?: (err: unknown) => boolean;
  /** Called before each wait with the error that caused it (e.g. to log once per retry). */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  sleep?: (ms: number) => Promise<void>;
  signal?: AbortSignal;
}

export async function retryTransient<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? 3);
  const base = opts.baseDelayMs ?? 100;
  const max = opts.maxDelayMs ?? 2000;
  const isRetryable = opts.isRetryable ?? isTransientClusterError;
  const sleep = opts.sleep ?? ((ms: number) => delay(ms, undefined, { signal: opts.signal }));
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isRetryable(err) || opts.signal?.aborted === true) throw err;
      const wait = Math.min(max, base * 2 ** (attempt - 1));
      opts.onRetry?.(err, attempt, wait);
      await sleep(wait);
    }
  }
}
