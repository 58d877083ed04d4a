/**
 * ZLMediaKit web hooks as typed events. ZLM POSTs a JSON object to the URL configured for each hook
 * (`hook.on_stream_changed=http://<signaling>/vms/webhook/on_stream_changed?secret=…`) and adds
 * `mediaServerId` (its `general.mediaServerId`) to every body. Parsing is pure and total: any input
 * either becomes an event or a MediaError (MEDIA_ERR_HOOK_UNKNOWN / MEDIA_ERR_HOOK_BODY).
 */
import { MediaError } from './errors.ts';

export const MEDIA_HOOK_NAMES = [
  'on_stream_changed',
  'on_stream_none_reader',
  'on_rtp_server_timeout',
  'on_server_keepalive',
  'on_publish',
  'on_server_started',
] as const;

export type MediaHookName = (typeof MEDIA_HOOK_NAMES)[number];

interface HookBase {
  /** ZLM `general.mediaServerId` of the sender = MediaNode.id. */
  readonly mediaServerId: string;
}

interface StreamKey {
  readonly vhost: string;
  readonly app: string;
  readonly stream: string;
  /** rtsp, rtmp, ts, fmp4, hls…: ZLM raises stream events once per protocol it muxes. */
  readonly schema: string;
}

/** on_stream_changed: a stream registered (`regist`, e.g. first RTP on an openRtpServer port) or left. */
export interface StreamChanged extends HookBase, StreamKey {
  readonly kind: 'stream_changed';
  readonly regist: boolean;
  /** Only on regist=true, from the media info ZLM attaches. */
  readonly totalReaderCount: number | undefined;
  readonly originType: number | undefined;
}

/** on_stream_none_reader: the last viewer left (after general.streamNoneReaderDelayMS). */
export interface StreamNoneReader extends HookBase, StreamKey {
  readonly kind: 'stream_none_reader';
}

/** on_rtp_server_timeout: an openRtpServer port received no RTP within rtp_proxy.timeoutSec. */
export interface RtpServerTimeout extends HookBase {
  readonly kind: 'rtp_server_timeout';
  readonly streamId: string;
  readonly localPort: number;
  /** openRtpServer tcp_mode: 0 udp, 1 tcp passive, 2 tcp active. */
  readonly tcpMode: number;
  readonly reUsePort: boolean;
  /** The SSRC the port was restricted to, as the decimal `y=` string; undefined when any. */
  readonly ssrc: string | undefined;
}

/** on_server_keepalive: every hook.alive_interval seconds, with getStatistic-style object counts. */
export interface ServerKeepalive extends HookBase {
  readonly kind: 'server_keepalive';
  readonly stats: Readonly<Record<string, number>>;
  /** Streams on the node: one MultiMediaSourceMuxer per stream, whatever the protocol count. */
  readonly streams: number | undefined;
}

/** on_publish: someone pushes a stream (for GB28181 RTP, schema `rtp`). The reply allows or refuses. */
export interface Publish extends HookBase, StreamKey {
  readonly kind: 'publish';
  readonly ip: string;
  readonly port: number | undefined;
  readonly params: string;
  readonly id: string;
}

/** on_server_started: ZLM (re)started; its whole configuration as `section.key → value`. */
export interface ServerStarted extends HookBase {
  readonly kind: 'server_started';
  readonly config: Readonly<Record<string, string>>;
}

export type MediaHookEvent = StreamChanged | StreamNoneReader | RtpServerTimeout | ServerKeepalive | Publish | ServerStarted;

export function isMediaHookName(name: string): name is MediaHookName {
  return (MEDIA_HOOK_NAMES as readonly string[]).includes(name);
}

/** The sender id of a hook body, read before anything else so it can be authenticated first. */
export function hookSenderId(name: MediaHookName, body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const id = body.mediaServerId ?? (name === 'on_server_started' ? body['general.mediaServerId'] : undefined);
  return typeof id === 'string' && id !== '' ? id : undefined;
}

export function parseHookBody(name: string, body: unknown): MediaHookEvent {
  if (!isMediaHookName(name)) throw new MediaError('MEDIA_ERR_HOOK_UNKNOWN', `unknown hook ${JSON.stringify(name.slice(0, 64))}`);
  const mediaServerId = hookSenderId(name, body);
  if (!isObject(body) || mediaServerId === undefined) throw bodyError(name, 'mediaServerId');
  const r = new Reader(name, body);
  switch (name) {
    case 'on_stream_changed':
      return {
        kind: 'stream_changed',
        mediaServerId,
        regist: r.bool('regist'),
        ...streamKey(r),
        totalReaderCount: r.optNum('totalReaderCount'),
        originType: r.optNum('originType'),
      };
    case 'on_stream_none_reader':
      return { kind: 'stream_none_reader', mediaServerId, ...streamKey(r) };
    case 'on_rtp_server_timeout': {
      const ssrc = r.optNum('ssrc');
      return {
        kind: 'rtp_server_timeout',
        mediaServerId,
        streamId: r.str('stream_id'),
        localPort: r.num('local_port'),
        tcpMode: r.optNum('tcp_mode') ?? 0,
        reUsePort: r.optBool('re_use_port') ?? false,
        // SSRC 0 means "any" for openRtpServer; the y= form is 10 digits with leading zeros
        ssrc: ssrc === undefined || ssrc === 0 ? undefined : String(ssrc).padStart(10, '0'),
      };
    }
    case 'on_server_keepalive': {
      const data = body.data;
      if (!isObject(data)) throw bodyError(name, 'data');
      const stats: Record<string, number> = {};
      for (const [k, v] of Object.entries(data)) if (typeof v === 'number' && Number.isFinite(v)) stats[k] = v;
      return { kind: 'server_keepalive', mediaServerId, stats, streams: stats.MultiMediaSourceMuxer };
    }
    case 'on_publish':
      return {
        kind: 'publish',
        mediaServerId,
        ...streamKey(r),
        ip: r.optStr('ip') ?? '',
        port: r.optNum('port'),
        params: r.optStr('params') ?? '',
        id: r.optStr('id') ?? '',
      };
    case 'on_server_started': {
      const config: Record<string, string> = {};
      for (const [k, v] of Object.entries(body)) if (typeof v === 'string' || typeof v === 'number') config[k] = String(v);
      return { kind: 'server_started', mediaServerId, config };
    }
  }
}

function streamKey(r: Reader): StreamKey {
  // ZLM omits vhost when vhosts are disabled
  return { vhost: r.optStr('vhost') ?? '__defaultVhost__', app: r.str('app'), stream: r.str('stream'), schema: r.optStr('schema') ?? '' };
}

function bodyError(name: string, field: string): MediaError {
  return new MediaError('MEDIA_ERR_HOOK_BODY', `${name}: missing or invalid ${field}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Field access tolerant of the ZLM versions that send numbers and booleans as strings. */
class Reader {
  constructor(
    private readonly hook: string,
    private readonly o: Record<string, unknown>,
  ) {}

  str(key: string): string {
    const v = this.optStr(key);
    if (v === undefined || v === '') throw bodyError(this.hook, key);
    return v;
  }

  optStr(key: string): string | undefined {
    const v = this.o[key];
    return typeof v === 'string' ? v : undefined;
  }

  num(key: string): number {
    const v = this.optNum(key);
    if (v === undefined) throw bodyError(this.hook, key);
    return v;
  }

  optNum(key: string): number | undefined {
    const v = this.o[key];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string' && /^\d{1,15}$/.test(v)) return Number(v);
    return undefined;
  }

  bool(key: string): boolean {
    const v = this.optBool(key);
    if (v === undefined) throw bodyError(this.hook, key);
    return v;
  }

  optBool(key: string): boolean | undefined {
    const v = this.o[key];
    if (typeof v === 'boolean') return v;
    if (v === 1 || v === '1' || v === 'true') return true;
    if (v === 0 || v === '0' || v === 'false') return false;
    return undefined;
  }
}
