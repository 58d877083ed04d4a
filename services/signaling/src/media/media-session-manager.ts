// Live view, playback and download sessions of the devices this instance owns (SPEC §8 media, §9). The
// decisions live in MediaSessionTable (pure); the I/O is split by role:
//   stream-setup.ts     choose node → SSRC → openRtpServer → INVITE → 200/ACK → tcp-active connect;
//   stream-teardown.ts  BYE, closeRtpServer, release the SSRC, forget the session ids (tombstone first);
//   stream-recovery.ts  SPEC §11: a stream a crashed instance held, taken over from its snapshot;
//   this file           the sessions (viewers) on those streams, playback control, hooks, the public API.
// In a cluster the stream's holder (this instance) is recorded once its port is open, so a ZLM hook
// about it landing on another instance is forwarded here (media-hooks.ts).
// Sharing (decided): each play gets its own sessionId; plays of one channel share its one live stream
// (same URLs), which ends with its last session (or on the media node's no-reader hook).
import { buildMansrtspPause, buildMansrtspResume, buildMansrtspSeek, buildMansrtspSpeed, MEDIA_STATUS_END_OF_FILE } from '@vms/gb28181';
import type { MediaHookEvent, MediaNode, MediaPurpose } from '@vms/media';
import { BadParameterError, DeviceRejectedError, isVmsError, MediaFailedError, MediaSessionNotFoundError } from '../errors/catalog.ts';
import type { SessionSnapshot } from '../recovery/session-snapshot.ts';
import type { DownloadProgress, MediaStream, PlaybackAction, StartAnswer } from './media-session.types.ts';
import { SESSION_DIRECTORY_TTL_MS, type HistoryRequest, type LiveRequest, type MediaSessionManagerDeps } from './stream-context.ts';
import { createStreamRecovery } from './stream-recovery.ts';
import { createStreamSetup } from './stream-setup.ts';
import { createStreamContext, estimateProgress } from './stream-teardown.ts';

export { SESSION_DIRECTORY_TTL_MS, type HistoryRequest, type LiveRequest, type MediaSessionManagerDeps } from './stream-context.ts';

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
  /**
   * OWN-4 with SPEC §11: the device registered at `newOwner`, which takes its streams over. They are forgotten
   * here without a BYE (the new owner ends the old dialog from the snapshot and INVITEs into the same stream id),
   * the RTP servers stay open, SSRCs and stream-holder records stay for the new owner to adopt, the viewers'
   * session ids stay routable (by device, to the new owner); each snapshot is handed to the new owner's index.
   * Without a journal this is onDeviceGone (the streams end, nothing to hand over).
   */
  onDeviceMoved(deviceId: string, newOwner: string): Promise<void>;
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
  const c = createStreamContext(d, d.log.child({ component: 'media' }));
  const { log, table, dialogs, ended, endStream, record } = c;
  const setup = createStreamSetup(c);
  const { openStream } = setup;
  const recover = createStreamRecovery(c, setup);
  const inflightLive = new Map<string, Promise<MediaStream>>();
  const estimate = (s: MediaStream): number => estimateProgress(s, clock);

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
    async onDeviceMoved(deviceId, newOwner) {
      const journal = d.journal;
      if (journal == null) {
        this.onDeviceGone(deviceId);
        return;
      }
      const moved = table.streamIds().filter((id) => table.stream(id)?.deviceId === deviceId);
      await Promise.all(
        moved.map(async (id) => {
          const s = table.stream(id);
          if (s === undefined) return;
          const callId = s.callId;
          if (callId === null || !journal.has(callId)) {
            // not established yet (no snapshot): nothing to take over, it ends here (no BYE: the device is elsewhere)
            await endStream(id, 'device moved', false);
            return;
          }
          const dialog = dialogs.get(id);
          // removed before the dialog is dropped: its 'terminated' then finds no stream to end
          s.state = 'ended';
          table.removeStream(id);
          plane.ledger.remove(id);
          dialogs.delete(id);
          dialog?.drop();
          await journal.handOff(callId, newOwner);
          log.info({ streamId: id, deviceId, callId, newOwner }, 'media stream handed off: the device moved');
        }),
      );
    },
    get stats() {
      return { streams: table.streamCount, sessions: table.sessionCount };
    },
    async close() {
      if (c.isClosed()) return;
      c.markClosed();
      await Promise.all(table.streamIds().map((id) => endStream(id, 'shutting down', true)));
    },
  };
}
