// Live view asked for by an upstream platform (SPEC CASC-6; GB/T 28181-2016 §9.2): the upstream sends
// the cascade leader an INVITE for a shared channel, with an SDP offer saying where it wants the RTP
// (c= / m=, UDP or TCP) and which SSRC (y=). The leader
//   1. checks the platform, its leadership, the offer and that the channel is shared with that platform;
//   2. joins the channel's live stream as one more viewer (LiveSource: the ordinary play path, owner-
//      routed to the device's owner, which INVITEs the device into a media node; the stream is shared);
//   3. waits until the media node has the stream, then has it re-send it to the upstream
//      (RtpForwarder: ZLM startSendRtp with the upstream's y=);
//   4. answers 200 with an SDP naming the media node's sending address and the same y=.
// Playback and download (§9.8, §9.9, s=Playback / Download with a t= range) take the same steps through
// the playback / download path; the upstream's MANSRTSP INFO (pause, resume, seek, speed) is relayed to
// the owner's playback control and answered with its outcome.
// The upstream's BYE (or a missing ACK, or close) stops the sending and leaves the stream (the owner
// ends it with its last viewer). A device stream that ends on its own (device BYE or offline, RTP
// timeout, an operator's stop, the media node dropping it) is seen by the leader's stream check
// (live-view-watch.ts: getMediaList every STREAM_CHECK_MS): the leader BYEs the upstream and undoes
// the same way. A failure at any step undoes the steps before it and answers the
// status of the CascadeError's code (CASCADE_ERROR_INFO): 404 unshared, 400/488 offer, 480/504 source,
// 500 media, 503 not the leader. A CANCEL (the stack has answered 487) undoes the same way.
import { buildUpstreamAnswer, CascadeError, isCascadeError, readUpstreamOffer, type PlatformRepository, type UpstreamOffer, type UpstreamPlatform } from '@vms/cascade';
import { isGbError, parseMansrtsp } from '@vms/gb28181';
import { SipStatus, type Dialog, type DialogTerminationReason, type RequestContext, type ServerContext, type SipRequest } from '@vms/sip';
import { platformOfRequest } from './platform-of-request.ts';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import { StreamWatcher, type GoneReason, type StreamProbe } from './live-view-watch.ts';
import type { HistoryAction, HistoryRequest, LiveSource, LiveViewer, RtpForwarder } from './upstream-live.port.ts';
import { saveDialog } from '../media/saved-dialog.ts';
import type { SessionJournal } from '../recovery/session-journal.ts';
import { MAX_OFFER_BYTES, type UpstreamSnapshot } from './upstream-snapshot.ts';

/** The media node must have the device's stream within this time after the play answered, ms. */
export const STREAM_READY_TIMEOUT_MS = 10_000;
const SDP_CONTENT_TYPE = 'application/sdp';
const GB_ID = /^\d{20}$/;

export interface UpstreamLiveOptions {
  /** Known upstream platforms by server id. */
  readonly known: () => ReadonlyMap<string, UpstreamPlatform>;
  readonly platforms: Pick<PlatformRepository, 'sharesOf' | 'listChannels'>;
  readonly devices: Pick<DeviceRepository, 'findChannelDevice' | 'getDevice'>;
  /** CASC-6: only the cascade leader serves the upstream's INVITEs. */
  readonly isLeader: () => boolean;
  readonly source: LiveSource;
  readonly forwarder: RtpForwarder;
  readonly log: Logger;
  readonly streamTimeoutMs?: number;
  /** Checks the forwarded streams on their media node; absent: a stream ending on its own is not noticed. */
  readonly watch?: { readonly probe: StreamProbe; readonly clock: Clock; readonly intervalMs?: number };
  /** SPEC §11: snapshots of the accepted dialogs, so the next leader recovers them after a crash; absent = none. */
  readonly journal?: { readonly journal: SessionJournal<UpstreamSnapshot>; readonly clock: Pick<Clock, 'now'> } | null;
}

/** A dialog taken over from a crashed leader's snapshot (upstream-recovery.ts): re-INVITEd, sending again. */
export interface AdoptedView {
  readonly snapshot: UpstreamSnapshot;
  readonly dialog: Dialog;
  readonly ssrc: string;
  /** o= version of the SDP the re-INVITE carried. */
  readonly sdpVersion: number;
}

type EndReason = DialogTerminationReason | GoneReason | 'closing';

/** One upstream live view: its dialog, the viewer it holds and the sending it started. */
interface UpstreamView {
  readonly callId: string;
  readonly platformId: string;
  readonly channelId: string;
  readonly deviceId: string;
  readonly tenantId: string;
  readonly viewer: LiveViewer;
  readonly ssrc: string;
  readonly dialog: Dialog;
  readonly log: Logger;
  /** For the snapshot (SPEC §11). */
  readonly offerSdp: string;
  readonly sdpVersion: number;
  readonly createdAt: number;
  ended: Promise<void> | null;
}

/** What a set-up has acquired so far, undone in reverse when it fails. */
interface Acquired {
  viewer?: LiveViewer;
  tenantId?: string;
  sending?: { nodeId: string; streamId: string; ssrc: string };
}

export class UpstreamLiveViews {
  readonly #o: UpstreamLiveOptions;
  readonly #log: Logger;
  readonly #views = new Map<string, UpstreamView>();
  readonly #settingUp = new Set<AbortController>();
  readonly #watcher: StreamWatcher | null;
  #closed = false;

  constructor(opts: UpstreamLiveOptions) {
    this.#o = opts;
    this.#log = opts.log.child({ component: 'upstream-live' });
    const w = opts.watch;
    this.#watcher =
      w === undefined ? null : new StreamWatcher({ clock: w.clock, probe: w.probe, intervalMs: w.intervalMs, onGone: (key, reason) => void this.#streamGone(key, reason) });
  }

  /** Upstream live views established (answered 200, not ended). */
  get size(): number {
    return this.#views.size;
  }

  /** For `stack.onRequest('INVITE', …)`. Never throws: every outcome is a SIP answer and a log line. */
  readonly onInvite = (req: SipRequest, ctx: ServerContext): void => {
    const p = platformOfRequest(req, this.#o.known());
    if (p === undefined) {
      // devices do not INVITE this platform; only known upstream platforms may
      ctx.reply(SipStatus.Forbidden);
      return;
    }
    const channelId = req.uri.user ?? '';
    const callId = req.headers.get('Call-ID') ?? '';
    const log = this.#log.child({ platformId: p.serverId, channelId, callId });
    const abort = new AbortController();
    this.#settingUp.add(abort);
    const onCancel = (): void => abort.abort();
    ctx.signal.addEventListener('abort', onCancel, { once: true });
    const acquired: Acquired = {};
    this.#setUp(p, channelId, req, ctx, abort.signal, acquired, log)
      .catch(async (err: unknown) => {
        await this.#undo(acquired, log);
        const status = isCascadeError(err) ? err.sipStatus : SipStatus.ServerInternalError;
        if (ctx.finalSent) {
          log.info({ err }, 'upstream live view abandoned (cancelled or closing)');
          return;
        }
        try {
          ctx.reply(status);
        } catch (replyErr) {
          log.debug({ err: replyErr }, 'answer to the upstream not sent (stack closing)');
        }
        if (isCascadeError(err) && status < 500) log.info({ code: err.code, status, reason: err.message }, 'upstream live view refused');
        else log.warn({ err, status }, 'upstream live view failed');
      })
      .finally(() => {
        this.#settingUp.delete(abort);
        ctx.signal.removeEventListener('abort', onCancel);
      });
  };

  /** BYE to every upstream live view, stop their sendings, leave their streams. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#watcher?.close();
    for (const a of this.#settingUp) a.abort();
    await Promise.all(
      [...this.#views.values()].map(async (v) => {
        await v.dialog.destroy().catch((err: unknown) => v.log.debug({ err }, 'BYE to upstream failed'));
        await this.#end(v, 'closing');
      }),
    );
  }

  async #setUp(p: UpstreamPlatform, channelId: string, req: SipRequest, ctx: ServerContext, signal: AbortSignal, acquired: Acquired, log: Logger): Promise<void> {
    const stillWanted = (): void => {
      if (this.#closed) throw new CascadeError('CASCADE_ERR_CLOSED', 'closing');
      if (signal.aborted) throw new CascadeError('CASCADE_ERR_CLOSED', 'cancelled by the upstream');
    };
    if (!this.#o.isLeader()) throw new CascadeError('CASCADE_ERR_NOT_LEADER', 'this instance is not the cascade leader');
    if (!GB_ID.test(channelId)) throw new CascadeError('CASCADE_ERR_CHANNEL_NOT_SHARED', `Request-URI user ${JSON.stringify(channelId)} is not a channel id`);
    const offer = readUpstreamOffer(req.body);
    const deviceId = await this.#sharedDevice(p, channelId);
    const device = await this.#o.devices.getDevice(deviceId);
    if (device === null) throw new CascadeError('CASCADE_ERR_CHANNEL_NOT_SHARED', `device ${deviceId} unknown`);
    // SPEC SEC-2: a platform is given only its own tenant's channels (a device moved to another tenant since it was shared)
    if (device.tenantId !== p.tenantId) throw new CascadeError('CASCADE_ERR_CHANNEL_NOT_SHARED', `channel ${channelId} is not shared with ${p.serverId}`);
    const vlog = log.child({ deviceId });
    vlog.info({ dst: `${offer.address}:${offer.port}`, transport: offer.transport, ssrc: offer.ssrc }, 'upstream live view requested');
    stillWanted();

    acquired.tenantId = device.tenantId;
    const history = historyOf(offer);
    acquired.viewer = await this.#o.source.start({ deviceId, channelId, tenantId: device.tenantId, ...(history === undefined ? {} : { history }) });
    const viewer = acquired.viewer;
    stillWanted();
    await this.#o.forwarder.waitForStream(viewer.mediaNodeId, viewer.streamId, this.#o.streamTimeoutMs ?? STREAM_READY_TIMEOUT_MS, signal);
    stillWanted();
    const sending = await this.#o.forwarder.start(viewer.mediaNodeId, {
      streamId: viewer.streamId,
      ssrc: offer.ssrc,
      dstAddress: offer.address,
      dstPort: offer.port,
      udp: offer.transport === 'udp',
      payloadType: offer.payloadType,
    });
    acquired.sending = { nodeId: viewer.mediaNodeId, streamId: viewer.streamId, ssrc: offer.ssrc };
    stillWanted();

    const answer = buildUpstreamAnswer({ channelId, address: sending.address, port: sending.port, offer });
    const dialog = ctx.accept({ body: answer, contentType: SDP_CONTENT_TYPE });
    const view: UpstreamView = {
      callId: dialog.callId,
      platformId: p.serverId,
      channelId,
      deviceId,
      tenantId: device.tenantId,
      viewer,
      ssrc: offer.ssrc,
      dialog,
      log: vlog.child({ sessionId: viewer.sessionId, streamId: viewer.streamId, nodeId: viewer.mediaNodeId }),
      offerSdp: req.body.toString('utf8'),
      sdpVersion: 0,
      createdAt: this.#o.journal?.clock.now() ?? 0,
      ended: null,
    };
    this.#register(view);
    view.log.info({ sendFrom: `${sending.address}:${sending.port}` }, 'upstream live view started');
  }

  /**
   * SPEC §11: a view a crashed leader held, taken over by this leader once the upstream accepted the re-INVITE
   * (upstream-recovery.ts): served from now on like one set up here. False (nothing done) when closing.
   */
  adopt(a: AdoptedView): boolean {
    if (this.#closed || a.dialog.terminated) return false;
    const s = a.snapshot;
    const viewer: LiveViewer = { purpose: s.purpose, ...s.viewer };
    const view: UpstreamView = {
      callId: a.dialog.callId,
      platformId: s.platformId,
      channelId: s.channelId,
      deviceId: s.deviceId,
      tenantId: s.tenantId,
      viewer,
      ssrc: a.ssrc,
      dialog: a.dialog,
      log: this.#log.child({ platformId: s.platformId, channelId: s.channelId, callId: a.dialog.callId, deviceId: s.deviceId, sessionId: viewer.sessionId, streamId: viewer.streamId, nodeId: viewer.mediaNodeId }),
      offerSdp: s.offerSdp,
      sdpVersion: a.sdpVersion,
      createdAt: s.createdAt,
      ended: null,
    };
    this.#register(view);
    view.log.info({ previousHolder: s.holder }, 'upstream live view recovered');
    return true;
  }

  /** Listeners, stream check and snapshot of an accepted (or adopted) view. */
  #register(view: UpstreamView): void {
    const { dialog, viewer } = view;
    this.#views.set(dialog.id, view);
    dialog.on('ack', () => view.log.info('upstream live view acknowledged'));
    if (viewer.purpose === 'playback') {
      dialog.on('info', (infoReq, infoCtx) => {
        this.#relayInfo(view, infoReq, infoCtx).catch((err: unknown) => {
          view.log.warn({ err }, 'upstream playback control failed');
          if (!infoCtx.finalSent) infoCtx.reply(SipStatus.ServerInternalError);
        });
      });
    }
    dialog.on('terminated', (reason: DialogTerminationReason) => void this.#end(view, reason));
    this.#watcher?.watch(dialog.id, viewer.mediaNodeId, viewer.streamId);
    this.#record(view);
  }

  /** SPEC §11: (re)writes the view's snapshot; never waits, never throws. */
  #record(view: UpstreamView, ending = false): void {
    const j = this.#o.journal;
    if (j == null) return;
    if (Buffer.byteLength(view.offerSdp) > MAX_OFFER_BYTES) {
      view.log.info('upstream offer too long to keep: this view does not survive a crash');
      return;
    }
    const { platformId, channelId, deviceId, tenantId, viewer, offerSdp, sdpVersion, createdAt } = view;
    j.journal.record({
      platformId,
      channelId,
      deviceId,
      tenantId,
      purpose: viewer.purpose,
      viewer: { sessionId: viewer.sessionId, streamId: viewer.streamId, mediaNodeId: viewer.mediaNodeId },
      offerSdp,
      sdpVersion,
      createdAt,
      dialog: saveDialog(view.dialog),
      ...(ending ? { ending: true as const } : {}),
    });
  }

  /** The upstream's MANSRTSP INFO on a playback (§9.8, Annex B): the owner's playback control, answered with its outcome. */
  async #relayInfo(view: UpstreamView, req: SipRequest, ctx: RequestContext): Promise<void> {
    let action: HistoryAction | null;
    try {
      action = actionOf(req.body);
    } catch (err) {
      if (!isGbError(err) && !isCascadeError(err)) throw err;
      view.log.info({ reason: err.message }, 'upstream playback control not understood');
      ctx.reply(SipStatus.BadRequest);
      return;
    }
    if (action === null) {
      ctx.reply(SipStatus.OK); // TEARDOWN: the BYE that follows ends the session
      return;
    }
    try {
      await this.#o.source.control(view.viewer, view.tenantId, action);
      view.log.info({ action: action.action, value: 'value' in action ? action.value : undefined }, 'upstream playback control relayed');
      ctx.reply(SipStatus.OK);
    } catch (err) {
      const status = isCascadeError(err) ? err.sipStatus : SipStatus.ServerInternalError;
      view.log.info({ err, status }, 'upstream playback control refused');
      ctx.reply(status);
    }
  }

  /** The device of a channel shared with `p`; CASCADE_ERR_CHANNEL_NOT_SHARED otherwise. */
  async #sharedDevice(p: UpstreamPlatform, channelId: string): Promise<string> {
    const reported = await this.#o.devices.findChannelDevice(channelId);
    if (reported !== null && (await this.#o.platforms.sharesOf(reported, channelId)).some((s) => s.platformId === p.serverId)) return reported;
    // the same channel id reported by several devices: the one shared with this platform
    const share = (await this.#o.platforms.listChannels(p.serverId)).find((s) => s.channelId === channelId);
    if (share === undefined) throw new CascadeError('CASCADE_ERR_CHANNEL_NOT_SHARED', `channel ${channelId} is not shared with ${p.serverId}`);
    return share.deviceId;
  }

  /** The device stream ended on its own: BYE to the upstream, then the same teardown as its BYE. */
  async #streamGone(key: string, reason: GoneReason): Promise<void> {
    const view = this.#views.get(key);
    if (view === undefined || view.ended !== null) return;
    view.log.info({ reason }, 'device stream gone: ending the upstream live view');
    const ended = this.#end(view, reason);
    await view.dialog.destroy().catch((err: unknown) => view.log.debug({ err }, 'BYE to upstream failed'));
    await ended;
  }

  /** Stops the sending and leaves the stream; each failure logged, never thrown. Once per view. */
  #end(view: UpstreamView, reason: EndReason): Promise<void> {
    view.ended ??= (async () => {
      this.#views.delete(view.dialog.id);
      this.#watcher?.unwatch(view.dialog.id);
      // SPEC §11: marked ending before the teardown (a crash during it leaves the next leader to finish it, never
      // to re-INVITE), tombstoned once it is done
      this.#record(view, true);
      // the stream gone, the media node stopped the sending and the owner ended the session: failures expected
      const quiet = reason === 'stream-gone' || reason === 'stream-restarted' || reason === 'media-node-unreachable';
      await this.#undo({ viewer: view.viewer, tenantId: view.tenantId, sending: { nodeId: view.viewer.mediaNodeId, streamId: view.viewer.streamId, ssrc: view.ssrc } }, view.log, quiet);
      await this.#o.journal?.journal.ended(view.callId);
      view.log.info({ reason }, 'upstream live view ended');
    })();
    return view.ended;
  }

  async #undo(a: Acquired, log: Logger, quiet = false): Promise<void> {
    const fail = (quiet ? log.debug : log.warn).bind(log);
    if (a.sending !== undefined) {
      const s = a.sending;
      await this.#o.forwarder.stop(s.nodeId, s.streamId, s.ssrc).catch((err: unknown) => fail({ err, nodeId: s.nodeId }, 'stopSendRtp failed'));
    }
    if (a.viewer !== undefined && a.tenantId !== undefined) {
      const v = a.viewer;
      await this.#o.source.stop(v, a.tenantId).catch((err: unknown) => fail({ err, sessionId: v.sessionId }, 'leaving the live stream failed'));
    }
  }
}

function historyOf(offer: UpstreamOffer): HistoryRequest | undefined {
  if (offer.purpose === 'live' || offer.range === undefined) return undefined;
  return { purpose: offer.purpose, start: offer.range.start, end: offer.range.end, ...(offer.downloadSpeed === undefined ? {} : { speed: offer.downloadSpeed }) };
}

/**
 * MANSRTSP (GB/T 28181-2016 Annex B) → playback control: PAUSE; PLAY with Scale (speed), with an npt range
 * start (seek), or plain (resume); TEARDOWN → null. GB_ERR_* on a body that is not MANSRTSP.
 */
export function actionOf(body: Buffer): HistoryAction | null {
  const r = parseMansrtsp(body);
  if (r.method === 'PAUSE') return { action: 'pause' };
  if (r.method === 'TEARDOWN') return null;
  if (r.method !== 'PLAY') throw new CascadeError('CASCADE_ERR_ARGUMENT', `MANSRTSP ${r.method}`);
  if (r.scale !== undefined) return { action: 'speed', value: r.scale };
  if (r.range !== undefined && r.range.start !== 'now') return { action: 'seek', value: r.range.start };
  return { action: 'resume' };
}
