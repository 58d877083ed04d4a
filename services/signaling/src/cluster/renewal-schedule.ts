// When a device's ownership claim is written (SPEC OWN-1, OWN-4, OWN-5; issue 11): the recorder's pure
// decisions, apart from its I/O (ownership-recorder.ts) so they are tested on a fake clock alone.
//
// A lease is this instance's local view of its claim: last write + TTL. A claim is renewed once
// renewAfterMs has passed since the last write, in batches (one store command for the renewals due in a
// short window); a REGISTER, or any write while writes fail, goes at once.

/** What a device's message does to its claim. */
export type SeenAction =
  /** written less than renewAfterMs ago and writes go through: nothing to do */
  | 'skip'
  /** a renewal (or a lapsed lease written back if vacant): waits for the batch */
  | 'batch'
  /** a claim written at once: a REGISTER (it may move the device, OWN-4), or writes are failing */
  | 'write';

export interface RenewalPolicy {
  /** SPEC OWN-1: the claim's TTL; every write gives exactly this. */
  readonly ttlMs: number;
  /** A claim written less than this long ago is not written again (0: every message writes). */
  readonly renewAfterMs: number;
  /** Renewals wait for a batch (renewFlushMs > 0); otherwise every write is a claim at once. */
  readonly batching: boolean;
}

/**
 * `leaseUntil`: the device's lease expiry (undefined: none). `writesFailing`: the last write failed, so
 * each message writes at once until one goes through (FAIL-3).
 */
export function seenAction(p: RenewalPolicy, now: number, leaseUntil: number | undefined, register: boolean, writesFailing: boolean): SeenAction {
  if (register || writesFailing) return 'write';
  const leased = leaseUntil !== undefined && leaseUntil > now;
  if (leased && now < leaseUntil - p.ttlMs + p.renewAfterMs) return 'skip';
  return p.batching ? 'batch' : 'write';
}

/**
 * The queued renewals go now (rather than when the batch's wait ends) once they fill one store command:
 * waiting longer would only make a second command, and the renewals' claims lose life meanwhile.
 */
export function batchFull(queued: number, maxBatch: number): boolean {
  return queued >= maxBatch;
}

/**
 * A batch's write failed (a Redis error or timeout: applied or not, nobody knows): each lease the batch
 * set goes back to what it was, unless something wrote the device since (then that write's lease
 * stands). The lease then again says when the claim was last known written, so the device's next
 * message renews it — whether or not writes are failing by then — and its key never expires while the
 * device keeps alive at the default period (renewal queued ≥ 84 s after a write and < 144 s, lost; the
 * next keepalive ≤ 204 s after the write renews it again, within the 210 s TTL). Returns the lease to
 * keep, undefined to drop it (there was none before and none since).
 */
export function leaseAfterFailedBatch(current: number | undefined, setByBatch: number, before: number | undefined): number | undefined {
  return current === setByBatch ? before : current;
}
