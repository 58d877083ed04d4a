/**
 * Embedded OwnershipStore for standalone mode (no Redis configured, SPEC §2 / ROUTE-8): a map with
 * expiry judged by the injected clock, so unit tests control TTLs exactly.
 */
import { systemClock, type Clock } from './clock.ts';
import { StoreClosedError } from './errors.ts';
import { assertTtl, type OwnershipClaim, type OwnershipMove, type OwnershipStore } from './ownership.port.ts';

export interface MemoryOwnershipOptions {
  clock?: Clock;
}

export function createMemoryOwnershipStore(opts: MemoryOwnershipOptions = {}): OwnershipStore {
  const clock = opts.clock ?? systemClock;
  const entries = new Map<string, { owner: string; expiresAt: number }>();
  const watchers = new Set<(move: OwnershipMove) => void>();
  let closed = false;

  const open = (): void => {
    if (closed) throw new StoreClosedError('ownership store is closed');
  };
  const live = (deviceId: string): string | null => {
    const e = entries.get(deviceId);
    if (e === undefined) return null;
    if (e.expiresAt <= clock.now()) {
      entries.delete(deviceId); // OWN-2: an expired claim is gone, like a Redis key
      return null;
    }
    return e.owner;
  };
  const put = (deviceId: string, instanceId: string, ttlMs: number): void => {
    entries.set(deviceId, { owner: instanceId, expiresAt: clock.now() + ttlMs });
  };
  /** A claim: overwrites, and announces a move (OWN-4) after the caller's turn, as a published notice arrives. */
  const claimOne = (deviceId: string, instanceId: string, ttlMs: number): void => {
    const previousOwner = live(deviceId);
    put(deviceId, instanceId, ttlMs);
    if (previousOwner === null || previousOwner === instanceId || watchers.size === 0) return;
    const move: OwnershipMove = { deviceId, newOwner: instanceId, previousOwner };
    queueMicrotask(() => {
      for (const watcher of watchers) watcher(move);
    });
  };

  return {
    async claim(deviceId, instanceId, ttlMs) {
      open();
      assertTtl(ttlMs);
      claimOne(deviceId, instanceId, ttlMs);
    },
    async claimIfVacant(deviceId, instanceId, ttlMs) {
      open();
      assertTtl(ttlMs);
      const owner = live(deviceId);
      if (owner !== null) return owner;
      put(deviceId, instanceId, ttlMs);
      return instanceId;
    },
    async claimMany(claims: readonly OwnershipClaim[], instanceId) {
      open();
      for (const c of claims) assertTtl(c.ttlMs);
      for (const c of claims) claimOne(c.deviceId, instanceId, c.ttlMs);
    },
    async renewMany(deviceIds, instanceId, ttlMs) {
      open();
      assertTtl(ttlMs);
      const moved = new Map<string, string>();
      for (const id of deviceIds) {
        const owner = live(id);
        if (owner === null || owner === instanceId) put(id, instanceId, ttlMs);
        else moved.set(id, owner); // OWN-4: never over another instance's claim
      }
      return moved;
    },
    async ownerOf(deviceId) {
      open();
      return live(deviceId);
    },
    async ownersOf(deviceIds) {
      open();
      const out = new Map<string, string>();
      for (const id of deviceIds) {
        const owner = live(id);
        if (owner !== null) out.set(id, owner);
      }
      return out;
    },
    async releaseIfOwner(deviceId, instanceId) {
      open();
      // SPEC OWN-3: delete only if still ours
      if (live(deviceId) !== instanceId) return false;
      entries.delete(deviceId);
      return true;
    },
    watchMoves(listener) {
      open();
      const watcher = (move: OwnershipMove): void => listener(move);
      watchers.add(watcher);
      return () => watchers.delete(watcher);
    },
    async close() {
      closed = true;
      entries.clear();
      watchers.clear();
    },
  } satisfies OwnershipStore;
}
