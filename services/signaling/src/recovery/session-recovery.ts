// Session continuity, the recovering side (SPEC §11 RECOVER, reference 003): every scan period — and at once
// when a node-table read shows a holder gone or a device registers here — this instance reads the session
// indexes of the holders that are gone (node rows out of the online window, and its own entries left by an
// earlier run), decides per entry (recovery-decision.ts), and acts under the per-dialog recovery lock, so
// exactly one instance recovers or releases each session:
//   recover  → ask the media node (getMediaList) whether the stream is still there with viewers; if so the
//              session manager re-INVITEs the device into the same stream id; the old entry is then ended
//              (tombstone) — if not, release;
//   release  → BYE on the old dialog if the device is here, close the RTP server (unless a new play holds the
//              stream id), free the SSRC, forget the viewers' session ids, end the entry. Nothing half-open.
// Bounded: the index read per holder is limited, at most MAX_PARALLEL entries are worked on at once, and every
// entry is recovered or released within give-up of the first scan that saw it orphaned.
import type { MediaNode } from '@vms/media';
import type { Logger } from 'pino';
import type { SessionDirectory } from '../cluster/device-index.port.ts';
import type { Clock } from '../core/clock.ts';
import type { MediaPlane } from '../media/media-plane.ts';
import type { MediaSessionManager } from '../media/media-session-manager.ts';
import type { MediaSignaling } from '../media/media-signaling.port.ts';
import type { StreamHolderDirectory } from '../media/stream-holders.port.ts';
import { workOrphan, type OrphanStepDeps } from './orphan-step.ts';
import { decideMedia, type MediaView } from './recovery-decision.ts';
import type { SessionSnapshot } from './session-snapshot.ts';
import type { IndexedSnapshot, SessionSnapshotStore } from './session-snapshots.port.ts';
import { createOrphanReader, createScanLoop, runJobs, type RecoveryScanLoop, type ScanLoopView } from './scan-loop.ts';

/** Index entries read per holder and scan. */
export const LIST_LIMIT = 1000;
/** Entries worked on at once (each may wait on a device and a media node). */
const MAX_PARALLEL = 16;
const RTP_APP = 'rtp';

export type RecoveryOutcome = { readonly outcome: 'recovered' } | { readonly outcome: 'released'; readonly reason: string } | { readonly outcome: 'forgotten'; readonly reason: string };

export interface SessionRecoveryDeps {
  readonly store: SessionSnapshotStore;
  readonly self: string;
  /** This process run (the journal's): own index entries of other runs are orphans. */
  readonly run: string;
  readonly sessions: Pick<MediaSessionManager, 'recover' | 'holds'>;
  readonly signaling: Pick<MediaSignaling, 'restore'>;
  readonly plane: Pick<MediaPlane, 'node' | 'client' | 'ssrcs' | 'callResult'>;
  readonly holders: StreamHolderDirectory | null;
  readonly directory: SessionDirectory;
  /** OWN-1: the device is owned by this instance. */
  readonly ownedHere: (deviceId: string) => boolean;
  /** The device's flow is known here (it can be INVITEd). */
  readonly reachable: (deviceId: string) => boolean;
  readonly giveUpMs: number;
  readonly scanPeriodMs: number;
  /** Recovery lock TTL: longer than one recovery can take. */
  readonly lockTtlMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onOutcome?: (o: RecoveryOutcome) => void;
}

export type SessionRecovery = RecoveryScanLoop;

export function createSessionRecovery(d: SessionRecoveryDeps): SessionRecovery {
  const log = d.log.child({ component: 'session-recovery' });

  const mediaView = async (node: MediaNode | undefined, streamId: string): Promise<MediaView> => {
    if (node === undefined) return { kind: 'absent' };
    try {
      const list = await d.plane.client(node).getMediaList({ app: RTP_APP, stream: streamId });
      d.plane.callResult(node.id, null);
      if (list.length === 0) return { kind: 'absent' };
      // totalReaderCount: every protocol's players of the stream (ZLM MediaSource::totalReaderCount)
      return { kind: 'present', readers: Math.max(...list.map((m) => Math.max(m.totalReaderCount, m.readerCount))) };
    } catch (err) {
      d.plane.callResult(node.id, err);
      log.warn({ err, nodeId: node.id, streamId }, 'media node not asked about an orphaned stream: retried next scan');
      return { kind: 'unreachable' };
    }
  };

  /** Frees what the session held; each step logged once, never throws. */
  const release = async (holder: string, s: SessionSnapshot, reason: string): Promise<void> => {
    const slog = log.child({ holder, streamId: s.streamId, deviceId: s.deviceId, callId: s.dialog.callId, nodeId: s.nodeId });
    // the device may still be sending on the old dialog: end it (RFC 3261 §15.1.1), the answer is not awaited
    if (d.reachable(s.deviceId)) void d.signaling.restore(s.deviceId, s.dialog)?.bye().catch((err: unknown) => slog.debug({ err }, 'old dialog BYE failed'));
    const node = d.plane.node(s.nodeId);
    // a handed-off snapshot (the device moved): the instance that handed it off still holds SSRC and stream
    const held = s.previousHolder ?? holder;
    // a stream running here under that id (recovered already, or a new play) keeps its RTP server and SSRC
    const inUse = d.sessions.holds(s.nodeId, s.streamId);
    if (node !== undefined && !inUse) {
      // a live stream id is per channel: a play started elsewhere since the crash may own the RTP server now
      const current = await d.holders?.holderOf(s.nodeId, s.streamId).catch(() => null);
      if (current === undefined || current === null || current === held) {
        await d.plane
          .client(node)
          .closeRtpServer(s.streamId)
          .then(
            () => d.plane.callResult(node.id, null),
            (err: unknown) => {
              d.plane.callResult(node.id, err);
              slog.warn({ err }, 'closeRtpServer of an orphaned stream failed: the media node times it out');
            },
          );
      }
    }
    try {
      if (!inUse && (await d.plane.ssrcs.adopt(s.nodeId, s.allocatedSsrc, held))) await d.plane.ssrcs.release(s.nodeId, s.allocatedSsrc);
    } catch (err) {
      slog.warn({ err, ssrc: s.allocatedSsrc }, 'SSRC of an orphaned stream not freed: it expires with its TTL');
    }
    await Promise.all(s.sessionIds.map((id) => d.directory.forget(id).catch((err: unknown) => slog.warn({ err, sessionId: id }, 'session directory forget failed'))));
    await d.store.end(holder, s.dialog.callId, d.lockTtlMs);
    slog.info({ reason, viewers: s.sessionIds.length }, 'orphaned session released');
    d.onOutcome?.({ outcome: 'released', reason });
  };

  /** True when the entry is done with (recovered or released), false when it is left for the next scan. */
  const recover = async (holder: string, s: SessionSnapshot): Promise<boolean> => {
    const slog = log.child({ holder, streamId: s.streamId, deviceId: s.deviceId, oldCallId: s.dialog.callId, nodeId: s.nodeId });
    const node = d.plane.node(s.nodeId);
    const step = decideMedia({ media: await mediaView(node, s.streamId), streamIdInUseHere: d.sessions.holds(s.nodeId, s.streamId) });
    if (step.kind === 'retry') return false;
    if (step.kind === 'release') {
      await release(holder, s, step.reason);
      return true;
    }
    const t0 = d.clock.now();
    try {
      const callId = await d.sessions.recover(s);
      // the old dialog is over: its tombstone (if this fails the entry expires; a later look finds the stream here)
      await d.store.end(holder, s.dialog.callId, d.lockTtlMs).catch((err: unknown) => slog.warn({ err }, 'recovered session entry not ended: it expires'));
      slog.info({ callId, ms: d.clock.now() - t0, viewers: s.sessionIds.length }, 'orphaned session recovered');
      d.onOutcome?.({ outcome: 'recovered' });
      return true;
    } catch (err) {
      slog.warn({ err }, 'orphaned session not recovered: tried again next scan until give-up');
      return false;
    }
  };

  const step: OrphanStepDeps<SessionSnapshot> = {
    store: d.store,
    self: d.self,
    lockTtlMs: d.lockTtlMs,
    giveUpMs: d.giveUpMs,
    ownedHere: d.ownedHere,
    reachable: d.reachable,
    log,
    kind: 'device session',
    onForgotten: (reason) => d.onOutcome?.({ outcome: 'forgotten', reason }),
    release,
    recover,
  };
  const work = (holder: string, e: IndexedSnapshot, since: number, now: number): Promise<void> => workOrphan(step, holder, e, since, now);

  const orphans = createOrphanReader<SessionSnapshot>({ store: d.store, self: d.self, run: d.run, limit: LIST_LIMIT, log });
  const scan = async (loop: ScanLoopView): Promise<void> => {
    const now = d.clock.now();
    const queue = (await orphans(loop, now)).map((o) => () => work(o.holder, o.entry, o.since, now));
    await runJobs(queue, MAX_PARALLEL, () => loop.closed, log, 'orphaned session step failed: next scan');
  };

  return createScanLoop({ clock: d.clock, scanPeriodMs: d.scanPeriodMs, log, failureMessage: 'session recovery scan failed' }, scan);
}
