// The state every part of the media session manager shares (stream-context.ts), with its two common steps:
// the snapshot of an established stream (SPEC §11 RECOVER) and the teardown of a stream — BYE, closeRtpServer,
// SSRC released, session ids forgotten, the tombstone written before any of it.
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { DownloadProgress, MediaStream } from './media-session.types.ts';
import { MediaSessionTable } from './media-sessions.ts';
import type { MediaDialog } from './media-signaling.port.ts';
import type { MediaSessionManagerDeps, StreamContext } from './stream-context.ts';

/** Ended download sessions whose progress can still be read. */
const ENDED_KEPT = 1000;

/** How far a playback or download is, estimated from its range, speed and age. */
export function estimateProgress(s: MediaStream, clock: Clock): number {
  if (s.range === null) return 0;
  const span = s.range.end - s.range.start;
  return span <= 0 ? 0 : Math.min(1, ((clock.now() - s.createdAt) * s.speed) / span);
}

export function createStreamContext(d: MediaSessionManagerDeps, log: Logger): StreamContext {
  const { plane, clock } = d;
  const table = new MediaSessionTable();
  const dialogs = new Map<string, MediaDialog>();
  const ended = new Map<string, { progress: DownloadProgress; deviceId: string }>();
  let closed = false;

  const rtpClient = (nodeId: string) => {
    const node = plane.node(nodeId);
    return node === undefined ? undefined : plane.client(node);
  };

  const record = (stream: MediaStream): void => {
    const dialog = dialogs.get(stream.streamId);
    if (d.journal == null || dialog === undefined || stream.state === 'ended' || stream.state === 'inviting') return;
    const { streamId, purpose, deviceId, channelId, nodeId, ssrc, allocatedSsrc, mode, rtpPort, createdAt, range, speed } = stream;
    d.journal.record({ streamId, purpose, deviceId, channelId, nodeId, ssrc, allocatedSsrc, mode, rtpPort, createdAt, range, speed, dialog: dialog.saved(), sessionIds: table.sessionIdsOf(streamId) });
  };

  const releaseSsrc = async (nodeId: string, ssrc: string): Promise<void> => {
    await plane.ssrcs.release(nodeId, ssrc).catch((err: unknown) => log.warn({ err, nodeId, ssrc }, 'SSRC release failed'));
  };

  const keepEnded = (sessionId: string, s: MediaStream): void => {
    ended.set(sessionId, { deviceId: s.deviceId, progress: { sessionId, progress: s.endOfFile ? 1 : estimateProgress(s, clock), endOfFile: s.endOfFile, state: 'ended', urls: s.urls } });
    if (ended.size > ENDED_KEPT) ended.delete(ended.keys().next().value as string);
  };

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

  return {
    d,
    log,
    table,
    dialogs,
    ended,
    isClosed: () => closed,
    markClosed: () => {
      closed = true;
    },
    record,
    endStream,
    releaseSsrc,
  };
}
