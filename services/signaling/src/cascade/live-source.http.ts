// LiveSource through this instance's own control API (SPEC CASC-6 on top of §12 and ROUTE-1..5): the
// leader asks `POST /vms/play/start?channelId=` (or playback/start, download/start) of itself (fastify inject, no socket) as an operator of
// the device's tenant, so the request takes exactly the path an operator's does — auth, owner routing,
// forward to the device's owner, the owner's media sessions (INVITE, shared stream) — and leaves with
// `POST /vms/play/stop?sessionId=`, routed by session id. Envelope failures become CascadeErrors through
// one table (LIVE_SOURCE_FAILURES, pinned by its test).
import { CascadeError, type CascadeErrorCode } from '@vms/cascade';
import type { FastifyInstance } from 'fastify';
import { signToken } from '../auth/jwt.ts';
import type { Clock } from '../core/clock.ts';
import type { LiveSource, LiveViewer } from './upstream-live.port.ts';

/** Lifetime of the tokens the leader mints for itself, s; renewed when less than a tenth is left. */
export const LIVE_TOKEN_TTL_S = 3600;
/** The user id those tokens carry (visible in the owner's logs). */
export const LIVE_TOKEN_USER = 'cascade-upstream';

/** Envelope code of a failed play/start → what the upstream is told (any other code: CASCADE_ERR_MEDIA). */
export const LIVE_SOURCE_FAILURES: Readonly<Record<number, CascadeErrorCode>> = Object.freeze({
  404: 'CASCADE_ERR_CHANNEL_NOT_SHARED', // channel or device unknown to the platform
  4601: 'CASCADE_ERR_SOURCE_UNAVAILABLE', // device offline, no owner
  4602: 'CASCADE_ERR_SOURCE_UNAVAILABLE', // owned elsewhere, forwarding disabled
  4603: 'CASCADE_ERR_SOURCE_UNAVAILABLE', // owner node offline
  4604: 'CASCADE_ERR_SOURCE_TIMEOUT', // owner did not answer in time
  4606: 'CASCADE_ERR_SOURCE_TIMEOUT', // device did not answer the INVITE in time
  4607: 'CASCADE_ERR_SOURCE_UNAVAILABLE', // device refused the INVITE
  4608: 'CASCADE_ERR_MEDIA', // the owner has no media side
  4609: 'CASCADE_ERR_MEDIA', // no media node, ZLM call failed, no SSRC left
});

/** Envelope code of a failed playback/control → what the upstream's INFO is answered. */
export const CONTROL_FAILURES: Readonly<Record<number, CascadeErrorCode>> = Object.freeze({
  400: 'CASCADE_ERR_ARGUMENT', // a value the owner refuses (speed 3, seek past the end…)
  404: 'CASCADE_ERR_SESSION_GONE', // the playback ended meanwhile
  4601: 'CASCADE_ERR_SOURCE_UNAVAILABLE',
  4603: 'CASCADE_ERR_SOURCE_UNAVAILABLE',
  4604: 'CASCADE_ERR_SOURCE_TIMEOUT',
  4606: 'CASCADE_ERR_SOURCE_TIMEOUT', // the device did not answer the INFO (the owner ended the session)
  4607: 'CASCADE_ERR_SOURCE_UNAVAILABLE', // the device refused it
});

type Inject = Pick<FastifyInstance, 'inject'>;

export interface HttpLiveSourceDeps {
  /** This instance's control API; null before it is built or after it closed. */
  readonly api: () => Inject | null;
  readonly signingKey: string;
  readonly clock: Clock;
}

interface Answer {
  readonly code: number;
  readonly success: boolean;
  readonly msg: string;
  readonly data: unknown;
}

export function createHttpLiveSource(d: HttpLiveSourceDeps): LiveSource {
  const tokens = new Map<string, { token: string; renewAt: number }>();
  const tokenOf = async (tenantId: string): Promise<string> => {
    const now = d.clock.now();
    const cached = tokens.get(tenantId);
    if (cached !== undefined && cached.renewAt > now) return cached.token;
    const token = await signToken({ tenantId, userId: LIVE_TOKEN_USER, ttlSec: LIVE_TOKEN_TTL_S }, d.signingKey, now);
    tokens.set(tenantId, { token, renewAt: now + LIVE_TOKEN_TTL_S * 900 });
    return token;
  };

  const post = async (url: string, tenantId: string): Promise<Answer> => {
    const api = d.api();
    if (api === null) throw new CascadeError('CASCADE_ERR_MEDIA', 'control API not available (starting or closing)');
    let res;
    try {
      res = await api.inject({ method: 'POST', url, headers: { 'blade-auth': `bearer ${await tokenOf(tenantId)}` } });
    } catch (err) {
      throw new CascadeError('CASCADE_ERR_MEDIA', 'control API call failed', { cause: err });
    }
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      body = null;
    }
    const o = (body ?? {}) as Partial<Answer>;
    if (typeof o.code !== 'number' || typeof o.success !== 'boolean') {
      throw new CascadeError('CASCADE_ERR_MEDIA', `control API answered HTTP ${res.statusCode} without an envelope`);
    }
    return { code: o.code, success: o.success, msg: typeof o.msg === 'string' ? o.msg : '', data: o.data };
  };

  return {
    async start({ channelId, tenantId, history }) {
      const q = `channelId=${encodeURIComponent(channelId)}`;
      const url =
        history === undefined
          ? `/vms/play/start?${q}`
          : `/vms/${history.purpose}/start?${q}&startTime=${encodeURIComponent(history.start.toISOString())}&endTime=${encodeURIComponent(history.end.toISOString())}` +
            (history.purpose === 'download' ? `&speed=${history.speed ?? 1}` : '');
      const what = history?.purpose ?? 'play';
      const a = await post(url, tenantId);
      if (!a.success) throw new CascadeError(LIVE_SOURCE_FAILURES[a.code] ?? 'CASCADE_ERR_MEDIA', `${what} ${channelId}: ${a.code} ${a.msg}`);
      const v = (a.data ?? {}) as Partial<LiveViewer>;
      if (typeof v.sessionId !== 'string' || typeof v.streamId !== 'string' || typeof v.mediaNodeId !== 'string') {
        throw new CascadeError('CASCADE_ERR_MEDIA', `${what} ${channelId}: answer without session, stream or media node`);
      }
      return { purpose: history?.purpose ?? 'live', sessionId: v.sessionId, streamId: v.streamId, mediaNodeId: v.mediaNodeId };
    },
    async stop(viewer, tenantId) {
      const path = viewer.purpose === 'live' ? 'play' : viewer.purpose;
      const a = await post(`/vms/${path}/stop?sessionId=${encodeURIComponent(viewer.sessionId)}`, tenantId);
      // 404: the session already ended (the device or the media node ended the stream)
      if (!a.success && a.code !== 404) throw new CascadeError('CASCADE_ERR_MEDIA', `${path} stop ${viewer.sessionId}: ${a.code} ${a.msg}`);
    },
    async control(viewer, tenantId, a) {
      const value = 'value' in a ? `&value=${a.value}` : '';
      const r = await post(`/vms/playback/control?sessionId=${encodeURIComponent(viewer.sessionId)}&action=${a.action}${value}`, tenantId);
      if (!r.success) throw new CascadeError(CONTROL_FAILURES[r.code] ?? 'CASCADE_ERR_MEDIA', `playback ${a.action} ${viewer.sessionId}: ${r.code} ${r.msg}`);
    },
  };
}
