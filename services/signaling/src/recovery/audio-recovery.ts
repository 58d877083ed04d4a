// Session continuity of voice talk and broadcast (GB/T 28181-2016 §9.12; SPEC §11 RECOVER), the recovering side.
// The same scan loop as the device media sessions and the cascade (scan-loop.ts): every scan period — and at once
// when a node-table read shows a holder gone or a device registers here — this instance reads the audio indexes of
// the gone holders (and its own entries of an earlier run or handed to it by a moving device), decides per entry
// (decideOrphan: the device must be owned and reachable here) and acts under the per-dialog recovery lock, so
// exactly one instance acts on each session:
//   still wanted (decideAudioMedia: the operator's source is on the node, and for talk someone still plays the
//   device's audio or it is not there to tell) →
//       the old dialog gets a BYE (the device may still hold it; a rebooted one answers 481), the node's old
//       sending to the device is stopped (it releases the talk stream with it), and a new Notify/Broadcast asks the
//       device to INVITE again: the answer sends the same source and receives into the same talk_<channelId>, so the
//       operator's play URL keeps working. The new dialog is journaled by this instance, the old entry ended.
//   not wanted, superseded, or not back within give-up → released: BYE, sending stopped, entry ended.
// We are the UAS of these dialogs (the device INVITEs), so re-establishing is a new §9.12 exchange rather than a
// re-INVITE of ours: a device that rebooted has no dialog left to refresh.
// Bounded: index reads limited, MAX_PARALLEL entries at once, each re-established or released within give-up of
// the first scan that saw it orphaned; the device's INVITE is awaited at most the broadcast's invite wait.
import type { Dialog, Flow, SipStack } from '@vms/sip';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import { dialogStateOf } from '../media/saved-dialog.ts';
import type { AudioMode, BroadcastSource, BroadcastView } from '../sip/sip-broadcast.ts';
import type { AudioSnapshot } from './audio-snapshot.ts';
import { decideAudioMedia } from './audio-decision.ts';
import { workOrphan, type OrphanStepDeps } from './orphan-step.ts';
import type { MediaView } from './recovery-decision.ts';
import type { IndexedSnapshot, SessionSnapshotStore } from './session-snapshots.port.ts';
import { createOrphanReader, createScanLoop, runJobs, type RecoveryScanLoop, type ScanLoopView } from './scan-loop.ts';

const LIST_LIMIT = 1000;
const MAX_PARALLEL = 8;

export type AudioRecoveryOutcome = { readonly outcome: 'recovered' } | { readonly outcome: 'released' | 'forgotten'; readonly reason: string };

export interface AudioRecoveryDeps {
  readonly store: SessionSnapshotStore<AudioSnapshot>;
  readonly self: string;
  readonly run: string;
  /** The audio sessions of this instance (sip-broadcast.ts). */
  readonly audio: {
    start(target: { deviceId: string; channelId: string }, source: BroadcastSource, mode: AudioMode): Promise<BroadcastView>;
    busy(channelId: string): boolean;
  };
  /** The node's sending to the device (AudioSender.stop). */
  readonly stopSending: (source: BroadcastSource, ssrc: string) => Promise<void>;
  /** What the media node says about one of its streams (app/stream). */
  readonly probe: (mediaNodeId: string, app: string, stream: string) => Promise<MediaView>;
  readonly stack: Pick<SipStack, 'restoreDialog'>;
  /** The device's flow here (registered here), or undefined. */
  readonly flowOf: (deviceId: string) => Flow | undefined;
  readonly ownedHere: (deviceId: string) => boolean;
  readonly giveUpMs: number;
  readonly scanPeriodMs: number;
  readonly lockTtlMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onOutcome?: (o: AudioRecoveryOutcome) => void;
}

export type AudioRecovery = RecoveryScanLoop;

const RTP_APP = 'rtp';

export function createAudioRecovery(d: AudioRecoveryDeps): AudioRecovery {
  const log = d.log.child({ component: 'audio-recovery' });

  /** BYE on the old dialog through the device's flow here; not awaited (a rebooted device answers 481). */
  const byeOld = (s: AudioSnapshot, slog: Logger): void => {
    const flow = d.flowOf(s.deviceId);
    if (flow === undefined) return;
    let dialog: Dialog;
    try {
      dialog = d.stack.restoreDialog(dialogStateOf(s.dialog, 'uas'), flow);
    } catch (err) {
      slog.warn({ err }, 'saved audio dialog not restorable');
      return;
    }
    void dialog.destroy().catch((err: unknown) => slog.debug({ err }, 'old audio dialog BYE failed'));
  };

  const stopOld = (s: AudioSnapshot, slog: Logger): Promise<void> =>
    // already gone when the node timed it out or restarted: nothing half-open either way
    d.stopSending(s.source, s.ssrc).catch((err: unknown) => slog.debug({ err }, 'stopSendRtp of an orphaned audio session failed'));

  const release = async (holder: string, s: AudioSnapshot, reason: string, slog: Logger): Promise<void> => {
    byeOld(s, slog);
    await stopOld(s, slog);
    await d.store.end(holder, s.dialog.callId, d.lockTtlMs);
    slog.info({ reason }, 'orphaned audio session released');
    d.onOutcome?.({ outcome: 'released', reason });
  };

  /** True when done with the entry, false to look again at the next scan. */
  const recover = async (holder: string, s: AudioSnapshot, slog: Logger): Promise<boolean> => {
    const [source, received] = await Promise.all([
      d.probe(s.source.mediaNodeId, s.source.app, s.source.stream),
      s.receiveStreamId === undefined ? Promise.resolve<MediaView>({ kind: 'absent' }) : d.probe(s.source.mediaNodeId, RTP_APP, s.receiveStreamId),
    ]);
    const step = decideAudioMedia({ purpose: s.purpose, source, received, channelBusyHere: d.audio.busy(s.channelId) });
    if (step.kind === 'retry') {
      slog.info({ reason: step.reason }, 'orphaned audio session: next scan');
      return false;
    }
    if (step.kind === 'release') {
      await release(holder, s, step.reason, slog);
      return true;
    }
    const t0 = d.clock.now();
    byeOld(s, slog);
    await stopOld(s, slog);
    try {
      const view = await d.audio.start({ deviceId: s.deviceId, channelId: s.channelId }, s.source, s.purpose);
      await d.store.end(holder, s.dialog.callId, d.lockTtlMs).catch((err: unknown) => slog.warn({ err }, 'recovered audio entry not ended: it expires'));
      slog.info({ callId: view.sessionId, ms: d.clock.now() - t0, receiveStreamId: s.receiveStreamId }, 'orphaned audio session recovered');
      d.onOutcome?.({ outcome: 'recovered' });
      return true;
    } catch (err) {
      slog.warn({ err }, 'orphaned audio session not re-established: tried again next scan until give-up');
      return false;
    }
  };

  const slogOf = (holder: string, s: AudioSnapshot): Logger => log.child({ holder, oldCallId: s.dialog.callId, purpose: s.purpose, deviceId: s.deviceId, channelId: s.channelId });
  const step: OrphanStepDeps<AudioSnapshot> = {
    store: d.store,
    self: d.self,
    lockTtlMs: d.lockTtlMs,
    giveUpMs: d.giveUpMs,
    ownedHere: d.ownedHere,
    reachable: (deviceId) => d.flowOf(deviceId) !== undefined,
    log,
    kind: 'audio session',
    onForgotten: (reason) => d.onOutcome?.({ outcome: 'forgotten', reason }),
    release: (holder, s, reason) => release(holder, s, reason, slogOf(holder, s)),
    recover: (holder, s) => recover(holder, s, slogOf(holder, s)),
  };
  const work = (holder: string, e: IndexedSnapshot<AudioSnapshot>, since: number, now: number): Promise<void> => workOrphan(step, holder, e, since, now);

  const orphans = createOrphanReader({ store: d.store, self: d.self, run: d.run, limit: LIST_LIMIT, log });
  const scan = async (loop: ScanLoopView): Promise<void> => {
    const now = d.clock.now();
    const queue = (await orphans(loop, now)).map((o) => () => work(o.holder, o.entry, o.since, now));
    await runJobs(queue, MAX_PARALLEL, () => loop.closed, log, 'orphaned audio session step failed: next scan');
  };

  return createScanLoop({ clock: d.clock, scanPeriodMs: d.scanPeriodMs, log, failureMessage: 'audio recovery scan failed' }, scan);
}
