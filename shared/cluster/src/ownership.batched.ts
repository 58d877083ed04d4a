/**
 * An OwnershipStore whose claim() goes through a ClaimBatcher (SPEC OWN-5), so the keepalive path
 * can call `claim()` per device and still cost one round trip per window. Reads and releases go
 * straight to the wrapped store; a release first drains earlier claims so that "keepalive then
 * unregister" can never end with the claim re-created after the delete (OWN-3).
 */
import { ClaimBatcher } from './claim-batcher.ts';
import type { Clock } from './clock.ts';
import { StoreClosedError } from './errors.ts';
import { assertTtl, type OwnershipStore } from './ownership.port.ts';

export interface ClaimBatchingOptions {
  maxDelayMs?: number;
  maxBatch?: number;
  clock?: Clock;
}

/** close() closes the batcher and then the wrapped store. */
export function withClaimBatching(store: OwnershipStore, opts: ClaimBatchingOptions = {}): OwnershipStore {
  const batcher = new ClaimBatcher({
    sink: (claims, instanceId) => store.claimMany(claims, instanceId),
    maxDelayMs: opts.maxDelayMs,
    maxBatch: opts.maxBatch,
    clock: opts.clock,
  });
  let closed = false;
  const open = (): void => {
    if (closed) throw new StoreClosedError('ownership store is closed');
  };
  return {
    async claim(deviceId, instanceId, ttlMs) {
      assertTtl(ttlMs); // one bad TTL must not fail the whole batch it would join
      return batcher.claim(deviceId, instanceId, ttlMs);
    },
    claimIfVacant: (deviceId, instanceId, ttlMs) => store.claimIfVacant(deviceId, instanceId, ttlMs),
    claimMany: (claims, instanceId) => store.claimMany(claims, instanceId),
    renewMany: (deviceIds, instanceId, ttlMs) => store.renewMany(deviceIds, instanceId, ttlMs),
    ownerOf: (deviceId) => store.ownerOf(deviceId),
    watchMoves: (listener) => store.watchMoves(listener),
    ownersOf: (deviceIds) => store.ownersOf(deviceIds),
    async releaseIfOwner(deviceId, instanceId) {
      open();
      await batcher.drain();
      return store.releaseIfOwner(deviceId, instanceId);
    },
    async close() {
      if (closed) return;
      closed = true;
      batcher.close();
      await store.close();
    },
  } satisfies OwnershipStore;
}
