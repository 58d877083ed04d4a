// Which of our nonces were already used, and with which nonce-count (RFC 2617 §3.2.2: "the server
// can keep track of the nc values it has seen for each nonce and reject any request that reuses one"),
// so that a captured Authorization is accepted once, not for the nonce's whole lifetime (SPEC SEC-1).
//
// In memory, per DigestServer: nonces are MAC'd (keyed SHA-256) with the process's own key, so no other process
// accepts them and nothing needs sharing. Bounded: an entry is only added for an answer whose response
// verified (it takes the password), it is dropped once the nonce has expired (a replay is then
// refused as stale anyway), and past `maxEntries` the oldest goes first (the one closest to expiry).

import { detachString } from '../message/detach.ts';

/** RFC 2069 answers carry no nc: their use consumes the nonce entirely. */
export const NONCE_CONSUMED = 0x1_0000_0000;

/** Enough for a 100,000-device fleet re-registering within one nonce lifetime. */
export const DEFAULT_MAX_TRACKED_NONCES = 100_000;

export class NonceLedger {
  /** nonce → highest nc accepted and the time the nonce stops being valid (insertion order ≈ issue order). */
  readonly #used = new Map<string, { nc: number; until: number }>();
  readonly #max: number;

  constructor(maxEntries = DEFAULT_MAX_TRACKED_NONCES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
    this.#max = maxEntries;
  }

  get size(): number {
    return this.#used.size;
  }

  /**
   * Records the use of (`nonce`, `nc`) if it is new: `nc` above every count accepted for this nonce
   * (qop=auth), or NONCE_CONSUMED for an answer without qop (then only if the nonce was never used).
   * Returns false for a replay, recording nothing. `until`: the nonce's expiry, epoch ms.
   */
  use(nonce: string, nc: number, until: number, now: number): boolean {
    this.#prune(now);
    const seen = this.#used.get(nonce);
    if (seen !== undefined && (nc === NONCE_CONSUMED || nc <= seen.nc)) return false;
    if (seen !== undefined) {
      seen.nc = nc;
      return true;
    }
    if (this.#used.size >= this.#max) {
      const oldest = this.#used.keys().next();
      if (oldest.done !== true) this.#used.delete(oldest.value);
    }
    // a copy: the nonce as parsed is a slice of the REGISTER's text, which the entry would keep for the
    // nonce's whole lifetime (minutes; a storm's worth of datagrams kept into old space: issue 11)
    this.#used.set(detachString(nonce), { nc, until });
    return true;
  }

  /** Drops expired entries from the old end; stops at the first live one (amortised O(1)). */
  #prune(now: number): void {
    for (const [nonce, entry] of this.#used) {
      if (entry.until > now) return;
      this.#used.delete(nonce);
    }
  }
}
