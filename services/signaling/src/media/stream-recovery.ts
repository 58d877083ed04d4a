// SPEC §11 RECOVER, the media side: taking over a stream a crashed instance held, from its snapshot. The
// device (registered here now) gets a BYE for the old dialog, then a new INVITE into the same stream id, RTP
// port and SSRC on the same media node, whose RTP server is still open: the viewers' URLs keep working and
// their session ids stay valid. On failure nothing here remains and the media node is not touched (the caller,
// session-recovery.ts, retries or releases); the SSRC, adopted from the old holder, is held by this instance.
import { isMediaError, streamUrls } from '@vms/media';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import { MediaFailedError, ShuttingDownError } from '../errors/catalog.ts';
import type { SessionSnapshot } from '../recovery/session-snapshot.ts';
import type { MediaStream } from './media-session.types.ts';
import type { MediaDialog } from './media-signaling.port.ts';
import { SESSION_DIRECTORY_TTL_MS, type StreamContext, type StreamRequest } from './stream-context.ts';
import type { StreamSetup } from './stream-setup.ts';

/** How long a recovery waits for the device to answer the BYE of the old dialog before the new INVITE. */
const OLD_DIALOG_BYE_WAIT_MS = 2000;

/** Resolves with the new Call-ID. */
export type RecoverStream = (snapshot: SessionSnapshot) => Promise<string>;

export function createStreamRecovery(c: StreamContext, setup: StreamSetup): RecoverStream {
  const { d, log, table, dialogs } = c;
  const { plane, clock } = d;

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

  return async (s) => {
    if (c.isClosed()) throw new ShuttingDownError();
    if (table.stream(s.streamId) !== undefined) throw new MediaFailedError('recovery', 'stream id already in use here');
    const node = plane.node(s.nodeId);
    if (node === undefined) throw new MediaFailedError('recovery', 'media node of the snapshot unknown');
    const slog = log.child({ streamId: s.streamId, deviceId: s.deviceId, channelId: s.channelId, nodeId: s.nodeId, oldCallId: s.dialog.callId });
    // the device may still be sending on the old dialog (it never got a BYE): end that one first
    const old = d.signaling.restore(s.deviceId, s.dialog);
    if (old !== null) await byeOldDialog(old, slog);
    let adopted: boolean;
    try {
      adopted = await plane.ssrcs.adopt(s.nodeId, s.allocatedSsrc, s.previousHolder ?? s.holder);
    } catch (err) {
      throw new MediaFailedError('SSRC adoption', isMediaError(err) ? err.code : 'error', { cause: err });
    }
    if (!adopted) throw new MediaFailedError('SSRC adoption', 'the SSRC is held by another instance');
    const base = { deviceId: s.deviceId, channelId: s.channelId, mode: s.mode };
    // playback resumes where it was: the start moves by the media time already sent (elapsed × speed)
    const req: StreamRequest =
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
      await setup.inviteInto(stream, node, req, slog);
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
    c.record(stream);
    slog.info({ callId: stream.callId, viewers: s.sessionIds.length }, 'media stream recovered');
    return stream.callId ?? '';
  };
}
