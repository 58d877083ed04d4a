// Where session snapshots live (SPEC §11 RECOVER): per holder instance, an index of its active dialogs kept in
// the same atomic step as the snapshots (never a snapshot without its index entry or the reverse), tombstones
// for dialogs that ended, and a recovery lock per dialog so exactly one instance recovers it.
// Domain types only; adapters: session-snapshots.redis.ts (cluster), session-snapshots.memory.ts (standalone).
import type { SessionSnapshot } from './session-snapshot.ts';

/** One index entry of a holder: its snapshot, or why there is none usable. */
export type IndexedSnapshot =
  | { readonly callId: string; readonly state: 'ok'; readonly snapshot: SessionSnapshot }
  /** Index entry whose snapshot expired (TTL not renewed): dropped from the index by the listing. */
  | { readonly callId: string; readonly state: 'expired' }
  /** Present but unreadable (SnapshotFormatError): the caller ends it. */
  | { readonly callId: string; readonly state: 'malformed'; readonly error: Error };

export interface SessionSnapshotStore {
  /**
   * Writes (or rewrites) the snapshot under its holder and adds it to the holder's index, in one step, both
   * with TTL ttlMs. Resolves false, writing nothing, when the dialog has a tombstone (it ended: never resurrected).
   */
  save(snapshot: SessionSnapshot, ttlMs: number): Promise<boolean>;
  /** Renews the TTL of the holder's index and of these snapshots of it (those still present). */
  renew(holder: string, callIds: readonly string[], ttlMs: number): Promise<void>;
  /** Ending a dialog, in one step: the tombstone (kept tombstoneTtlMs) first, then snapshot and index entry removed. */
  end(holder: string, callId: string, tombstoneTtlMs: number): Promise<void>;
  /** The snapshot is still there (not ended, not expired): checked again once the recovery lock is held. */
  exists(holder: string, callId: string): Promise<boolean>;
  /** At most `limit` entries of the holder's index. */
  list(holder: string, limit: number): Promise<IndexedSnapshot[]>;
  /** SET NX PX: true when `by` now holds the recovery lock of that dialog (or already held it). */
  lock(callId: string, by: string, ttlMs: number): Promise<boolean>;
  /** Releases the lock if `by` still holds it. */
  unlock(callId: string, by: string): Promise<void>;
}
