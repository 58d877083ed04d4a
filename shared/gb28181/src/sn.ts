/**
 * Command serial numbers (`SN`, GB/T 28181-2016 §A.2.1): the only key that matches a device's
 * Response MESSAGE to the query that caused it (STYLE §8). A per-instance counter, not a random
 * number in 1..1000 whose collisions mis-route answers. Pure: no clock, no randomness; the caller
 * seeds it (e.g. from persisted state or the start time) and owns the instance.
 */
import { GbArgumentError } from './errors.ts';

/** Devices commonly parse SN into a signed 32-bit integer; wrap before that overflows. */
export const SN_MAX = 0x7fffffff;

export interface SnGenerator {
  /** The next SN; strictly increasing until SN_MAX (or `max`), then wraps to 1. */
  next(): number;
  /** The value the next call to `next()` returns, without consuming it. */
  peek(): number;
}

export function createSnGenerator(opts: { seed?: number; max?: number } = {}): SnGenerator {
  const max = opts.max ?? SN_MAX;
  const seed = opts.seed ?? 1;
  if (!Number.isSafeInteger(max) || max < 1) throw new GbArgumentError('SN max must be a positive integer');
  if (!Number.isSafeInteger(seed) || seed < 1 || seed > max) throw new GbArgumentError('SN seed must be in 1..max');
  let current = seed;
  return {
    next() {
      const sn = current;
      current = current >= max ? 1 : current + 1;
      return sn;
    },
    peek: () => current,
  };
}
