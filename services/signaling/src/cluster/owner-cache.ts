// A short memory of owner lookups (SPEC ROUTE-2, OWN-4), so a routed request does not cost a Redis
// round trip when the same device was looked up a moment ago: an operator's PTZ sequence, a player
// polling a session, a bench. Both the owner (owner == self) and the other instances use it.
//
// Staleness is bounded, and that bound is the contract (tested in owner-cache.test.ts,
// owner-routing.test.ts and test/integration/routing-owner-cache.test.ts):
//  - an entry lives `ttlMs` (OWNER_CACHE_TTL_MS, 1 s) from the Redis read that produced it, so after a
//    device moves (OWN-4: another instance's claim overwrites the key), no instance routes a request
//    for it by the old owner more than ttlMs after the new claim is in Redis;
//  - this instance's own ownership changes take effect at once: a device that starts or renews a
//    lease here after a gap, or unregisters here, is forgotten when the claim / release is written; a
//    device reported moved (recorder.onMoved) is remembered with its new owner;
//  - every routing failure (owner node offline, refused, timed out, broken exchange) forgets the
//    device, so the next request reads Redis again;
//  - "no owner" is never remembered: a device that comes online is routable with its first claim;
//  - FAIL-3: nothing is answered from memory while the ownership store is not connected, and an
//    outage empties the cache (the wiring clears it on every Redis connection error), so during an
//    outage routing behaves exactly as without a cache (own leases → local, others → 4601).
// Concurrent misses for one device share one read. Bounded: the oldest entry goes first.
import type { Clock } from '../core/clock.ts';
import { BoundedTtlMap } from './bounded-ttl-map.ts';

/** SPEC OWN-4 / ROUTE-2: longest time a cached owner is used after the Redis read that produced it. */
export const OWNER_CACHE_TTL_MS = 1000;
/** Devices remembered at most (about 100 bytes each). */
export const OWNER_CACHE_MAX_ENTRIES = 10_000;

export interface OwnerCacheOptions {
  readonly clock: Clock;
  /** Default OWNER_CACHE_TTL_MS. */
  readonly ttlMs?: number;
  /** Default OWNER_CACHE_MAX_ENTRIES. */
  readonly maxEntries?: number;
  /** Is the ownership store connected? While it is not, the cache answers nothing and is emptied. */
  readonly available?: () => boolean;
}

export class OwnerCache {
  readonly #ttlMs: number;
  readonly #available: () => boolean;
  readonly #entries: BoundedTtlMap<string>;
  /** Reads in flight, shared by concurrent misses; forget() detaches them so they store nothing. */
  readonly #reads = new Map<string, Promise<string | null>>();

  constructor(o: OwnerCacheOptions) {
    this.#ttlMs = o.ttlMs ?? OWNER_CACHE_TTL_MS;
    this.#available = o.available ?? (() => true);
    const max = o.maxEntries ?? OWNER_CACHE_MAX_ENTRIES;
    if (!(this.#ttlMs >= 0) || !(max >= 1)) throw new RangeError('owner cache: ttlMs >= 0 and maxEntries >= 1');
    this.#entries = new BoundedTtlMap(o.clock, this.#ttlMs, max);
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The remembered owner, if read less than ttlMs ago. */
  get(deviceId: string): string | undefined {
    if (!this.#entries.has(deviceId)) return undefined;
    if (!this.#available()) {
      this.clear();
      return undefined;
    }
    return this.#entries.get(deviceId);
  }

  /**
   * The remembered owner, or `read()` (shared with concurrent callers for the same device). A found
   * owner is remembered for ttlMs from the moment the read completes; null and failures are not.
   */
  lookup(deviceId: string, read: () => Promise<string | null>): Promise<string | null> {
    const hit = this.get(deviceId);
    if (hit !== undefined) return Promise.resolve(hit);
    let pending = this.#reads.get(deviceId);
    if (pending === undefined) {
      const p = read().then(
        (owner) => {
          if (this.#reads.get(deviceId) === p) {
            this.#reads.delete(deviceId);
            if (owner !== null) this.remember(deviceId, owner);
          }
          return owner;
        },
        (err: unknown) => {
          if (this.#reads.get(deviceId) === p) this.#reads.delete(deviceId);
          throw err;
        },
      );
      pending = p;
      this.#reads.set(deviceId, p);
    }
    return pending;
  }

  /** `owner` was read from the ownership store just now. */
  remember(deviceId: string, owner: string): void {
    if (!this.#available()) return;
    this.#entries.set(deviceId, owner);
  }

  /** The next lookup reads the store; a read in flight for the device stores nothing. */
  forget(deviceId: string): void {
    this.#entries.delete(deviceId);
    this.#reads.delete(deviceId);
  }

  clear(): void {
    this.#entries.clear();
    this.#reads.clear();
  }
}
