// DeviceKeyIndex on Redis (cluster mode): one key per entry, `<prefix>{<key>}`, value = device id,
// written with one `SET … PX` (STYLE 4: value and TTL in one command). This instance's own entries are
// also kept in a local index, read first: the owner resolves its own keys without a round trip and
// still resolves them while Redis is down (FAIL-3).
import { OwnershipUnavailableError, StoreClosedError, type RedisClient } from '@vms/cluster';
import type { Clock } from '../core/clock.ts';
import { createMemoryDeviceKeyIndex } from './device-index.memory.ts';
import type { DeviceKeyIndex } from './device-index.port.ts';

export interface RedisDeviceKeyIndexOptions {
  readonly client: RedisClient;
  /** e.g. `vms:session:` or `vms:sn:`. */
  readonly prefix: string;
  readonly clock: Clock;
}

export function createRedisDeviceKeyIndex(o: RedisDeviceKeyIndexOptions): DeviceKeyIndex {
  const local = createMemoryDeviceKeyIndex(o.clock);
  const key = (k: string): string => `${o.prefix}{${k}}`;
  let closed = false;
  const run = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    if (closed) throw new StoreClosedError('device key index is closed');
    try {
      return await fn();
    } catch (err) {
      throw new OwnershipUnavailableError(`${o.prefix}${what}: Redis unavailable`, { cause: err });
    }
  };

  return {
    async remember(k, deviceId, ttlMs) {
      await local.remember(k, deviceId, Math.round(ttlMs));
      await run('remember', () => o.client.set(key(k), deviceId, 'PX', Math.round(ttlMs)));
    },
    async deviceOf(k) {
      const mine = local.peek(k);
      if (mine !== null) return mine;
      return run('deviceOf', () => o.client.get(key(k)));
    },
    async forget(k) {
      await local.forget(k);
      await run('forget', () => o.client.del(key(k)));
    },
    async close() {
      closed = true;
      await local.close();
    },
  } satisfies DeviceKeyIndex;
}
