/**
 * Where destination health lives (SPEC §10 health): one record per destination, changed only through
 * `apply`, which runs the pure state machine (health.ts) on the stored record atomically, so probes and
 * business reports of every instance count against one state and all instances read the same answer.
 * Domain types only (STYLE §4).
 */
import type { DestinationHealth, HealthEvent, HealthPolicy } from './health.ts';

export interface HealthStore {
  /** Applies one event to a destination's stored health; returns the health after it. */
  apply(destinationId: string, event: HealthEvent, now: number, policy: HealthPolicy): Promise<DestinationHealth>;
  /** Every stored record (destinations never reported on are absent: they are active). */
  all(): Promise<Map<string, DestinationHealth>>;
  /** Drops the records of destinations no longer in any table. */
  forget(destinationIds: readonly string[]): Promise<void>;
}
