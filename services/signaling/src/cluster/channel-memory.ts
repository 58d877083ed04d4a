// Which device a channel belongs to, remembered for a moment on the instance that routes requests by
// channelId (SPEC ROUTE-1): PTZ, live view, record queries and snapshots name a channel, and an
// operator's PTZ sequence names the same one many times a second. The owner-routing hook fills it from
// its database lookup; the HTTP edge (edge-routing.ts) reads it so those requests can be forwarded
// before fastify runs. An entry lives as long as an owner-cache entry (OWNER_CACHE_TTL_MS from the
// lookup): a channel moved to another device (catalog change) is routed by its old device at most that
// long, the same bound a moved device has. Bounded: the oldest entry goes first.
import type { Clock } from '../core/clock.ts';
import type { DeviceId } from '../devices/device.types.ts';
import { OWNER_CACHE_MAX_ENTRIES, OWNER_CACHE_TTL_MS } from './owner-cache.ts';

interface Entry {
  readonly deviceId: DeviceId;
  readonly expiresAt: number;
}

export class ChannelMemory {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #entries = new Map<string, Entry>();

  constructor(o: { readonly clock: Clock; readonly ttlMs?: number; readonly maxEntries?: number }) {
    this.#clock = o.clock;
    this.#ttlMs = o.ttlMs ?? OWNER_CACHE_TTL_MS;
    this.#max = o.maxEntries ?? OWNER_CACHE_MAX_ENTRIES;
  }

  /** The device of `channelId`, if looked up less than ttlMs ago. */
  get(channelId: string): DeviceId | undefined {
    const e = this.#entries.get(channelId);
    if (e === undefined) return undefined;
    if (this.#clock.now() < e.expiresAt) return e.deviceId;
    this.#entries.delete(channelId);
    return undefined;
  }

  /** `deviceId` was read from the database for `channelId` just now. */
  remember(channelId: string, deviceId: DeviceId): void {
    if (this.#ttlMs === 0) return;
    this.#entries.delete(channelId); // re-inserted last: the oldest entry is first in the map
    this.#entries.set(channelId, { deviceId, expiresAt: this.#clock.now() + this.#ttlMs });
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  get size(): number {
    return this.#entries.size;
  }
}
