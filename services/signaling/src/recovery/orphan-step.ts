// One step on one orphaned snapshot, the same for every recovery that works on device dialogs (device
// sessions: session-recovery.ts; talk and broadcast: audio-recovery.ts): decide (recovery-decision.ts),
// forget an unusable entry, else take the per-dialog lock (exactly one instance acts), check the entry
// still stands (the listing may predate another instance's recovery that ended it) and release or recover.
import type { Logger } from 'pino';
import { decideOrphan } from './recovery-decision.ts';
import type { DialogSnapshot, IndexedSnapshot, SessionSnapshotStore } from './session-snapshots.port.ts';

type DeviceDialogSnapshot = DialogSnapshot & { readonly purpose: string; readonly deviceId: string };

export interface OrphanStepDeps<S extends DeviceDialogSnapshot> {
  readonly store: SessionSnapshotStore<S>;
  readonly self: string;
  readonly lockTtlMs: number;
  readonly giveUpMs: number;
  readonly ownedHere: (deviceId: string) => boolean;
  readonly reachable: (deviceId: string) => boolean;
  readonly log: Logger;
  /** What the snapshots are, in the log line of a dropped unreadable one. */
  readonly kind: 'device session' | 'audio session';
  readonly onForgotten?: (reason: 'expired' | 'malformed') => void;
  readonly release: (holder: string, s: S, reason: string) => Promise<void>;
  /** Resolves true when the dialog is recovered (or released for good), false to try again at the next scan. */
  readonly recover: (holder: string, s: S) => Promise<boolean>;
}

export async function workOrphan<S extends DeviceDialogSnapshot>(d: OrphanStepDeps<S>, holder: string, e: IndexedSnapshot<S>, since: number, now: number): Promise<void> {
  const step = decideOrphan({
    now,
    entry: e,
    orphanSince: since,
    giveUpAfterMs: d.giveUpMs,
    ownedHere: e.state === 'ok' && d.ownedHere(e.snapshot.deviceId),
    reachable: e.state === 'ok' && d.reachable(e.snapshot.deviceId),
  });
  if (step.kind === 'wait') return;
  if (step.kind === 'forget') {
    if (e.state === 'malformed') d.log.warn({ holder, callId: e.callId, kind: d.kind, err: e.error }, 'unreadable snapshot dropped');
    await d.store.end(holder, e.callId, d.lockTtlMs);
    d.onForgotten?.(step.reason);
    return;
  }
  if (e.state !== 'ok') return;
  if (!(await d.store.lock(e.callId, d.self, d.lockTtlMs))) return; // another instance is on it
  if (!(await d.store.exists(holder, e.callId))) return; // ended since the listing
  let done = false;
  try {
    if (step.kind === 'release') done = await d.release(holder, e.snapshot, step.reason).then(() => true);
    else done = await d.recover(holder, e.snapshot);
  } finally {
    // kept when done: the lock then outlives any listing read before the entry ended
    if (!done) await d.store.unlock(e.callId, d.self).catch(() => undefined);
  }
}
