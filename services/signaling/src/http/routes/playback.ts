// Playback and download (SPEC §12, GB/T 28181-2016 §9.8 / §9.9): start by channel, control / stop /
// progress by session. Times are API times in the platform's zone; the SDP t= line carries epoch seconds.
import { BadParameterError } from '../../errors/catalog.ts';
import type { GbLocalTime } from '../../core/gb-time.ts';
import { PLAYBACK_ACTIONS } from '../../media/media-session.types.ts';
import { operator, type DeviceAccess } from '../access.ts';
import type { HandlerContext, HttpDeps, RouteHandlers } from '../handler.types.ts';
import { gbId, oneOf, optionalInt, optionalText, time } from '../params.ts';
import { checkSessionAccess, mediaOf, sessionIdOf, streamModeOf } from './play.ts';

/** GB/T 28181 Annex B Scale values devices accept. */
const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];
const MAX_DOWNLOAD_SPEED = 16;

const epochOf = (wall: GbLocalTime, utcOffsetMinutes: number): Date => new Date(Date.parse(`${wall}Z`) - utcOffsetMinutes * 60_000);

function rangeOf(deps: HttpDeps, ctx: HandlerContext): { start: Date; end: Date } {
  const start = time(ctx.query, 'startTime', deps.utcOffsetMinutes);
  const end = time(ctx.query, 'endTime', deps.utcOffsetMinutes);
  if (end <= start) throw new BadParameterError('endTime', 'must be after startTime');
  return { start: epochOf(start, deps.utcOffsetMinutes), end: epochOf(end, deps.utcOffsetMinutes) };
}

export function playbackHandlers(
  deps: HttpDeps,
  access: DeviceAccess,
): Pick<RouteHandlers, 'playback.start' | 'playback.control' | 'playback.stop' | 'download.start' | 'download.progress' | 'download.stop'> {
  return {
    'playback.start': async (ctx) => {
      const principal = operator(ctx);
      const channelId = gbId(ctx.query, 'channelId');
      const mode = streamModeOf(ctx);
      const range = rangeOf(deps, ctx);
      const media = mediaOf(deps, 'playback');
      const target = await access.onlineChannel(principal, channelId);
      return media.sessions.startPlayback({ deviceId: target.deviceId, channelId, mode, ...range });
    },
    'playback.control': async (ctx) => {
      const sessionId = sessionIdOf(ctx);
      const action = oneOf(ctx.query, 'action', PLAYBACK_ACTIONS);
      let value: number | undefined;
      if (action === 'seek') value = optionalInt(ctx.query, 'value', 0, 864_000) ?? missing('value', 'seconds from the start of the range');
      if (action === 'speed') {
        const raw = optionalText(ctx.query, 'value');
        value = raw === undefined ? missing('value', `one of ${SPEEDS.join(', ')}`) : Number(raw);
        if (!SPEEDS.includes(value)) throw new BadParameterError('value', `must be one of ${SPEEDS.join(', ')}`);
      }
      await checkSessionAccess(deps, access, ctx, sessionId);
      return mediaOf(deps, 'playback').sessions.control(sessionId, action, value);
    },
    'playback.stop': async (ctx) => {
      const sessionId = sessionIdOf(ctx);
      await checkSessionAccess(deps, access, ctx, sessionId);
      return mediaOf(deps, 'playback').sessions.stop(sessionId, 'playback');
    },
    'download.start': async (ctx) => {
      const principal = operator(ctx);
      const channelId = gbId(ctx.query, 'channelId');
      const mode = streamModeOf(ctx);
      const range = rangeOf(deps, ctx);
      const speed = optionalInt(ctx.query, 'speed', 1, MAX_DOWNLOAD_SPEED) ?? 1;
      const media = mediaOf(deps, 'download');
      const target = await access.onlineChannel(principal, channelId);
      return media.sessions.startDownload({ deviceId: target.deviceId, channelId, mode, ...range, speed });
    },
    'download.progress': async (ctx) => {
      const sessionId = sessionIdOf(ctx);
      await checkSessionAccess(deps, access, ctx, sessionId);
      return mediaOf(deps, 'download').sessions.progress(sessionId);
    },
    'download.stop': async (ctx) => {
      const sessionId = sessionIdOf(ctx);
      await checkSessionAccess(deps, access, ctx, sessionId);
      return mediaOf(deps, 'download').sessions.stop(sessionId, 'download');
    },
  };
}

function missing(name: string, what: string): never {
  throw new BadParameterError(name, `is required: ${what}`);
}
