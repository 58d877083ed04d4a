// In-process DeviceKeyIndex: standalone mode, and the local copy inside the Redis adapter. Expiry is
// judged by the injected clock when an entry is read; a sweep every `sweepEvery` writes keeps
// abandoned entries from accumulating.
import type { Clock } from '../core/clock.ts';
import type { DeviceId } from '../devices/device.types.ts';
import type { DeviceKeyIndex } from './device-index.port.ts';

export interface MemoryDeviceKeyIndex extends DeviceKeyIndex {
  /** Synchronous read of a live entry. */
  peek(key: string): DeviceId | null;
  readonly size: number;
}

export function createMemoryDeviceKeyIndex(clock: Clock, sweepEvery = 1024): MemoryDeviceKeyIndex {
  const entries = new Map<string, { deviceId: DeviceId; expiresAt: number }>();
  let writes = 0;

  const peek = (key: string): DeviceId | null => {
    const e = entries.get(key);
    if (e === undefined) return null;
    if (e.expiresAt <= clock.now()) {
      entries.delete(key);
      return null;
    }
    return e.deviceId;
  };
  const sweep = (): void => {
    const now = clock.now();
    for (const [key, e] of entries) if (e.expiresAt <= now) entries.delete(key);
  };

  return {
    peek,
    get size() {
      return entries.size;
    },
    async remember(key, deviceId, ttlMs) {
      if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`index TTL must be positive, got ${ttlMs}`);
      entries.set(key, { deviceId, expiresAt: clock.now() + ttlMs });
      if (++writes % sweepEvery === 0) sweep();
    },
    deviceOf: async (key) => peek(key),
    async forget(key) {
      entries.delete(key);
    },
    async close() {
      entries.clear();
    },
  } satisfies MemoryDeviceKeyIndex;
}
