// Where session snapshots live (SPEC §11 RECOVER): per holder instance, an index of its active dialogs kept in
// the same atomic step as the snapshots (never a snapshot without its index entry or the reverse), tombstones
// for dialogs that ended, and a recovery lock per dialog so exactly one instance recovers it.
// Domain types only; adapters: session-snapshots.redis.ts (cluster), session-snapshots.memory.ts (standalone).
import type { SessionSnapshot } from './session-snapshot.ts';

/** What every kind of snapshot has: its holder and its dialog's Call-ID (device dialogs, upstream dialogs). */
export interface DialogSnapshot {
  readonly holder: string;
  readonly dialog: { readonly callId: string };
}

/** Snapshot to text and back; `parse` checks everything (what Redis gives back is input) and throws on bad text. */
export interface SnapshotCodec<T extends DialogSnapshot> {
  serialize(s: T): string;
  parse(text: string): T;
}

/** One index entry of a holder: its snapshot, or why there is none usable. */
export type IndexedSnapshot<T extends DialogSnapshot = SessionSnapshot> =
  | { readonly callId: string; readonly state: 'ok'; readonly snapshot: T }
  /** Index entry whose snapshot expired (TTL not renewed): dropped from the index by the listing. */
  | { readonly callId: string; readonly state: 'expired' }
  /** Present but unreadable (SnapshotFormatError): the caller ends it. */
  | { readonly callId: string; readonly state: 'malformed'; readonly error: Error };

export interface SessionSnapshotStore<T extends DialogSnapshot = SessionSnapshot> {
  /**
   * Writes (or rewrites) the snapshot under its holder and adds it to the holder's index, in one step, both
   * with TTL ttlMs. Resolves false, writing nothing, when the dialog has a tombstone (it ended: never resurrected).
   */
  save(snapshot: T, ttlMs: number): Promise<boolean>;
  /** Renews the TTL of the holder's index and of these snapshots of it (those still present). */
  renew(holder: string, callIds: readonly string[], ttlMs: number): Promise<void>;
  /** Ending a dialog, in one step: the tombstone (kept tombstoneTtlMs) first, then snapshot and index entry removed. */
  end(holder: string, callId: string, tombstoneTtlMs: number): Promise<void>;
  /** The snapshot is still there (not ended, not expired): checked again once the recovery lock is held. */
  exists(holder: string, callId: string): Promise<boolean>;
  /** At most `limit` entries of the holder's index. */
  list(holder: string, limit: number): Promise<IndexedSnapshot<T>[]>;
  /** SET NX PX: true when `by` now holds the recovery lock of that dialog (or already held it). */
  lock(callId: string, by: string, ttlMs: number): Promise<boolean>;
  /** Releases the lock if `by` still holds it. */
  unlock(callId: string, by: string): Promise<void>;
}
