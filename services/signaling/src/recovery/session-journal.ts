// The media sessions' side of session continuity (SPEC §11 RECOVER): each established device dialog is
// snapshotted when confirmed and on every change (viewers, SSRC), its TTL renewed while it runs, and ending it
// writes the tombstone (then removes the snapshot and index entry) before anything else of the teardown, so a
// crash right after a stop never brings the session back. Writes never block a play: a failed write is logged
// and the next change or renewal writes again.
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { SessionSnapshot } from './session-snapshot.ts';
import type { DialogSnapshot, SessionSnapshotStore } from './session-snapshots.port.ts';

/** A snapshot kind the journal writes: versioned, with its holder, process run and expiry. */
export interface JournaledSnapshot extends DialogSnapshot {
  readonly v: 1;
  readonly run: string;
  readonly expiresAt: number;
  readonly previousHolder?: string;
}

/** The run of a handed-off snapshot: no process of its new holder wrote it, so its holder's scan takes it up. */
export const HANDED_OFF_RUN = 'handed-off';

export type JournalEntry<T extends JournaledSnapshot = SessionSnapshot> = Omit<T, 'v' | 'holder' | 'run' | 'expiresAt'>;

export interface SessionJournal<T extends JournaledSnapshot = SessionSnapshot> {
  /** This process run: snapshots of an earlier run under the same instance id are orphans. */
  readonly run: string;
  /** The dialog was confirmed or changed: (re)write its snapshot. Never waits, never throws. */
  record(e: JournalEntry<T>): void;
  /** The dialog ended: tombstone, snapshot and index entry gone (one step). Never rejects. */
  ended(callId: string): Promise<void>;
  /**
   * The device moved to `toHolder` while this instance is alive (OWN-4): the snapshot goes to that instance's
   * index as an orphan of its own (run HANDED_OFF_RUN, previousHolder = this instance), then leaves this index
   * — two steps (the indexes live on two Redis Cluster slots), in that order, so a crash between them leaves a
   * duplicate that expires, never a lost session. No tombstone here: the dialog did not end. Never rejects.
   */
  handOff(callId: string, toHolder: string): Promise<void>;
  /** Call-IDs journaled by this run and not ended. */
  has(callId: string): boolean;
  /** Stops renewals; snapshots stay (to be recovered after a crash or by the next run). Idempotent. */
  close(): Promise<void>;
}

export interface SessionJournalOptions<T extends JournaledSnapshot = SessionSnapshot> {
  readonly store: SessionSnapshotStore<T>;
  readonly holder: string;
  readonly run: string;
  /** Snapshot TTL; renewed every third of it. */
  readonly ttlMs: number;
  readonly clock: Clock;
  readonly log: Logger;
}

export function createSessionJournal<T extends JournaledSnapshot = SessionSnapshot>(o: SessionJournalOptions<T>): SessionJournal<T> {
  const log = o.log.child({ component: 'session-journal' });
  const live = new Map<string, JournalEntry<T>>();
  let failing = false;
  let timer: TimerHandle | null = null;
  let closed = false;

  const failed = (err: unknown, what: string): void => {
    if (failing) return; // once per outage
    failing = true;
    log.warn({ err, what }, 'session snapshot write failed: sessions started meanwhile may not survive a crash');
  };
  const ok = (): void => {
    if (!failing) return;
    failing = false;
    log.info('session snapshot writes work again');
  };
  const write = (e: JournalEntry<T>): void => {
    const snapshot = { v: 1, holder: o.holder, run: o.run, expiresAt: o.clock.now() + o.ttlMs, ...e } as unknown as T;
    o.store.save(snapshot, o.ttlMs).then(ok, (err: unknown) => failed(err, 'save'));
  };
  const renew = (): void => {
    timer = null;
    if (closed) return;
    // re-written whole rather than only extended: a snapshot lost with a Redis restart comes back
    for (const e of live.values()) write(e);
    schedule();
  };
  const schedule = (): void => {
    if (closed || timer !== null) return;
    timer = o.clock.setTimeout(renew, Math.max(1000, Math.floor(o.ttlMs / 3)));
  };

  return {
    run: o.run,
    record(e) {
      if (closed) return;
      live.set(e.dialog.callId, e);
      write(e);
      schedule();
    },
    async ended(callId) {
      live.delete(callId);
      try {
        await o.store.end(o.holder, callId, o.ttlMs);
        ok();
      } catch (err) {
        // the snapshot then expires with its TTL; until then a crash could see it as alive
        failed(err, 'end');
      }
    },
    async handOff(callId, toHolder) {
      const e = live.get(callId);
      live.delete(callId);
      if (e === undefined) return;
      const moved = { ...e, v: 1, holder: toHolder, run: HANDED_OFF_RUN, expiresAt: o.clock.now() + o.ttlMs, previousHolder: o.holder } as unknown as T;
      try {
        await o.store.save(moved, o.ttlMs);
        // a short tombstone: the entry must not come back under this holder, and nothing else ended
        await o.store.end(o.holder, callId, 1000);
        ok();
      } catch (err) {
        failed(err, 'hand-off');
      }
    },
    has: (callId) => live.has(callId),
    async close() {
      closed = true;
      if (timer !== null) o.clock.clearTimeout(timer);
      timer = null;
    },
  };
}
