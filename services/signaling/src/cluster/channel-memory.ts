// Which device a channel belongs to, remembered for a moment on the instance that routes requests by
// channelId (SPEC ROUTE-1): PTZ, live view, record queries and snapshots name a channel, and an
// operator's PTZ sequence names the same one many times a second. The owner-routing hook fills it from
// its database lookup; the HTTP edge (edge-routing.ts) reads it so those requests can be forwarded
// before fastify runs. An entry lives as long as an owner-cache entry (OWNER_CACHE_TTL_MS from the
// lookup): a channel moved to another device (catalog change) is routed by its old device at most that
// long, the same bound a moved device has. Bounded: the oldest entry goes first.
import type { Clock } from '../core/clock.ts';
import type { DeviceId } from '../devices/device.types.ts';
import { BoundedTtlMap } from './bounded-ttl-map.ts';
import { OWNER_CACHE_MAX_ENTRIES, OWNER_CACHE_TTL_MS } from './owner-cache.ts';

export class ChannelMemory {
  readonly #entries: BoundedTtlMap<DeviceId>;

  constructor(o: { readonly clock: Clock; readonly ttlMs?: number; readonly maxEntries?: number }) {
    this.#entries = new BoundedTtlMap(o.clock, o.ttlMs ?? OWNER_CACHE_TTL_MS, o.maxEntries ?? OWNER_CACHE_MAX_ENTRIES);
  }

  /** The device of `channelId`, if looked up less than ttlMs ago. */
  get(channelId: string): DeviceId | undefined {
    return this.#entries.get(channelId);
  }

  /** `deviceId` was read from the database for `channelId` just now. */
  remember(channelId: string, deviceId: DeviceId): void {
    this.#entries.set(channelId, deviceId);
  }

  get size(): number {
    return this.#entries.size;
  }
}
