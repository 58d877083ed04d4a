// Live view, playback and download sessions of the devices this instance owns (SPEC §8 media, §9).
// The decisions live in MediaSessionTable (pure); this file does the I/O in order:
//   choose node (sticky per channel) → SSRC → openRtpServer → INVITE (Subject, SDP offer) → 200/ACK →
//   tcp-active: connectRtpServer → session id in the directory (routing by sessionId on any instance).
// Teardown is the reverse: BYE, closeRtpServer, release the SSRC, forget the session ids.
// In a cluster the stream's holder (this instance) is recorded once its port is open, so a ZLM hook
// about it landing on another instance is forwarded here (media-hooks.ts).
// Sharing (decided): each play gets its own sessionId; plays of one channel share its one live stream
// (same URLs), which ends with its last session (or on the media node's no-reader hook).
import {
  buildDownloadOffer,
  buildMansrtspPause,
  buildMansrtspResume,
  buildMansrtspSeek,
  buildMansrtspSpeed,
  buildPlaybackOffer,
  buildPlayOffer,
  buildSubject,
  describeSdp,
  MEDIA_STATUS_END_OF_FILE,
  parseSdp,
  type SdpSummary,
} from '@vms/gb28181';
import { isMediaError, streamUrls, ZlmCallError, type MediaHookEvent, type MediaNode, type MediaPurpose } from '@vms/media';
import type { Logger } from 'pino';
import type { SessionDirectory } from '../cluster/device-index.port.ts';
import type { Clock } from '../core/clock.ts';
import { BadParameterError, DeviceRejectedError, isVmsError, MediaFailedError, MediaSessionNotFoundError, ShuttingDownError } from '../errors/catalog.ts';
import type { MediaPlane } from './media-plane.ts';
import type { DownloadProgress, MediaStream, PlaybackAction, StartAnswer, StreamMode } from './media-session.types.ts';
import { MediaSessionTable } from './media-sessions.ts';
import type { MediaDialog, MediaSignaling } from './media-signaling.port.ts';
import type { StreamHolderDirectory } from './stream-holders.port.ts';
import type { SessionJournal } from '../recovery/session-journal.ts';
import type { SessionSnapshot } from '../recovery/session-snapshot.ts';

/** Session ids stay routable this long without a stop (a viewer that never says goodbye). */
export const SESSION_DIRECTORY_TTL_MS = 24 * 3600_000;
/** Ended download sessions whose progress can still be read. */
const ENDED_KEPT = 1000;
/** Media nodes tried for one new stream before the play fails (4609). */
const MAX_OPEN_ATTEMPTS = 2;
/** How long a recovery waits for the device to answer the BYE of the old dialog before the new INVITE. */
const OLD_DIALOG_BYE_WAIT_MS = 2000;
/** ZLM ApiErr::InvalidArgs, what openRtpServer answers for a stream id it already has. */
const ZLM_INVALID_ARGS = -300;

export interface LiveRequest {
  readonly deviceId: string;
  readonly channelId: string;
  readonly mode: StreamMode;
}

export interface HistoryRequest extends LiveRequest {
  readonly start: Date;
  readonly end: Date;
  /** Download only: a=downloadspeed. */
  readonly speed?: number;
}

export interface MediaSessionManagerDeps {
  readonly plane: MediaPlane;
  readonly signaling: MediaSignaling;
  readonly directory: SessionDirectory;
  readonly clock: Clock;
  readonly log: Logger;
  readonly serverId: string;
  readonly newId: () => string;
  /** Cluster: stream → holder records for hook forwarding; absent standalone. */
  readonly holders?: StreamHolderDirectory | null;
  /** Session continuity (SPEC §11): snapshots of established dialogs; absent = none kept. */
  readonly journal?: SessionJournal | null;
}

export interface MediaSessionManager {
  startLive(req: LiveRequest): Promise<StartAnswer>;
  startPlayback(req: HistoryRequest): Promise<StartAnswer>;
  startDownload(req: HistoryRequest): Promise<StartAnswer>;
  /** Ends one session (a live stream ends with its last one); `kind` checks the session's purpose. */
  stop(sessionId: string, kind?: MediaPurpose): Promise<{ viewers: number }>;
  control(sessionId: string, action: PlaybackAction, value: number | undefined): Promise<{ cseq: number }>;
  progress(sessionId: string): DownloadProgress;
  /** The device a session (or an ended download) belongs to; MediaSessionNotFoundError. */
  deviceOfSession(sessionId: string): string;
  /** The live stream's node and URL for a snapshot, if the channel is playing here. */
  liveOf(channelId: string): { node: MediaNode; rtspUrl: string } | undefined;
  onHook(event: MediaHookEvent): void;
  /** True when this instance holds that stream on that media node. */
  holds(nodeId: string, streamId: string): boolean;
  onMediaStatus(e: { deviceId: string; callId: string; notifyType: string }): void;
  /** The device went offline here (unregister, expiry, keepalive timeout): its streams end, no BYE. */
  onDeviceGone(deviceId: string): void;
  readonly stats: { readonly streams: number; readonly sessions: number };
  /**
   * SPEC §11 RECOVER: takes over a stream a crashed instance held, from its snapshot. The device (registered
   * here now) gets a BYE for the old dialog, then a new INVITE into the same stream id, RTP port and SSRC on the
   * same media node, whose RTP server is still open: the viewers' URLs keep working and their session ids stay
   * valid. Resolves with the new Call-ID. On failure nothing here remains and the media node is not touched
   * (the caller retries or releases); the SSRC, adopted from the old holder, is held by this instance.
   */
  recover(snapshot: SessionSnapshot): Promise<string>;
  /** BYE to every stream, close RTP servers. Idempotent. */
  close(): Promise<void>;
}

export function createMediaSessionManager(d: MediaSessionManagerDeps): MediaSessionManager {
  const { plane, clock } = d;
  const log = d.log.child({ component: 'media' });
  const table = new MediaSessionTable();
  const dialogs = new Map<string, MediaDialog>();
  const inflightLive = new Map<string, Promise<MediaStream>>();
  const ended = new Map<string, { progress: DownloadProgress; deviceId: string }>();
  let closed = false;

  const rtpClient = (nodeId: string) => {
    const node = plane.node(nodeId);
    return node === undefined ? undefined : plane.client(node);
  };

  /** SPEC §11: (re)writes the snapshot of an established stream's dialog; sessions and CSeqs included. */
  const record = (stream: MediaStream): void => {
    const dialog = dialogs.get(stream.streamId);
    if (d.journal == null || dialog === undefined || stream.state === 'ended' || stream.state === 'inviting') return;
    const { streamId, purpose, deviceId, channelId, nodeId, ssrc, allocatedSsrc, mode, rtpPort, createdAt, range, speed } = stream;
    d.journal.record({ streamId, purpose, deviceId, channelId, nodeId, ssrc, allocatedSsrc, mode, rtpPort, createdAt, range, speed, dialog: dialog.saved(), sessionIds: table.sessionIdsOf(streamId) });
  };

  /** Tears a stream down; never rejects (each step logged once, here). */
  const endStream = async (streamId: string, reason: string, sendBye: boolean): Promise<void> => {
    const stream = table.stream(streamId);
    if (stream === undefined) return;
    stream.state = 'ended';
    const sessionIds = table.removeStream(streamId);
    plane.ledger.remove(streamId);
    const slog = log.child({ streamId, deviceId: stream.deviceId, channelId: stream.channelId, callId: stream.callId });
    slog.info({ reason, sessions: sessionIds.length }, 'media stream ended');
    if (stream.purpose === 'download') {
      for (const id of sessionIds) keepEnded(id, stream);
    }
    const dialog = dialogs.get(streamId);
    dialogs.delete(streamId);
    // SPEC §11: the tombstone goes first, so a crash during the rest of the teardown resurrects nothing
    if (stream.callId !== null) await d.journal?.ended(stream.callId);
    await Promise.all([
      sendBye && dialog !== undefined ? dialog.bye().catch((err: unknown) => slog.debug({ err }, 'BYE failed')) : undefined,
      rtpClient(stream.nodeId)
        ?.closeRtpServer(streamId)
        .then(
          () => plane.callResult(stream.nodeId, null),
          (err: unknown) => {
            plane.callResult(stream.nodeId, err);
            slog.warn({ err, nodeId: stream.nodeId }, 'closeRtpServer failed');
          },
        ),
      ...sessionIds.map((id) => d.directory.forget(id).catch((err: unknown) => slog.warn({ err, sessionId: id }, 'session directory forget failed'))),
      d.holders?.release(stream.nodeId, streamId).catch((err: unknown) => slog.warn({ err }, 'stream holder release failed')),
    ]);
    await releaseSsrc(stream.nodeId, stream.allocatedSsrc);
  };

  /** Never rejects: an SSRC left behind in the shared store expires with its TTL. */
  const releaseSsrc = async (nodeId: string, ssrc: string): Promise<void> => {
    await plane.ssrcs.release(nodeId, ssrc).catch((err: unknown) => log.warn({ err, nodeId, ssrc }, 'SSRC release failed'));
  };

  const keepEnded = (sessionId: string, s: MediaStream): void => {
    ended.set(sessionId, { deviceId: s.deviceId, progress: { sessionId, progress: s.endOfFile ? 1 : estimate(s), endOfFile: s.endOfFile, state: 'ended', urls: s.urls } });
    if (ended.size > ENDED_KEPT) ended.delete(ended.keys().next().value as string);
  };

  const estimate = (s: MediaStream): number => {
    if (s.range === null) return 0;
    const span = s.range.end - s.range.start;
    return span <= 0 ? 0 : Math.min(1, ((clock.now() - s.createdAt) * s.speed) / span);
  };

  const offerFor = (purpose: MediaPurpose, node: MediaNode, port: number, ssrc: string, req: HistoryRequest | LiveRequest): string => {
    const base = { ownerId: d.serverId, address: node.sdpIp, port, ssrc, transport: req.mode };
    if (purpose === 'live' || !('start' in req)) return buildPlayOffer(base);
    const history = { ...base, channelId: req.channelId, start: req.start, end: req.end };
    if (purpose === 'playback') return buildPlaybackOffer(history);
    return buildDownloadOffer({ ...history, downloadSpeed: req.speed ?? 1 });
  };

  const openRtp = async (node: MediaNode, streamId: string, mode: StreamMode, ssrc: string): Promise<number> => {
    const client = plane.client(node);
    const open = async (): Promise<number> => (await client.openRtpServer({ streamId, tcpMode: mode, ssrc })).port;
    try {
      let port: number;
      try {
        port = await open();
      } catch (err) {
        // The node still has an RTP server under this stream id, which nobody here holds (openStream runs only
        // when this instance has no stream for it): left by an owner that crashed, or by a set-up that died half
        // way. Held by nobody, it would refuse this channel for good ("stream already exists"): close it, once.
        if (!(err instanceof ZlmCallError) || err.zlmCode !== ZLM_INVALID_ARGS || table.stream(streamId) !== undefined) throw err;
        const { hit } = await client.closeRtpServer(streamId);
        if (!hit) throw err;
        log.warn({ nodeId: node.id, streamId }, 'stale RTP server on the media node closed');
        port = await open();
      }
      plane.callResult(node.id, null);
      return port;
    } catch (err) {
      plane.callResult(node.id, err);
      throw new MediaFailedError('openRtpServer', isMediaError(err) ? err.code : 'error', { cause: err });
    }
  };

  /** A media node and an RTP port on it: another healthy node when the first one fails (SPEC §9). */
  const openOnSomeNode = async (purpose: MediaPurpose, req: LiveRequest | HistoryRequest, streamId: string): Promise<{ node: MediaNode; port: number; ssrc: string }> => {
    const tried: string[] = [];
    let failure: unknown = null;
    for (;;) {
      let node: MediaNode;
      try {
        node = await plane.choose(req.channelId, purpose, tried);
      } catch (err) {
        throw failure ?? err; // no other node: the play fails with what the first one said
      }
      let ssrc: string;
      try {
        ssrc = await plane.ssrcs.allocate(node.id, purpose);
      } catch (err) {
        if (isMediaError(err)) throw new MediaFailedError('SSRC allocation', err.message, { cause: err });
        throw err;
      }
      try {
        return { node, port: await openRtp(node, streamId, req.mode, ssrc), ssrc };
      } catch (err) {
        await releaseSsrc(node.id, ssrc);
        tried.push(node.id);
        failure = err;
        if (tried.length >= MAX_OPEN_ATTEMPTS || closed) throw err;
        log.warn({ err, nodeId: node.id, streamId }, 'openRtpServer failed: trying another media node');
      }
    }
  };

  /**
   * The answerer chose the SSRC (GB/T 28181 lets a lower platform answer its own y=): the media node must
   * filter on that one, or it drops every packet while the session looks established. Failing that, the
   * set-up fails (and is undone) rather than report a stream that never comes.
   */
  const adoptAnsweredSsrc = async (stream: MediaStream, node: MediaNode, answered: string, slog: Logger): Promise<void> => {
    try {
      await plane.client(node).updateRtpServerSsrc(stream.streamId, answered);
      plane.callResult(node.id, null);
    } catch (err) {
      plane.callResult(node.id, err);
      throw new MediaFailedError('updateRtpServerSSRC', isMediaError(err) ? err.code : 'error', { cause: err });
    }
    slog.info({ offered: stream.ssrc, answered }, 'device answered another SSRC: media node filters on it');
    stream.ssrc = answered;
  };

  /** One new stream with its INVITE dialog; cleans up everything it did when a step fails. */
  const openStream = async (purpose: MediaPurpose, req: LiveRequest | HistoryRequest): Promise<MediaStream> => {
    if (closed) throw new ShuttingDownError();
    const streamId = purpose === 'live' ? `${req.deviceId}_${req.channelId}` : `${purpose}_${req.channelId}_${d.newId()}`;
    const { node, port, ssrc } = await openOnSomeNode(purpose, req, streamId);
    const range = 'start' in req ? { start: req.start.getTime(), end: req.end.getTime() } : null;
    const stream: MediaStream = {
      streamId,
      purpose,
      deviceId: req.deviceId,
      channelId: req.channelId,
      nodeId: node.id,
      ssrc,
      allocatedSsrc: ssrc,
      mode: req.mode,
      rtpPort: port,
      urls: streamUrls(node, streamId),
      state: 'inviting',
      callId: null,
      createdAt: clock.now(),
      range,
      speed: 'speed' in req && req.speed !== undefined ? req.speed : 1,
      rtspSeq: 0,
      endOfFile: false,
    };
    table.addStream(stream);
    plane.ledger.add({ streamId, nodeId: node.id, channelId: req.channelId, purpose });
    const slog = log.child({ streamId, deviceId: req.deviceId, channelId: req.channelId, nodeId: node.id });
    // before the INVITE: the media node's hooks about this port may come as soon as RTP does
    await d.holders?.claim(node.id, streamId, SESSION_DIRECTORY_TTL_MS).catch((err: unknown) => {
      slog.warn({ err }, 'stream holder record failed: hooks landing on other instances stay there');
    });
    try {
      await inviteInto(stream, node, req, slog);
      return stream;
    } catch (err) {
      await endStream(streamId, 'set-up failed', true);
      throw err;
    }
  };

  /** INVITE into a stream whose RTP port is open: dialog, answered SSRC, tcp-active connect. Throws as is. */
  const inviteInto = async (stream: MediaStream, node: MediaNode, req: LiveRequest | HistoryRequest, slog: Logger): Promise<void> => {
    const { streamId, purpose, ssrc, rtpPort: port } = stream;
    const subject = buildSubject({ senderId: req.channelId, senderStream: ssrc, receiverId: d.serverId, receiverStream: '0' });
    const dialog = await d.signaling.invite({ deviceId: req.deviceId, channelId: req.channelId, sdp: offerFor(purpose, node, port, ssrc, req), subject });
    if (stream.state === 'ended' || closed) {
      await dialog.bye().catch(() => undefined);
      throw closed ? new ShuttingDownError() : new MediaFailedError('INVITE', 'stream ended while inviting');
    }
    dialogs.set(streamId, dialog);
    table.setCallId(streamId, dialog.callId);
    dialog.onEnded((why) => void endStream(streamId, `device ended the dialog (${why})`, false));
    const answer = readAnswer(dialog.answer, slog);
    if (answer?.ssrcValid === true && answer.ssrc !== undefined && answer.ssrc !== ssrc) await adoptAnsweredSsrc(stream, node, answer.ssrc, slog);
    if (req.mode === 'tcp-active') {
      if (answer === null || answer.port <= 0) throw new MediaFailedError('INVITE', 'tcp-active answer without the device address');
      try {
        await plane.client(node).connectRtpServer({ streamId, dstUrl: answer.address, dstPort: answer.port });
        plane.callResult(node.id, null);
      } catch (err) {
        plane.callResult(node.id, err);
        throw new MediaFailedError('connectRtpServer', isMediaError(err) ? err.code : 'error', { cause: err });
      }
    }
    if (stream.state === 'inviting') stream.state = 'established';
    slog.info({ callId: dialog.callId, purpose, mode: req.mode, ssrc: stream.ssrc, rtpPort: port }, 'media stream established');
  };

  const attach = async (stream: MediaStream, deviceId: string): Promise<StartAnswer> => {
    const sessionId = d.newId();
    const viewers = table.attach({ sessionId, streamId: stream.streamId, createdAt: clock.now() });
    record(stream);
    try {
      await d.directory.remember(sessionId, deviceId, SESSION_DIRECTORY_TTL_MS);
    } catch (err) {
      // not routable from other instances; still stoppable here (FAIL-3 keeps a local copy)
      log.warn({ err, sessionId }, 'session directory write failed');
    }
    return {
      sessionId,
      streamId: stream.streamId,
      urls: stream.urls,
      mediaNodeId: stream.nodeId,
      ssrc: stream.ssrc,
      streamMode: stream.mode,
      viewers,
      ready: stream.state === 'ready',
    };
  };

  const startLive = async (req: LiveRequest): Promise<StartAnswer> => {
    const current = table.liveStreamOf(req.channelId);
    if (current !== undefined && current.state !== 'ended' && current.state !== 'inviting') return attach(current, req.deviceId);
    let pending = inflightLive.get(req.channelId);
    if (pending === undefined) {
      pending = openStream('live', req);
      inflightLive.set(req.channelId, pending);
      const p = pending;
      void p.then(
        () => inflightLive.delete(req.channelId),
        () => inflightLive.delete(req.channelId),
      );
    }
    const stream = await pending;
    if (stream.state === 'ended') throw new MediaFailedError('play', 'stream ended while starting');
    return attach(stream, req.deviceId);
  };

  /** Waits for the BYE's answer at most OLD_DIALOG_BYE_WAIT_MS (the transaction runs on; its outcome is logged). */
  const byeOldDialog = async (old: MediaDialog, slog: Logger): Promise<void> => {
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const waited = new Promise<void>((resolve) => (timer = clock.setTimeout(resolve, OLD_DIALOG_BYE_WAIT_MS)));
    const sent = old.bye().then(
      () => slog.debug('old dialog ended'),
      (err: unknown) => slog.debug({ err }, 'old dialog BYE failed (the device had dropped it)'),
    );
    await Promise.race([sent, waited]);
    if (timer !== undefined) clock.clearTimeout(timer);
  };

  const recover = async (s: SessionSnapshot): Promise<string> => {
    if (closed) throw new ShuttingDownError();
    if (table.stream(s.streamId) !== undefined) throw new MediaFailedError('recovery', 'stream id already in use here');
    const node = plane.node(s.nodeId);
    if (node === undefined) throw new MediaFailedError('recovery', 'media node of the snapshot unknown');
    const slog = log.child({ streamId: s.streamId, deviceId: s.deviceId, channelId: s.channelId, nodeId: s.nodeId, oldCallId: s.dialog.callId });
    // the device may still be sending on the old dialog (it never got a BYE): end that one first
    const old = d.signaling.restore(s.deviceId, s.dialog);
    if (old !== null) await byeOldDialog(old, slog);
    let adopted: boolean;
    try {
      adopted = await plane.ssrcs.adopt(s.nodeId, s.allocatedSsrc, s.holder);
    } catch (err) {
      throw new MediaFailedError('SSRC adoption', isMediaError(err) ? err.code : 'error', { cause: err });
    }
    if (!adopted) throw new MediaFailedError('SSRC adoption', 'the SSRC is held by another instance');
    const base = { deviceId: s.deviceId, channelId: s.channelId, mode: s.mode };
    // playback resumes where it was: the start moves by the media time already sent (elapsed × speed)
    const req: LiveRequest | HistoryRequest =
      s.range === null
        ? base
        : { ...base, start: new Date(Math.min(s.range.end, s.range.start + Math.max(0, clock.now() - s.createdAt) * s.speed)), end: new Date(s.range.end), speed: s.speed };
    const stream: MediaStream = {
      streamId: s.streamId,
      purpose: s.purpose,
      deviceId: s.deviceId,
      channelId: s.channelId,
      nodeId: s.nodeId,
      ssrc: s.ssrc,
      allocatedSsrc: s.allocatedSsrc,
      mode: s.mode,
      rtpPort: s.rtpPort,
      urls: streamUrls(node, s.streamId),
      state: 'inviting',
      callId: null,
      createdAt: s.createdAt,
      range: s.range,
      speed: s.speed,
      rtspSeq: 0,
      endOfFile: false,
    };
    table.addStream(stream);
    plane.ledger.add({ streamId: s.streamId, nodeId: s.nodeId, channelId: s.channelId, purpose: s.purpose });
    await d.holders?.claim(s.nodeId, s.streamId, SESSION_DIRECTORY_TTL_MS).catch((err: unknown) => slog.warn({ err }, 'stream holder record failed: hooks landing on other instances stay there'));
    try {
      await inviteInto(stream, node, req, slog);
    } catch (err) {
      // undone here only: the RTP server and the SSRC stay for the caller's retry or release
      stream.state = 'ended';
      table.removeStream(s.streamId);
      plane.ledger.remove(s.streamId);
      const dialog = dialogs.get(s.streamId);
      dialogs.delete(s.streamId);
      await dialog?.bye().catch(() => undefined);
      throw err;
    }
    for (const sessionId of s.sessionIds) {
      table.attach({ sessionId, streamId: s.streamId, createdAt: clock.now() });
      await d.directory.remember(sessionId, s.deviceId, SESSION_DIRECTORY_TTL_MS).catch((err: unknown) => slog.warn({ err, sessionId }, 'session directory write failed'));
    }
    record(stream);
    slog.info({ callId: stream.callId, viewers: s.sessionIds.length }, 'media stream recovered');
    return stream.callId ?? '';
  };

  const sessionStream = (sessionId: string, kind?: MediaPurpose): MediaStream => {
    const s = table.streamOfSession(sessionId);
    if (s === undefined) throw new MediaSessionNotFoundError(sessionId);
    if (kind !== undefined && s.purpose !== kind) throw new BadParameterError('sessionId', `is a ${s.purpose} session, not ${kind}`);
    return s;
  };

  return {
    startLive,
    async startPlayback(req) {
      return attach(await openStream('playback', req), req.deviceId);
    },
    async startDownload(req) {
      return attach(await openStream('download', req), req.deviceId);
    },
    async stop(sessionId, kind) {
      const s = table.streamOfSession(sessionId);
      if (s === undefined) {
        if (ended.delete(sessionId)) return { viewers: 0 };
        throw new MediaSessionNotFoundError(sessionId);
      }
      if (kind !== undefined && s.purpose !== kind) throw new BadParameterError('sessionId', `is a ${s.purpose} session, not ${kind}`);
      const r = table.detach(sessionId);
      await d.directory.forget(sessionId).catch((err: unknown) => log.warn({ err, sessionId }, 'session directory forget failed'));
      if (r === null) return { viewers: 0 };
      if (r.last) await endStream(r.stream.streamId, 'stopped', true);
      else record(r.stream);
      return { viewers: table.viewers(r.stream.streamId) };
    },
    async control(sessionId, action, value) {
      const s = sessionStream(sessionId, 'playback');
      const dialog = dialogs.get(s.streamId);
      if (dialog === undefined) throw new MediaSessionNotFoundError(sessionId);
      const cseq = ++s.rtspSeq;
      const body =
        action === 'pause'
          ? buildMansrtspPause(cseq)
          : action === 'resume'
            ? buildMansrtspResume(cseq)
            : action === 'seek'
              ? buildMansrtspSeek(cseq, value ?? 0)
              : buildMansrtspSpeed(cseq, value ?? 1);
      let status: number;
      try {
        status = await dialog.info(body);
      } catch (err) {
        // A device that does not answer a control in time has lost the session (or never implemented
        // MANSRTSP): end it cleanly (BYE, port closed, SSRC released) rather than leave a dialog that the
        // SIP layer would drop silently at Timer F while the camera keeps streaming.
        await endStream(s.streamId, `no answer to playback ${action}`, true);
        if (isVmsError(err)) throw err;
        throw new DeviceRejectedError(s.deviceId, `playback ${action}`, 'no answer to INFO');
      }
      record(s); // the dialog's local CSeq moved: a BYE from a recovering instance must go above it
      if (status < 200 || status >= 300) throw new DeviceRejectedError(s.deviceId, `playback ${action}`, `SIP ${status}`);
      return { cseq };
    },
    progress(sessionId) {
      const done = ended.get(sessionId);
      if (done !== undefined) return done.progress;
      const s = sessionStream(sessionId, 'download');
      return { sessionId, progress: s.endOfFile ? 1 : estimate(s), endOfFile: s.endOfFile, state: s.state, urls: s.urls };
    },
    deviceOfSession(sessionId) {
      const s = table.streamOfSession(sessionId);
      if (s !== undefined) return s.deviceId;
      const done = ended.get(sessionId);
      if (done !== undefined) return done.deviceId;
      throw new MediaSessionNotFoundError(sessionId);
    },
    liveOf(channelId) {
      const s = table.liveStreamOf(channelId);
      const node = s === undefined ? undefined : plane.node(s.nodeId);
      return s === undefined || node === undefined ? undefined : { node, rtspUrl: s.urls.rtsp };
    },
    onHook(event) {
      switch (event.kind) {
        case 'server_keepalive':
          plane.health.keepalive(event.mediaServerId, event.streams);
          return;
        case 'stream_changed': {
          const s = event.app === 'rtp' ? table.stream(event.stream) : undefined;
          if (s === undefined || s.nodeId !== event.mediaServerId) return;
          if (event.regist && s.state !== 'ended' && s.state !== 'ready') {
            s.state = 'ready';
            log.debug({ streamId: s.streamId, schema: event.schema }, 'media stream ready');
          }
          return;
        }
        case 'stream_none_reader': {
          const s = event.app === 'rtp' ? table.stream(event.stream) : undefined;
          if (s !== undefined && s.nodeId === event.mediaServerId) void endStream(s.streamId, 'no reader', true);
          return;
        }
        case 'rtp_server_timeout': {
          const s = table.stream(event.streamId);
          if (s !== undefined && s.nodeId === event.mediaServerId) void endStream(s.streamId, 'rtp timeout', true);
          return;
        }
        default:
          return;
      }
    },
    holds: (nodeId, streamId) => table.stream(streamId)?.nodeId === nodeId,
    recover,
    onMediaStatus(e) {
      const s = table.streamByCallId(e.callId);
      if (s === undefined || s.deviceId !== e.deviceId) {
        log.debug({ callId: e.callId, deviceId: e.deviceId }, 'MediaStatus for no stream of ours');
        return;
      }
      if (e.notifyType !== MEDIA_STATUS_END_OF_FILE) return;
      s.endOfFile = true;
      void endStream(s.streamId, 'end of file', true);
    },
    onDeviceGone(deviceId) {
      for (const id of table.streamIds()) {
        if (table.stream(id)?.deviceId === deviceId) void endStream(id, 'device offline', false);
      }
    },
    get stats() {
      return { streams: table.streamCount, sessions: table.sessionCount };
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(table.streamIds().map((id) => endStream(id, 'shutting down', true)));
    },
  };
}

function readAnswer(body: Buffer, log: Logger): SdpSummary | null {
  try {
    return describeSdp(parseSdp(body));
  } catch (err) {
    log.warn({ err }, 'device SDP answer not understood');
    return null;
  }
}
