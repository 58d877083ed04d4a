// Voice broadcast (GB/T 28181-2016 §9.12) for devices registered here. The platform sends
// Notify/Broadcast (SourceID = this platform, TargetID = the device's audio output channel) and the
// device, after its Result OK, INVITEs the source for audio. That INVITE is answered with the media
// node's side: the node sends the audio stream the caller named (`app`/`stream`, e.g. an operator's
// microphone pushed there) to the device's `m=audio` port with ZLM startSendRtp, and the 200's SDP
// carries the node's address and sending port (sendonly, G.711A, the device's y= SSRC). BYE from
// either side stops the sending. `start` resolves once the device's INVITE was answered (4606 after
// `inviteWaitMs` without one).
//
// Talk (语音对讲, two-way) follows the same §9.12 signalling — there is no separate talk command in
// GB/T 28181-2016/2022 — with the device's offer `sendrecv`: the media node sends the operator's
// stream with ZLM startSendRtp and `recv_stream_id`, so the port it sends from also receives, the
// answer names that port `a=sendrecv`, and the device's audio becomes the node's stream
// `talk_<channelId>` (app `rtp`) for the operator to play. A device offering `recvonly` cannot talk:
// 488 to its INVITE and 4607 to the caller. One audio session (broadcast or talk) per channel, at
// most MAX_AUDIO_SESSIONS per instance; BYE from either side, the device going offline or the
// instance closing ends it and releases the node's sender (and with it the received stream).
//
// Session continuity (SPEC §11): with a journal, each accepted audio dialog is snapshotted (recovery/
// audio-snapshot.ts) and ending it — BYE either side, stop, device offline, closing — writes the tombstone
// before the sender is stopped, so a crash right after a stop never brings it back; a device that moves to
// another live instance (OWN-4) has its sessions handed off there without a BYE (recovery/audio-recovery.ts).
import { buildBroadcastNotify, buildSdp, parseSdp, RESULT_ERROR, type ResultResponse } from '@vms/gb28181';
import { getFrom, SipStatus, type Dialog, type ServerContext, type SipRequest } from '@vms/sip';
import type { ChannelRef } from '../control/device-control.port.ts';
import { BadParameterError, DeviceRejectedError, DeviceTimeoutError, isVmsError, MediaFailedError, MediaSessionNotFoundError, type VmsError } from '../errors/catalog.ts';
import type { TimerHandle } from '../core/clock.ts';
import type { DeviceExchange } from './device-exchange.ts';
import { edgeFlowOf, sameDeviceFlow } from './device-trust.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import { talkStreamId } from '../media/talk-stream.ts';
import { saveDialog } from '../media/saved-dialog.ts';
import type { AudioSnapshot } from '../recovery/audio-snapshot.ts';
import type { SessionJournal } from '../recovery/session-journal.ts';

/** G.711 A-law, RFC 3551 static payload type 8: what GB/T 28181 §9.12 devices take. */
export const PT_PCMA = 8;
const SDP_CONTENT_TYPE = 'APPLICATION/SDP';

export interface BroadcastSource {
  readonly mediaNodeId: string;
  readonly app: string;
  readonly stream: string;
}

/** Bound on concurrent audio sessions per instance (SPEC SEC-3: every wait and table bounded). */
export const MAX_AUDIO_SESSIONS = 256;

export type AudioMode = 'broadcast' | 'talk';

/** The media node side: send `source` as RTP to the device (ZLM startSendRtp / stopSendRtp). */
export interface AudioSender {
  /** `receiveStreamId` (talk): the node also receives on the sending port, published under that stream id. */
  start(source: BroadcastSource, to: { ssrc: string; host: string; port: number; payloadType: number; receiveStreamId?: string }): Promise<{ address: string; port: number }>;
  stop(source: BroadcastSource, ssrc: string): Promise<void>;
}

export interface BroadcastView {
  readonly mode: AudioMode;
  readonly sessionId: string;
  readonly deviceId: string;
  readonly channelId: string;
  readonly ssrc: string;
  readonly mediaNodeId: string;
  readonly deviceAudio: string;
  /** Talk: where the device's audio is on the media node (ZLM app/stream). */
  readonly deviceStream?: { readonly app: string; readonly stream: string };
  readonly startedAt: number;
}

const RTP_APP = 'rtp';

interface Expectation {
  readonly mode: AudioMode;
  readonly target: ChannelRef;
  readonly source: BroadcastSource;
  readonly timer: TimerHandle;
  resolve(v: BroadcastView): void;
  reject(e: VmsError): void;
}

interface Live {
  readonly view: BroadcastView;
  readonly dialog: Dialog;
  readonly source: BroadcastSource;
}

export interface SipBroadcast {
  start(target: ChannelRef, source: BroadcastSource, mode?: AudioMode): Promise<BroadcastView>;
  /** Ends the channel's session of that mode (404 when there is none). */
  stop(channelId: string, mode?: AudioMode): Promise<void>;
  list(deviceId: string, mode?: AudioMode): readonly BroadcastView[];
  /** An audio session with the channel is running or being set up here. */
  busy(channelId: string): boolean;
  /** OWN-4 with SPEC §11: the device is owned by `newOwner` now; its sessions are handed there, no BYE. */
  onDeviceMoved(deviceId: string, newOwner: string): Promise<void>;
  /** For the stack's INVITE handler: true when the INVITE is a device's broadcast answer (handled). */
  onInvite(req: SipRequest, ctx: ServerContext): boolean;
  close(): Promise<void>;
}

export interface SipBroadcastOptions {
  readonly side: DeviceSideDeps;
  readonly exchange: DeviceExchange;
  readonly sender: AudioSender;
  readonly serverId: string;
  readonly inviteWaitMs: number;
  /** Session continuity (SPEC §11); absent: nothing outlives this process. */
  readonly journal?: SessionJournal<AudioSnapshot> | null;
}

export function createSipBroadcast(o: SipBroadcastOptions): SipBroadcast {
  const { side, exchange, sender } = o;
  const journal = o.journal ?? null;
  const log = side.log.child({ component: 'broadcast' });
  const waiting = new Map<string, Expectation>();
  const live = new Map<string, Live>();

  const end = async (l: Live, why: string): Promise<void> => {
    if (live.get(l.view.channelId) !== l) return;
    live.delete(l.view.channelId);
    // SPEC §11: the tombstone before the teardown, so a crash from here on never resurrects the session
    await journal?.ended(l.dialog.callId);
    await sender.stop(l.source, l.view.ssrc).catch((err: unknown) => log.warn({ err, channelId: l.view.channelId }, 'stopping the broadcast audio failed'));
    log.info({ mode: l.view.mode, deviceId: l.view.deviceId, channelId: l.view.channelId, why }, 'audio session ended');
  };
  // a device that went offline sends no BYE: its sessions end here (BYE attempted, sender released)
  const offOffline = side.events.on('offline', (ev) => {
    for (const l of [...live.values()]) {
      if (l.view.deviceId !== ev.deviceId) continue;
      void end(l, 'device offline'); // first: the BYE's own 'terminated' then finds it ended
      void l.dialog.destroy().catch(() => undefined);
    }
  });

  const answerInvite = async (req: SipRequest, ctx: ServerContext, e: Expectation): Promise<BroadcastView> => {
    const offer = parseSdp(req.body);
    const audio = offer.media.find((m) => m.type === 'audio' && m.port > 0);
    const host = audio?.connection?.address ?? offer.connection?.address;
    if (audio === undefined || host === undefined || offer.ssrc === undefined) throw new DeviceRejectedError(e.target.deviceId, 'broadcast INVITE', 'no audio port, address or y= in the offer');
    const talk = e.mode === 'talk';
    // RFC 3264 §6.1: a recvonly offer can only be answered sendonly — no audio can come back
    if (talk && (audio.attributes.some((a) => a.name === 'recvonly' || a.name === 'inactive') || offer.attributes.some((a) => a.name === 'recvonly' || a.name === 'inactive'))) {
      throw new DeviceRejectedError(e.target.deviceId, 'talk INVITE', 'the device offered receive-only audio: it cannot talk');
    }
    const deviceStream = talk ? { app: RTP_APP, stream: talkStreamId(e.target.channelId) } : undefined;
    const to = { ssrc: offer.ssrc, host, port: audio.port, payloadType: PT_PCMA, ...(deviceStream === undefined ? {} : { receiveStreamId: deviceStream.stream }) };
    const from = await sender.start(e.source, to);
    const answer = buildSdp({
      version: '0',
      origin: { username: o.serverId, sessionId: '0', sessionVersion: '0', netType: 'IN', addrType: 'IP4', address: from.address },
      sessionName: 'Play',
      connection: { netType: 'IN', addrType: 'IP4', address: from.address },
      timing: { start: '0', stop: '0' },
      attributes: [],
      media: [{ type: 'audio', port: from.port, protocol: 'RTP/AVP', formats: [String(PT_PCMA)], attributes: [{ name: 'rtpmap', value: `${PT_PCMA} PCMA/8000` }, { name: talk ? 'sendrecv' : 'sendonly' }] }],
      ssrc: offer.ssrc,
      format: 'v/////a/1/8/1',
    });
    const dialog = ctx.accept({ body: Buffer.from(answer), contentType: SDP_CONTENT_TYPE });
    const view: BroadcastView = {
      mode: e.mode,
      sessionId: req.headers.get('Call-ID') ?? '',
      deviceId: e.target.deviceId,
      channelId: e.target.channelId,
      ssrc: offer.ssrc,
      mediaNodeId: e.source.mediaNodeId,
      deviceAudio: `${host}:${audio.port}`,
      ...(deviceStream === undefined ? {} : { deviceStream }),
      startedAt: side.clock.now(),
    };
    const l: Live = { view, dialog, source: e.source };
    live.set(view.channelId, l);
    dialog.once('terminated', (reason) => void end(l, String(reason)));
    journal?.record({
      purpose: view.mode,
      deviceId: view.deviceId,
      channelId: view.channelId,
      source: e.source,
      ssrc: view.ssrc,
      deviceAudio: { host, port: audio.port },
      sendPort: from.port,
      ...(deviceStream === undefined ? {} : { receiveStreamId: deviceStream.stream }),
      dialog: saveDialog(dialog),
      createdAt: view.startedAt,
    });
    log.info({ mode: view.mode, deviceId: view.deviceId, channelId: view.channelId, ssrc: view.ssrc, deviceAudio: view.deviceAudio }, 'audio session started');
    return view;
  };

  return {
    async start(target, source, mode = 'broadcast') {
      const session = exchange.sessionOf(target.deviceId);
      if (waiting.has(target.channelId) || live.has(target.channelId)) throw new BadParameterError('channelId', 'an audio session (broadcast or talk) with this channel is already running');
      if (waiting.size + live.size >= MAX_AUDIO_SESSIONS) throw new MediaFailedError(mode, `at most ${MAX_AUDIO_SESSIONS} audio sessions per instance`);
      const invited = new Promise<BroadcastView>((resolve, reject) => {
        const timer = side.clock.setTimeout(() => {
          waiting.delete(target.channelId);
          reject(new DeviceTimeoutError(target.deviceId, `${mode} INVITE`, 'response'));
        }, o.inviteWaitMs);
        waiting.set(target.channelId, { mode, target, source, timer, resolve, reject });
      });
      invited.catch(() => undefined);
      try {
        const answer = await exchange.ask<ResultResponse>(session, 'Broadcast', 'Broadcast notify', (sn) => buildBroadcastNotify({ sn, sourceId: o.serverId, targetId: target.channelId }, { charset: session.charset }), target.channelId);
        if (answer.result?.trim().toUpperCase() === RESULT_ERROR) throw new DeviceRejectedError(target.deviceId, 'Broadcast notify', 'Result ERROR');
      } catch (err) {
        const e = waiting.get(target.channelId);
        if (e !== undefined) {
          side.clock.clearTimeout(e.timer);
          waiting.delete(target.channelId);
        }
        throw err;
      }
      return invited;
    },

    async stop(channelId, mode = 'broadcast') {
      const l = live.get(channelId);
      if (l === undefined || l.view.mode !== mode) throw new MediaSessionNotFoundError(channelId);
      const ending = end(l, 'stopped');
      await l.dialog.destroy().catch((err: unknown) => log.debug({ err }, 'BYE to the device failed'));
      await ending;
    },

    busy: (channelId) => waiting.has(channelId) || live.has(channelId),

    async onDeviceMoved(deviceId, newOwner) {
      const moved = [...live.values()].filter((l) => l.view.deviceId === deviceId);
      await Promise.all(
        moved.map(async (l) => {
          if (journal === null) {
            // nobody to hand it to: ended here as for a device gone offline (BYE attempted, sender released)
            const ending = end(l, 'device moved');
            await l.dialog.destroy().catch(() => undefined);
            await ending;
            return;
          }
          live.delete(l.view.channelId);
          l.dialog.closeSilently(); // the new owner ends or re-establishes it from the snapshot
          await journal.handOff(l.dialog.callId, newOwner);
          log.info({ mode: l.view.mode, deviceId, channelId: l.view.channelId, newOwner }, 'audio session handed off: the device moved');
        }),
      );
    },

    list: (deviceId, mode = 'broadcast') => [...live.values()].filter((l) => l.view.deviceId === deviceId && l.view.mode === mode).map((l) => l.view),

    onInvite(req, ctx) {
      const channelId = getFrom(req).uri.user ?? '';
      const e = waiting.get(channelId);
      if (e === undefined) return false;
      // SPEC SEC-1: only the flow the device registered on speaks for it — through a SIP edge (issue 14) the
      // edge's flow and the device flow the edge names in its Via, so another device behind the same edge
      // cannot answer for it
      const s = side.flows.get(e.target.deviceId);
      if (s === undefined || !sameDeviceFlow(s, ctx.flow, edgeFlowOf(req))) return false;
      waiting.delete(channelId);
      side.clock.clearTimeout(e.timer);
      answerInvite(req, ctx, e).then(e.resolve, (err: unknown) => {
        log.warn({ err, channelId, mode: e.mode }, 'audio INVITE failed');
        if (!ctx.finalSent) ctx.reply(SipStatus.NotAcceptableHere);
        // the media node's failure is 4609 (MediaFailedError), a bad offer 4607
        e.reject(isVmsError(err) ? err : new DeviceRejectedError(e.target.deviceId, 'broadcast INVITE', 'unreadable SDP offer'));
      });
      return true;
    },

    async close() {
      offOffline();
      for (const e of waiting.values()) side.clock.clearTimeout(e.timer);
      waiting.clear();
      await Promise.all([...live.values()].map(async (l) => {
        const ending = end(l, 'closing');
        await l.dialog.destroy().catch(() => undefined);
        await ending;
      }));
    },
  };
}
