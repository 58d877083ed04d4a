// Session continuity for the cascade (SPEC §11 RECOVER for CASC-6): the upstream live views a crashed leader
// held. While this instance leads, every scan period — and at once when a node-table read shows a holder gone —
// it reads the upstream-dialog indexes of the gone holders (node rows out of the online window, and its own
// entries of an earlier run) and works each entry under its recovery lock, so exactly one instance acts on it:
//   live view, stream still on its media node →
//       the media node sends again to the upstream's SDP address (stopSendRtp, startSendRtp with its y=), and
//       the upstream's dialog is moved here: an in-dialog re-INVITE from the snapshot (Call-ID, tags, CSeq + 1,
//       route set) carrying this instance's Contact — a target refresh (RFC 3261 §12.2, §14.1) — and the new
//       sending address. 2xx: the view is served here from now on (UpstreamLiveViews.adopt).
//   re-INVITE refused or unanswered within REINVITE_TIMEOUT_MS, a playback or download (not resumed), the stream
//   absent from its media node at two scans (or the node silent for five), nothing recovered by the give-up →
//       released: BYE from the snapshot (the upstream re-requests if it still wants the channel), sending
//       stopped, the viewer's play session left. Nothing half-open. A 481 or 408 to the re-INVITE says the
//       upstream has no such dialog any more: the same, without the BYE (judgeReinviteAnswer).
// The entry is ended (tombstone) either way; an entry the upstream ended before the crash has no snapshot left
// (the tombstone is written before the teardown, upstream-live.ts), so nothing is brought back.
// Bounded: index reads are limited, MAX_PARALLEL entries at once, each recovered or released within give-up.
import { readUpstreamOffer, buildUpstreamAnswer } from '@vms/cascade';
import { SipStatus, type Dialog, type Flow, type SipStack } from '@vms/sip';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import { dialogStateOf } from '../media/saved-dialog.ts';
import type { SessionSnapshotStore, IndexedSnapshot } from '../recovery/session-snapshots.port.ts';
import { INITIAL_WATCH, judgeStream, STREAM_CHECK_MS, type GoneReason, type StreamObservation, type StreamProbe, type WatchState } from './live-view-watch.ts';
import type { LiveSource, RtpForwarder } from './upstream-live.port.ts';
import type { AdoptedView } from './upstream-live.ts';
import type { UpstreamSnapshot } from './upstream-snapshot.ts';
import { createScanLoop, runJobs, type RecoveryScanLoop, type ScanLoopView } from '../recovery/scan-loop.ts';

/** Index entries read per holder and scan. */
const LIST_LIMIT = 1000;
/** Entries worked on at once. */
const MAX_PARALLEL = 8;
/** The upstream must answer the re-INVITE within this time, or it gets a BYE (below INVITE Timer B, 32 s). */
export const REINVITE_TIMEOUT_MS = 8000;
const SDP_CONTENT_TYPE = 'application/sdp';

/** What the upstream's answer to the recovery re-INVITE means for the view (null: unanswered in time). */
export type ReinviteVerdict = { readonly kind: 'adopt' } | { readonly kind: 'release'; readonly reason: string; readonly bye: boolean };

export function judgeReinviteAnswer(status: number | null): ReinviteVerdict {
  if (status === null) return { kind: 'release', reason: 'upstream re-INVITE unanswered', bye: true };
  if (status >= 200 && status < 300) return { kind: 'adopt' };
  // RFC 3261 §12.2.1.2: 481 (or 408) — the upstream has no such dialog any more (it restarted, or ended it while
  // the leader was dead and its BYE was lost): nothing to BYE, only our side to let go
  if (status === SipStatus.CallTransactionDoesNotExist || status === SipStatus.RequestTimeout) return { kind: 'release', reason: 'upstream dialog gone', bye: false };
  // 488 and the like (RFC 3261 §14.2: no session modification): the dialog is alive, end it cleanly
  return { kind: 'release', reason: 'upstream re-INVITE refused', bye: true };
}

interface Orphan {
  readonly since: number;
  stream: WatchState;
  /** Clock time of the last observation counted in `stream`. */
  judgedAt?: number;
}

const GONE_REASONS: Readonly<Record<GoneReason, string>> = {
  'stream-gone': 'stream gone from the media node',
  'stream-restarted': 'stream restarted on the media node',
  'media-node-unreachable': 'media node unreachable',
};

export type UpstreamRecoveryOutcome = { readonly outcome: 'recovered' } | { readonly outcome: 'released' | 'forgotten'; readonly reason: string };

export interface UpstreamRecoveryDeps {
  readonly store: SessionSnapshotStore<UpstreamSnapshot>;
  readonly self: string;
  /** This process run (the journal's): own entries of other runs are orphans. */
  readonly run: string;
  /** CASC-6: only the leader serves (and so recovers) upstream live views. */
  readonly isLeader: () => boolean;
  readonly stack: Pick<SipStack, 'restoreDialog'>;
  readonly forwarder: RtpForwarder;
  readonly probe: StreamProbe;
  readonly source: Pick<LiveSource, 'stop'>;
  readonly views: { adopt(a: AdoptedView): boolean };
  readonly giveUpMs: number;
  readonly scanPeriodMs: number;
  readonly lockTtlMs: number;
  readonly reinviteTimeoutMs?: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onOutcome?: (o: UpstreamRecoveryOutcome) => void;
}

export type UpstreamRecovery = RecoveryScanLoop;

/** Where the upstream was reached: its address as seen when the dialog was set up (RFC 3261 §18.2.2). */
function flowOf(s: UpstreamSnapshot): Flow {
  return { transport: s.dialog.transport, remoteAddress: s.dialog.remoteAddress, remotePort: s.dialog.remotePort, localAddress: '0.0.0.0', localPort: 0 };
}

export function createUpstreamRecovery(d: UpstreamRecoveryDeps): UpstreamRecovery {
  const log = d.log.child({ component: 'upstream-recovery' });
  const reinviteMs = d.reinviteTimeoutMs ?? REINVITE_TIMEOUT_MS;
  /** Per orphaned entry (holder + Call-ID): when this instance first saw it, and what the media node said since. */
  let orphans = new Map<string, Orphan>();

  const restore = (s: UpstreamSnapshot, slog: Logger): Dialog | null => {
    try {
      return d.stack.restoreDialog(dialogStateOf(s.dialog, 'uas'), flowOf(s));
    } catch (err) {
      slog.warn({ err }, 'saved upstream dialog not restorable');
      return null;
    }
  };

  /** BYE from the snapshot, sending stopped, the viewer left, the entry ended. Never throws. */
  const release = async (holder: string, s: UpstreamSnapshot, reason: string, dialog: Dialog | null, slog: Logger, bye = true): Promise<void> => {
    const dlg = bye ? (dialog ?? restore(s, slog)) : null;
    const byeSent = dlg !== null && !dlg.terminated;
    const ssrc = readSsrc(s);
    await Promise.all([
      dlg?.destroy().catch((err: unknown) => slog.debug({ err }, 'BYE to the upstream failed')),
      // without the upstream's y= nothing is stopped: an empty one would stop every sending of the stream
      ssrc === null ? undefined : d.forwarder.stop(s.viewer.mediaNodeId, s.viewer.streamId, ssrc).catch((err: unknown) => slog.debug({ err }, 'stopSendRtp of an orphaned upstream view failed')),
      d.source.stop({ purpose: s.purpose, ...s.viewer }, s.tenantId).catch((err: unknown) => slog.warn({ err }, 'leaving the stream of an orphaned upstream view failed')),
    ]);
    await d.store.end(holder, s.dialog.callId, d.lockTtlMs).catch((err: unknown) => slog.warn({ err }, 'upstream view entry not ended: it expires'));
    slog.info({ reason, bye: byeSent }, 'orphaned upstream view released');
    d.onOutcome?.({ outcome: 'released', reason });
  };

  /** Bounded re-INVITE: its final status, or null when unanswered in time (the transaction runs on, logged). */
  const reinvite = async (dialog: Dialog, body: string, slog: Logger): Promise<number | null> => {
    let t: TimerHandle | undefined;
    const late = new Promise<null>((resolve) => (t = d.clock.setTimeout(() => resolve(null), reinviteMs)));
    const answered = dialog.reinvite({ body, contentType: SDP_CONTENT_TYPE }).then(
      (res) => res.status,
      (err: unknown) => {
        slog.info({ err }, 'upstream re-INVITE failed');
        return 0;
      },
    );
    try {
      return await Promise.race([answered, late]);
    } finally {
      if (t !== undefined) d.clock.clearTimeout(t);
    }
  };

  /** True when done with the entry (recovered or released), false to look again at the next scan. */
  const recover = async (holder: string, s: UpstreamSnapshot, orphan: Orphan, slog: Logger): Promise<boolean> => {
    let seen: StreamObservation;
    try {
      seen = await d.probe(s.viewer.mediaNodeId, s.viewer.streamId);
    } catch (err) {
      slog.info({ err }, 'media node not asked about an orphaned upstream view');
      seen = { kind: 'unreachable' };
    }
    // the same verdict as the live leader's stream check (live-view-watch.ts), one observation per scan: a stream
    // absent at two scans is gone for good — the device side re-INVITEs only into a stream the media node still
    // has (recovery-decision.ts decideMedia), so nothing will bring it back — and a media node that does not
    // answer for STREAM_UNREACHABLE_CHECKS scans takes its streams with it; either way the upstream gets its BYE
    // now, not at the give-up. Observations closer than the live check's period (two coalesced scans) count once.
    const now = d.clock.now();
    if (seen.kind !== 'present' && orphan.judgedAt !== undefined && now - orphan.judgedAt < STREAM_CHECK_MS) return false;
    const judged = judgeStream(orphan.stream, seen);
    orphan.stream = judged.state;
    orphan.judgedAt = now;
    if (judged.gone !== null) {
      await release(holder, s, GONE_REASONS[judged.gone], null, slog);
      return true;
    }
    if (seen.kind !== 'present') {
      slog.info({ seen: seen.kind }, 'stream of an orphaned upstream view not on its media node: next scan');
      return false;
    }
    let offer;
    try {
      offer = readUpstreamOffer(s.offerSdp);
    } catch (err) {
      slog.warn({ err }, 'saved upstream offer unreadable');
      await release(holder, s, 'saved offer unreadable', null, slog);
      return true;
    }
    await d.forwarder.stop(s.viewer.mediaNodeId, s.viewer.streamId, offer.ssrc).catch(() => undefined); // may have stopped with the stream
    let sending;
    try {
      sending = await d.forwarder.start(s.viewer.mediaNodeId, {
        streamId: s.viewer.streamId,
        ssrc: offer.ssrc,
        dstAddress: offer.address,
        dstPort: offer.port,
        udp: offer.transport === 'udp',
        payloadType: offer.payloadType,
      });
    } catch (err) {
      slog.info({ err }, 'sending to the upstream not restarted: next scan');
      return false;
    }
    const dialog = restore(s, slog);
    if (dialog === null) {
      await release(holder, s, 'saved dialog not restorable', null, slog);
      return true;
    }
    const sdpVersion = s.sdpVersion + 1;
    const body = buildUpstreamAnswer({ channelId: s.channelId, address: sending.address, port: sending.port, offer, sessionVersion: sdpVersion });
    const t0 = d.clock.now();
    const status = await reinvite(dialog, body, slog);
    const verdict = judgeReinviteAnswer(status);
    if (verdict.kind === 'release') {
      slog.info({ status }, 'upstream did not take the re-INVITE');
      await release(holder, s, verdict.reason, dialog, slog, verdict.bye);
      return true;
    }
    if (!d.views.adopt({ snapshot: s, dialog, ssrc: offer.ssrc, sdpVersion })) {
      await release(holder, s, 'closing', dialog, slog);
      return true;
    }
    await d.store.end(holder, s.dialog.callId, d.lockTtlMs).catch((err: unknown) => slog.warn({ err }, 'recovered upstream view entry not ended: it expires'));
    slog.info({ ms: d.clock.now() - t0, sendFrom: `${sending.address}:${sending.port}` }, 'orphaned upstream view recovered (re-INVITE accepted)');
    d.onOutcome?.({ outcome: 'recovered' });
    return true;
  };

  const work = async (holder: string, e: IndexedSnapshot<UpstreamSnapshot>, now: number): Promise<void> => {
    if (e.state !== 'ok') {
      if (e.state === 'malformed') log.warn({ holder, callId: e.callId, err: e.error }, 'unreadable upstream view snapshot dropped');
      await d.store.end(holder, e.callId, d.lockTtlMs);
      d.onOutcome?.({ outcome: 'forgotten', reason: e.state });
      return;
    }
    const s = e.snapshot;
    if (!(await d.store.lock(e.callId, d.self, d.lockTtlMs))) return; // another instance is on it
    if (!(await d.store.exists(holder, e.callId))) return;
    const slog = log.child({ holder, callId: e.callId, platformId: s.platformId, channelId: s.channelId, streamId: s.viewer.streamId });
    const orphan = orphans.get(`${holder}\n${e.callId}`) ?? { since: now, stream: INITIAL_WATCH };
    let done = false;
    try {
      if (s.ending === true) {
        // the upstream (or the stream) had ended it: finish the crashed leader's teardown, no BYE, no re-INVITE
        await release(holder, s, 'ended before the crash', null, slog, false);
        done = true;
      } else if (s.purpose !== 'live') {
        // a recording's position is the upstream's to ask for again
        await release(holder, s, 'upstream playback not resumed', null, slog);
        done = true;
      } else if (now - orphan.since >= d.giveUpMs) {
        await release(holder, s, 'not recovered in time', null, slog);
        done = true;
      } else {
        done = await recover(holder, s, orphan, slog);
      }
    } finally {
      if (!done) await d.store.unlock(e.callId, d.self).catch(() => undefined);
    }
  };

  const scan = async (loop: ScanLoopView): Promise<void> => {
    if (!d.isLeader()) return;
    const now = d.clock.now();
    const seen = new Map<string, Orphan>();
    const queue: (() => Promise<void>)[] = [];
    for (const holder of new Set([...loop.gone.filter((c) => c !== d.self), d.self])) {
      let entries: IndexedSnapshot<UpstreamSnapshot>[];
      try {
        entries = await d.store.list(holder, LIST_LIMIT);
      } catch (err) {
        log.warn({ err, holder }, 'upstream view index not read: next scan');
        continue;
      }
      for (const e of entries) {
        if (holder === d.self && e.state === 'ok' && e.snapshot.run === d.run) continue; // ours, alive
        const key = `${holder}\n${e.callId}`;
        seen.set(key, orphans.get(key) ?? { since: now, stream: INITIAL_WATCH });
        queue.push(() => work(holder, e, now));
      }
    }
    orphans = seen;
    await runJobs(queue, MAX_PARALLEL, () => loop.closed || !d.isLeader(), log, 'orphaned upstream view step failed: next scan');
  };

  return createScanLoop({ clock: d.clock, scanPeriodMs: d.scanPeriodMs, log, failureMessage: 'upstream recovery scan failed' }, scan);
}

/** The upstream's y=, or null when the saved offer does not read. */
function readSsrc(s: UpstreamSnapshot): string | null {
  try {
    return readUpstreamOffer(s.offerSdp).ssrc;
  } catch {
    return null;
  }
}
