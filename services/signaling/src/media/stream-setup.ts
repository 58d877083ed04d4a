// Setting a stream up (SPEC §8 media, §9), in order: choose node (sticky per channel) → SSRC → openRtpServer
// (another healthy node when the first fails) → INVITE (Subject, SDP offer) → 200/ACK → the SSRC the device
// answered → tcp-active: connectRtpServer. Every step it did is undone when a later one fails.
import { buildDownloadOffer, buildPlaybackOffer, buildPlayOffer, buildSubject, describeSdp, parseSdp, type SdpSummary } from '@vms/gb28181';
import { isMediaError, streamUrls, ZlmCallError, type MediaNode, type MediaPurpose } from '@vms/media';
import type { Logger } from 'pino';
import { MediaFailedError, ShuttingDownError } from '../errors/catalog.ts';
import type { MediaStream, StreamMode } from './media-session.types.ts';
import { SESSION_DIRECTORY_TTL_MS, type StreamContext, type StreamRequest } from './stream-context.ts';

/** Media nodes tried for one new stream before the play fails (4609). */
const MAX_OPEN_ATTEMPTS = 2;
/** ZLM ApiErr::InvalidArgs, what openRtpServer answers for a stream id it already has. */
const ZLM_INVALID_ARGS = -300;

export interface StreamSetup {
  /** One new stream with its INVITE dialog; cleans up everything it did when a step fails. */
  openStream(purpose: MediaPurpose, req: StreamRequest): Promise<MediaStream>;
  /** INVITE into a stream whose RTP port is open: dialog, answered SSRC, tcp-active connect. Throws as is. */
  inviteInto(stream: MediaStream, node: MediaNode, req: StreamRequest, slog: Logger): Promise<void>;
}

export function createStreamSetup(c: StreamContext): StreamSetup {
  const { d, log, table, dialogs } = c;
  const { plane, clock } = d;

  const offerFor = (purpose: MediaPurpose, node: MediaNode, port: number, ssrc: string, req: StreamRequest): string => {
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
  const openOnSomeNode = async (purpose: MediaPurpose, req: StreamRequest, streamId: string): Promise<{ node: MediaNode; port: number; ssrc: string }> => {
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
        await c.releaseSsrc(node.id, ssrc);
        tried.push(node.id);
        failure = err;
        if (tried.length >= MAX_OPEN_ATTEMPTS || c.isClosed()) throw err;
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

  const inviteInto = async (stream: MediaStream, node: MediaNode, req: StreamRequest, slog: Logger): Promise<void> => {
    const { streamId, purpose, ssrc, rtpPort: port } = stream;
    const subject = buildSubject({ senderId: req.channelId, senderStream: ssrc, receiverId: d.serverId, receiverStream: '0' });
    const dialog = await d.signaling.invite({ deviceId: req.deviceId, channelId: req.channelId, sdp: offerFor(purpose, node, port, ssrc, req), subject });
    if (stream.state === 'ended' || c.isClosed()) {
      await dialog.bye().catch(() => undefined);
      throw c.isClosed() ? new ShuttingDownError() : new MediaFailedError('INVITE', 'stream ended while inviting');
    }
    dialogs.set(streamId, dialog);
    table.setCallId(streamId, dialog.callId);
    dialog.onEnded((why) => void c.endStream(streamId, `device ended the dialog (${why})`, false));
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

  const openStream = async (purpose: MediaPurpose, req: StreamRequest): Promise<MediaStream> => {
    if (c.isClosed()) throw new ShuttingDownError();
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
      await c.endStream(streamId, 'set-up failed', true);
      throw err;
    }
  };

  return { openStream, inviteInto };
}

function readAnswer(body: Buffer, log: Logger): SdpSummary | null {
  try {
    return describeSdp(parseSdp(body));
  } catch (err) {
    log.warn({ err }, 'device SDP answer not understood');
    return null;
  }
}
