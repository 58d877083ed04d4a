// A map whose entries live `ttlMs` from when they were set and that holds at most `maxEntries` (the
// oldest set goes first). The owner cache and the channel memory both remember lookups this way.
import type { Clock } from '../core/clock.ts';

interface Entry<V> {
  readonly value: V;
  readonly expiresAt: number;
}

export class BoundedTtlMap<V> {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #entries = new Map<string, Entry<V>>();

  constructor(clock: Clock, ttlMs: number, maxEntries: number) {
    if (!(ttlMs >= 0) || !(maxEntries >= 1)) throw new RangeError('ttlMs >= 0 and maxEntries >= 1');
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#max = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value, if set less than ttlMs ago; an expired entry is dropped. */
  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if (this.#clock.now() < e.expiresAt) return e.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Remembered for ttlMs from now (nothing with ttl 0). */
  set(key: string, value: V): void {
    if (this.#ttlMs === 0) return;
    this.#entries.delete(key); // re-inserted last: the oldest entry is first in the map
    this.#entries.set(key, { value, expiresAt: this.#clock.now() + this.#ttlMs });
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  /** True when the key was present (expired or not). */
  has(key: string): boolean {
    return this.#entries.has(key);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
