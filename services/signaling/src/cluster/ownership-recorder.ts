// Ownership writes from the SIP side (SPEC OWN-1..5, FAIL-3). The SIP engineer's code calls this
// interface; nothing here knows SIP.
//
//   on a successful REGISTER, every Keepalive, any other device-originated request:
//       recorder.deviceSeen(deviceId)                         // sync, never throws, batched (OWN-5)
//   on unregister (Expires: 0) or device deletion:
//       await recorder.deviceGone(deviceId)                   // OWN-3 compare-and-delete, never rejects
//   at start, subscribe once:
//       recorder.onMoved(({ deviceId, newOwner }) => …)       // OWN-4: stop acting for the device
//   before sending SIP to a device on the instance's own initiative (not for an HTTP control, the
//   routing hook already decided those), optionally:
//       recorder.isLocallyOwned(deviceId)
//
// The recorder keeps a local lease per device (last seen + TTL). It backs routing while Redis is down
// (FAIL-3: requests for our own devices still run here), the node's online-device count (NODE-2), and
// the periodic check that notices a device now owned elsewhere. The same check re-writes a claim that
// vanished while the lease is still live (Redis restarted), so ownership heals before the next
// keepalive; the re-written claim keeps the lease's own expiry, never extending it (OWN-2), and is
// written only if still vacant (SET NX), never over a device that moved meanwhile (OWN-4). The routing
// hook does the same at once for a device it finds without owner (reclaimIfVacant). A move made by
// another instance's claim is heard at once from the store's move notices (watchMoves).
import type { OwnershipStore } from '@vms/cluster';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { DeviceId } from '../devices/device.types.ts';
import { batchFull, leaseAfterFailedBatch, seenAction, type RenewalPolicy } from './renewal-schedule.ts';

export interface OwnershipMoved {
  readonly deviceId: DeviceId;
  /** Node code of the instance that now holds the claim. */
  readonly newOwner: string;
}

export interface OwnershipRecorder {
  /**
   * OWN-1: REGISTER accepted, Keepalive, or any other request from the device. Renews the local lease
   * and queues `owner(deviceId) = this instance` with TTL = online window + one scan period; claims
   * made within a couple of milliseconds go to Redis in one round trip (OWN-5). O(1); never throws and
   * never waits: a failed write is logged (once per outage) and healed by the next call or check.
   * `register`: a verified REGISTER, which always writes (it establishes or moves ownership, OWN-1,
   * OWN-4); other calls skip the write within `renewAfterMs` of the last one. `at`: when the message
   * was handled, read from the recorder's clock by the caller (the keepalive path reads it once, for
   * the device store and here); default now. A claim is written at or after `at`, so a lease counted
   * from it never outlives the claim.
   */
  deviceSeen(deviceId: DeviceId, register?: boolean, at?: number): void;
  /**
   * OWN-3: the device unregistered (Expires: 0) or was deleted. Drops the local lease and deletes the
   * claim only if it still names this instance. Resolves true when a claim was deleted; never rejects.
   */
  deviceGone(deviceId: DeviceId): Promise<boolean>;
  /** Local view: seen within the TTL and not known to have moved elsewhere. */
  isLocallyOwned(deviceId: DeviceId): boolean;
  /** Devices in the local view (unordered). */
  localDevices(): DeviceId[];
  /** NODE-2: size of the local view. */
  localCount(): number;
  /**
   * OWN-4: called when a device this instance held is now owned by another instance (noticed by the
   * periodic check, a renewal, the routing hook or the store's move notice). The lease is already dropped when listeners run. Returns
   * an unsubscribe function. Listener errors are logged, never propagated.
   */
  onMoved(listener: (event: OwnershipMoved) => void): () => void;
  /**
   * The routing hook found no owner for a device: if this instance holds a live lease on it (seen on
   * its verified flow within the TTL), the claim vanished (an empty Redis restart) and is written back
   * at once, only if still vacant (SET NX, keeping the lease's own expiry, OWN-2) — so the owner does
   * not answer 4601 for its own device until the next keepalive or check. Resolves with the owner now
   * (this instance, or one that claimed meanwhile: then the device moved, OWN-4), or null when this
   * instance holds no lease or the store failed. Never rejects.
   */
  reclaimIfVacant(deviceId: DeviceId): Promise<string | null>;
  /** Used by the routing hook: the ownership store named `owner` for this device just now. */
  observeOwner(deviceId: DeviceId, owner: string): void;
  /** One pass of the moved / vanished-claim check (the timer runs it every scan period). */
  checkNow(): Promise<void>;
  /**
   * The store's connection came back after an outage: claims may have vanished (an empty Redis
   * restart) and move notices may have been lost, so a pass reading every live lease runs now.
   */
  storeReconnected(): void;
  /** Stops the timer; queued claims are flushed by the store's own close. Idempotent. */
  close(): Promise<void>;
}

export interface OwnershipRecorderOptions {
  /** Usually the batched store (`withClaimBatching`), so deviceSeen() costs one round trip per window. */
  readonly store: OwnershipStore;
  readonly instanceId: string;
  /** SPEC OWN-1: `ownershipTtlMs(...)`. */
  readonly ttlMs: number;
  /** Period of the moved / vanished-claim check; the offline-scan period is a good choice. */
  readonly checkIntervalMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** Devices per ownersOf() call during a check. Default 1000. */
  readonly checkChunk?: number;
  /**
   * OWN-1/OWN-5: a device seen again less than this long after its claim was last written is not
   * written again (its claim still has at least ttlMs − renewAfterMs to live); the lease and the claim
   * keep the same expiry (last write + ttlMs), so they never disagree, and every write gives the claim
   * exactly ttlMs (never more than SPEC's TTL). Issue 11: the keepalive path costs Redis one write per
   * device per renewAfterMs instead of one per keepalive. The price: a device that stops keeps its
   * claim at least ttlMs − renewAfterMs after its last message instead of ttlMs; when that is less
   * than the online window, other instances' routing answers "device offline" for the rest of it, and
   * the device's next message (if it was only late) writes the vacant claim back. The signaling
   * wiring sets it from `vms.cluster.owner-renew-after` (services/signaling/README.md). Default 0:
   * every call writes.
   */
  readonly renewAfterMs?: number;
  /**
   * Issue 11: a check pass reads only the devices whose claim this instance last wrote more than this
   * long ago (default 0: every live lease). A device still sending here is renewed within
   * renewAfterMs + its keepalive interval, and each renewal checks the owner itself (renewMany reports
   * a device held elsewhere), while a move by another instance's claim is heard at once from the
   * store's notice (watchMoves); so the pass is the backstop for devices that went quiet here — gone,
   * or moved while a notice was lost — and with renewAfterMs + the keepalive interval it reads almost
   * nothing in steady state. After a failed write, or `storeReconnected()`, the next pass reads all.
   */
  readonly checkAfterMs?: number;
  /**
   * OWN-5, issue 11: with renewFlushMs > 0, the renewal of a live lease (not a REGISTER, not a device
   * without a live lease, not while writes fail) waits up to this long for company and goes to the
   * store with the others in one `renewMany` (one script per 500 devices on a single Redis server),
   * which renews only claims still naming this instance or vacant and reports devices held elsewhere
   * (OWN-4: a keepalive never moves a device; the recorder stops acting for it at once). The lease and
   * the claim get their new expiry when the batch is sent (send time + ttlMs). A device is queued once
   * however often it is seen, so the queue never holds more than the live leases; one batch is in
   * flight at a time. Keep it a small part of ttlMs − renewAfterMs (the claim's least remaining life
   * when a renewal is queued). Default 0: renewals are claims written at once, like the others.
   * A batch whose write fails gives its leases back their previous expiry (renewal-schedule.ts
   * leaseAfterFailedBatch), so each device's next message renews again.
   */
  readonly renewFlushMs?: number;
  /**
   * Renewals per batch: the queue goes at once when it holds this many, not when renewFlushMs ends
   * (default 500, one script of the Redis store on a single server).
   */
  readonly renewBatchMax?: number;
  /**
   * This instance's own ownership of a device changed: a lease started (no live lease before) and its
   * claim is now written, or the device unregistered and its release is done. The routing hook's owner
   * cache forgets the device, so its next request reads the new owner (owner-cache.ts). Sync, must not
   * throw; not called for the renewals of a live lease (the keepalive path stays as it is).
   */
  readonly onLocalOwnershipChange?: (deviceId: DeviceId) => void;
}

export function createOwnershipRecorder(o: OwnershipRecorderOptions): OwnershipRecorder {
  const log = o.log.child({ component: 'ownership' });
  const chunk = o.checkChunk ?? 1000;
  const renewAfterMs = o.renewAfterMs ?? 0;
  const checkAfterMs = o.checkAfterMs ?? 0;
  const renewFlushMs = o.renewFlushMs ?? 0;
  const renewBatchMax = o.renewBatchMax ?? 500;
  const policy: RenewalPolicy = { ttlMs: o.ttlMs, renewAfterMs, batching: renewFlushMs > 0 };
  /** Live leases whose renewal waits for the next renewMany (insertion order = first seen). */
  const renewals = new Set<DeviceId>();
  let renewTimer: TimerHandle | undefined;
  /** The renewMany in flight (never rejects), or null. */
  let renewing: Promise<void> | null = null;
  /** A claim write failed (or the store reconnected) since the last pass began: the next one reads all. */
  let readAllNextCheck = false;
  /** Queued renewals of devices that had no live lease (a lapsed claim written back): the routing cache hears of them. */
  const freshRenewals = new Set<DeviceId>();
  /** deviceId → lease expiry (local clock). */
  const leases = new Map<DeviceId, number>();
  const listeners = new Set<(event: OwnershipMoved) => void>();
  let claimsFailing = false;
  let checkFailing = false;
  let timer: TimerHandle | undefined;
  let closed = false;
  let checking: Promise<void> | null = null;
  const changed = o.onLocalOwnershipChange;

  const live = (deviceId: DeviceId, now: number): boolean => {
    const until = leases.get(deviceId);
    if (until === undefined) return false;
    if (until > now) return true;
    leases.delete(deviceId); // OWN-2: an unrenewed lease lapses with the claim
    return false;
  };
  /**
   * Every live lease, read in place (a shard's whole fleet, every heartbeat: no copy of the keys, no second
   * lookup per device); lapsed ones are dropped on the way, as live() does. Deleting the entry a Map
   * iterator is on is safe.
   */
  const eachLive = (now: number, visit: (deviceId: DeviceId, until: number) => void): void => {
    for (const [id, until] of leases) {
      if (until > now) visit(id, until);
      else leases.delete(id);
    }
  };

  const claimWritten = (): void => {
    if (!claimsFailing) return;
    claimsFailing = false;
    log.info('ownership claims are being written again');
  };
  const claimFailed = (err: unknown): void => {
    readAllNextCheck = true;
    if (claimsFailing || closed) return;
    claimsFailing = true;
    log.warn({ err }, 'ownership claim failed; this instance keeps serving its devices and retries with their next message');
  };

  const moved = (deviceId: DeviceId, newOwner: string): void => {
    leases.delete(deviceId);
    log.info({ deviceId, newOwner }, 'device is now owned by another node; no longer acting for it');
    for (const listener of listeners) {
      try {
        listener({ deviceId, newOwner });
      } catch (err) {
        log.error({ err, deviceId }, 'ownership-moved listener failed');
      }
    }
  };

  /** The next batch goes after `delayMs`, unless one is scheduled already or in flight (it schedules the next). */
  const scheduleFlush = (delayMs: number): void => {
    if (renewing !== null || closed) return;
    if (delayMs === 0 && renewTimer !== undefined) {
      o.clock.clearTimeout(renewTimer);
      renewTimer = undefined;
    }
    renewTimer ??= o.clock.setTimeout(flushRenewals, delayMs);
  };

  function flushRenewals(): void {
    renewTimer = undefined;
    if (renewing !== null || renewals.size === 0) return; // the batch in flight schedules the next
    const now = o.clock.now();
    const sentUntil = now + o.ttlMs; // the claims' new expiry: now + TTL, sent below
    const ids: DeviceId[] = [];
    /** each sent device's lease before this batch, for leaseAfterFailedBatch */
    const before: (number | undefined)[] = [];
    /** sent devices that had no live lease when seen (a lapsed claim written back): the routing cache hears of them */
    let fresh: DeviceId[] | null = null;
    for (const id of renewals) {
      if (ids.length === renewBatchMax) break; // the rest go in the next batch, at once
      renewals.delete(id);
      const wasFresh = freshRenewals.size > 0 && freshRenewals.delete(id);
      if (!live(id, now)) continue; // lapsed meanwhile (released ones left the queue in deviceGone)
      if (wasFresh) (fresh ??= []).push(id);
      before.push(leases.get(id));
      leases.set(id, sentUntil);
      ids.push(id);
    }
    /** renewals left by the cap waited their window already: they go as soon as this batch is done */
    const leftOver = renewals.size > 0;
    if (ids.length === 0) return;
    const sent = fresh;
    renewing = o.store
      .renewMany(ids, o.instanceId, o.ttlMs)
      .then(
        (elsewhere) => {
          claimWritten();
          for (const [id, owner] of elsewhere) if (leases.has(id)) moved(id, owner);
          // a lease that had lapsed is ours again in the store: a routing read made meanwhile is dropped
          if (sent !== null && changed !== undefined) for (const id of sent) if (leases.has(id)) changed(id);
        },
        (err: unknown) => {
          // applied or not, nobody knows: each lease goes back to the last write known, so the device's
          // next message renews again (renewal-schedule.ts)
          ids.forEach((id, i) => {
            const lease = leaseAfterFailedBatch(leases.get(id), sentUntil, before[i]);
            if (lease === undefined) leases.delete(id);
            else leases.set(id, lease);
          });
          claimFailed(err);
        },
      )
      .finally(() => {
        renewing = null;
        if (renewals.size > 0) scheduleFlush(leftOver || batchFull(renewals.size, renewBatchMax) ? 0 : renewFlushMs);
      });
  }

  const checkOnce = async (): Promise<void> => {
    const now = o.clock.now();
    // as a lease expiry (last write + TTL): leases ending before this were written over checkAfterMs ago
    const writtenBefore = readAllNextCheck ? Infinity : now - checkAfterMs + o.ttlMs;
    readAllNextCheck = false;
    const ids: DeviceId[] = [];
    eachLive(now, (id, until) => {
      if (until <= writtenBefore) ids.push(id);
    });
    const reclaim: { deviceId: DeviceId; ttlMs: number }[] = [];
    try {
      for (let i = 0; i < ids.length; i += chunk) {
        const part = ids.slice(i, i + chunk);
        const owners = await o.store.ownersOf(part);
        const at = o.clock.now();
        for (const id of part) {
          if (!live(id, at)) continue; // released or lapsed meanwhile
          const owner = owners.get(id);
          if (owner === undefined) reclaim.push({ deviceId: id, ttlMs: Math.max(1, Math.round((leases.get(id) ?? at) - at)) });
          else if (owner !== o.instanceId) moved(id, owner);
        }
      }
      if (reclaim.length > 0) {
        // SET NX per device (OWN-4): a device that re-registered elsewhere since the read above keeps
        // its new owner, and this instance learns it moved. Every write settles before reporting.
        const results = await Promise.allSettled(reclaim.map((c) => o.store.claimIfVacant(c.deviceId, o.instanceId, c.ttlMs)));
        let rewritten = 0;
        results.forEach((r, i) => {
          const deviceId = reclaim[i]?.deviceId;
          if (r.status !== 'fulfilled' || deviceId === undefined) return;
          if (r.value === o.instanceId) rewritten++;
          else if (leases.has(deviceId)) moved(deviceId, r.value);
        });
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (rewritten > 0) log.info({ devices: rewritten }, 'ownership claims re-written after they vanished from the store');
        if (failed !== undefined) throw failed.reason;
      }
      if (checkFailing) log.info('ownership check recovered');
      checkFailing = false;
    } catch (err) {
      if (!checkFailing && !closed) log.warn({ err }, 'ownership check failed, will retry');
      checkFailing = true;
    }
  };

  const checkNow = (): Promise<void> => {
    checking ??= checkOnce().finally(() => {
      checking = null;
    });
    return checking;
  };

  // OWN-4 at once: a claim that took one of our devices is announced by the store (watchMoves), so this
  // instance stops acting for it — and its SIP side forgets the device's flow, answering the device's
  // next message 404 so it registers where it is placed now — without waiting for a check pass, which
  // skips devices renewed since the previous pass. The check pass stays the backstop for lost notices.
  const stopWatching = o.store.watchMoves((move) => {
    if (move.previousOwner === o.instanceId && move.newOwner !== o.instanceId && leases.has(move.deviceId)) moved(move.deviceId, move.newOwner);
  });

  const schedule = (): void => {
    if (closed) return;
    timer = o.clock.setTimeout(() => {
      timer = undefined;
      void checkNow().finally(schedule);
    }, o.checkIntervalMs);
  };
  schedule();

  return {
    deviceSeen(deviceId, register = false, at) {
      if (closed) return;
      const now = at ?? o.clock.now();
      const until = leases.get(deviceId);
      const action = seenAction(policy, now, until, register, claimsFailing);
      if (action === 'skip') return; // written less than renewAfterMs ago, and writes are going through
      if (action === 'batch') {
        // a renewal, batched; one whose lease lapsed (claimed no more, or vacant: an unrenewed claim
        // ends with the lease) is written back only if still vacant — only a REGISTER moves a device
        // (OWN-1, OWN-4); renewMany reports one held elsewhere and this instance stops acting for it
        if (until === undefined || until <= now) {
          leases.set(deviceId, now + o.ttlMs);
          if (changed !== undefined) {
            freshRenewals.add(deviceId);
            changed(deviceId); // at once: a read in flight stores nothing
          }
        }
        renewals.add(deviceId);
        scheduleFlush(batchFull(renewals.size, renewBatchMax) ? 0 : renewFlushMs);
        return;
      }
      const fresh = changed !== undefined && !live(deviceId, now);
      leases.set(deviceId, now + o.ttlMs);
      const written = o.store.claim(deviceId, o.instanceId, o.ttlMs);
      if (fresh && changed !== undefined) {
        changed(deviceId); // at once: a read in flight stores nothing
        void written.then(() => {
          claimWritten();
          changed(deviceId); // and once the claim is in the store, so a read made meanwhile is dropped
        }, claimFailed);
      } else {
        void written.then(claimWritten, claimFailed);
      }
    },

    async deviceGone(deviceId) {
      leases.delete(deviceId);
      renewals.delete(deviceId);
      freshRenewals.delete(deviceId);
      await renewing; // a renewal already sent lands before the release (OWN-3)
      try {
        return await o.store.releaseIfOwner(deviceId, o.instanceId); // SPEC OWN-3: delete only if still ours
      } catch (err) {
        log.warn({ err, deviceId }, 'ownership release failed; the claim expires by itself');
        return false;
      } finally {
        changed?.(deviceId);
      }
    },

    isLocallyOwned: (deviceId) => live(deviceId, o.clock.now()),

    localDevices() {
      const ids: DeviceId[] = [];
      eachLive(o.clock.now(), (id) => ids.push(id));
      return ids;
    },

    localCount() {
      let n = 0;
      eachLive(o.clock.now(), () => n++);
      return n;
    },

    onMoved(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async reclaimIfVacant(deviceId) {
      const now = o.clock.now();
      if (closed || !live(deviceId, now)) return null;
      const ttlMs = Math.max(1, Math.round((leases.get(deviceId) ?? now) - now));
      let owner: string;
      try {
        owner = await o.store.claimIfVacant(deviceId, o.instanceId, ttlMs);
      } catch (err) {
        log.debug({ err, deviceId }, 'ownership re-claim failed');
        return null;
      }
      if (owner !== o.instanceId) {
        if (leases.has(deviceId)) moved(deviceId, owner);
        return owner;
      }
      log.info({ deviceId, ttlMs }, 'ownership re-claimed for a device served here after its claim vanished');
      changed?.(deviceId);
      return owner;
    },

    observeOwner(deviceId, owner) {
      if (owner !== o.instanceId && leases.has(deviceId)) moved(deviceId, owner);
    },

    checkNow,

    storeReconnected() {
      if (closed) return;
      readAllNextCheck = true;
      void checkNow();
    },

    async close() {
      if (closed) return;
      closed = true;
      stopWatching();
      if (timer !== undefined) o.clock.clearTimeout(timer);
      timer = undefined;
      if (renewTimer !== undefined) o.clock.clearTimeout(renewTimer);
      renewTimer = undefined;
      await renewing;
      // the queued renewals, once, before the store closes (in batches of renewBatchMax)
      while (renewals.size > 0) {
        flushRenewals();
        await renewing;
      }
      await checking;
      listeners.clear();
    },
  } satisfies OwnershipRecorder;
}
