// Live view (SPEC §12): `POST /vms/play/start?channelId=&streamMode=` (routedBy: channel),
// `POST /vms/play/stop?sessionId=` (routedBy: session), `GET /vms/snapshot?channelId=` (channel).
import { BadParameterError, ControlUnavailableError, MediaFailedError } from '../../errors/catalog.ts';
import type { MediaWiring } from '../../media/media-wiring.ts';
import { STREAM_MODES, type StreamMode } from '../../media/media-session.types.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { HandlerContext, HttpDeps, RouteHandlers } from '../handler.types.ts';
import { gbId, oneOf, optionalText, requiredText } from '../params.ts';

/** The media side, or 4608 when this instance runs without it (no SIP side). */
export function mediaOf(deps: HttpDeps, operation: string): MediaWiring {
  if (deps.media === undefined) throw new ControlUnavailableError(operation);
  return deps.media;
}

export function streamModeOf(ctx: HandlerContext): StreamMode {
  return optionalText(ctx.query, 'streamMode') === undefined ? 'udp' : oneOf(ctx.query, 'streamMode', STREAM_MODES);
}

/** A session id handed out by a start call (nanoid alphabet). */
export function sessionIdOf(ctx: HandlerContext): string {
  const v = requiredText(ctx.query, 'sessionId');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(v)) throw new BadParameterError('sessionId', 'must be a session id from a start call');
  return v;
}

/** 404 unknown session, 403 when the session's device belongs to another tenant. */
export async function checkSessionAccess(deps: HttpDeps, access: DeviceAccess, ctx: HandlerContext, sessionId: string): Promise<void> {
  const deviceId = mediaOf(deps, 'media session').sessions.deviceOfSession(sessionId);
  await access.device(operator(ctx), deviceId);
}

export function playHandlers(deps: HttpDeps, access: DeviceAccess): Pick<RouteHandlers, 'play.start' | 'play.stop' | 'snapshot'> {
  return {
    'play.start': async (ctx) => {
      const principal = operator(ctx);
      const channelId = gbId(ctx.query, 'channelId');
      const mode = streamModeOf(ctx);
      const media = mediaOf(deps, 'live view');
      const target = await access.onlineChannel(principal, channelId);
      const answer = await media.sessions.startLive({ deviceId: target.deviceId, channelId, mode });
      ctx.log.child({ deviceId: target.deviceId, channelId }).info({ sessionId: answer.sessionId, viewers: answer.viewers, mode }, 'live view started');
      return answer;
    },
    'play.stop': async (ctx) => {
      const sessionId = sessionIdOf(ctx);
      await checkSessionAccess(deps, access, ctx, sessionId);
      return mediaOf(deps, 'live view').sessions.stop(sessionId, 'live');
    },
    snapshot: async (ctx) => {
      const principal = operator(ctx);
      const channelId = gbId(ctx.query, 'channelId');
      const media = mediaOf(deps, 'snapshot');
      await access.onlineChannel(principal, channelId);
      const live = media.sessions.liveOf(channelId);
      if (live === undefined) throw new MediaFailedError('snapshot', 'the channel is not playing: start a live view first');
      let jpeg: Buffer;
      try {
        jpeg = await media.plane.client(live.node).getSnap({ url: live.rtspUrl });
      } catch (err) {
        throw new MediaFailedError('snapshot', 'the media node gave no picture', { cause: err });
      }
      return { contentType: 'image/jpeg', size: jpeg.length, base64: jpeg.toString('base64') };
    },
  };
}
