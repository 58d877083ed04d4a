/** HealthStore of one instance alone (no Redis): a Map, applied synchronously, so atomic by construction. */
import { initialHealth, stepHealth, type DestinationHealth } from './health.ts';
import type { HealthStore } from './health-store.port.ts';

export function createMemoryHealthStore(): HealthStore {
  const records = new Map<string, DestinationHealth>();
  return {
    async apply(id, event, now, policy) {
      const next = stepHealth(records.get(id) ?? initialHealth(now), event, now, policy);
      records.set(id, next);
      return next;
    },
    async all() {
      return new Map(records);
    },
    async forget(ids) {
      for (const id of ids) records.delete(id);
    },
  } satisfies HealthStore;
}
