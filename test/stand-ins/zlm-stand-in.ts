/**
 * A STAND-IN for a ZLMediaKit media node — not ZLMediaKit. It answers the subset of ZLM's HTTP API
 * the platform calls (`/index/api/<name>`, `secret=` checked, ZLM's `{code, msg, ...}` envelope and
 * field names), binds real RTP ports, counts RTP packets and PS pack headers, and fires ZLM's hooks
 * at the configured hook base URL. It does not demux, transcode or serve any stream protocol.
 * Stream life cycle and hooks: zlm-stand-in-streams.ts. Readers are simulated:
 * `GET /standin/readers?secret=&stream=&delta=±n`. See README.md.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StandInHookSender, type HookCall } from './zlm-hook-sender.ts';
import type { TcpMode } from './zlm-rtp-port.ts';
import { StandInRtpSender } from './zlm-rtp-sender.ts';
import { StandInStreams, type StreamStats } from './zlm-stand-in-streams.ts';

export type { StreamStats } from './zlm-stand-in-streams.ts';

const HOST = '127.0.0.1';

/** ZLM ApiErr codes. */
const OK = 0;
const FAILED = -1;
const AUTH_FAILED = -100;
const INVALID_ARGS = -300;
const EXCEPTION = -400;

/**
 * A 1x1 grey baseline JPEG (ITU-T T.81): SOI, JFIF APP0, one quantisation table, SOF0 (1 component),
 * one-symbol DC and AC Huffman tables, SOS, one entropy-coded byte (DC diff 0, EOB), EOI.
 */
export const TINY_JPEG = Buffer.from(
  'ffd8ffe000104a46494600010100000100010000ffdb004300' +
    '01'.repeat(64) +
    'ffc0000b080001000101011100' +
    ['00', '10'].map((tableClass) => `ffc40014${tableClass}01${'00'.repeat(15)}00`).join('') +
    'ffda0008010100003f003fffd9',
  'hex',
);

export interface ZlmStandInOptions {
  /** ZLM api.secret: required on every API call. */
  secret: string;
  /** ZLM general.mediaServerId, added to every hook body. */
  mediaServerId: string;
  /** Hook base, e.g. `http://127.0.0.1:PORT/vms/webhook?secret=S`; '' turns hooks off. */
  hookBaseUrl: string;
  /** ZLM rtp_proxy.timeoutSec. Default 15 000 ms. */
  rtpTimeoutMs?: number;
  /** ZLM hook.alive_interval. Default 10 000 ms; 0 turns keepalives off. */
  keepaliveIntervalMs?: number;
  /** ZLM general.streamNoneReaderDelayMS. Default 0. */
  noneReaderDelayMs?: number;
  /** Schemas a stream registers under (one on_stream_changed each). Default rtsp, rtmp. */
  schemas?: readonly string[];
  /** ZLM hook.timeoutSec. Default 3000 ms. */
  hookTimeoutMs?: number;
  /** HTTP API port. Default: one from the OS. A fixed port lets a test stop a node and start it again at the same address. */
  port?: number;
}

export interface ZlmStandIn {
  readonly apiBaseUrl: string;
  readonly mediaServerId: string;
  readonly httpPort: number;
  /** Stats of an open RTP server, undefined once closed. */
  stats(streamId: string): StreamStats | undefined;
  /** Every hook fired so far, with the receiver's replies. */
  readonly hookCalls: readonly HookCall[];
  /** Idempotent. */
  close(): Promise<void>;
}

type Params = Map<string, string>;
type Answer = { status?: number; json: Record<string, unknown> } | { bytes: Buffer; contentType: string };

class ApiError extends Error {
  constructor(
    readonly zlmCode: number,
    message: string,
  ) {
    super(message);
  }
}

function required(p: Params, ...names: string[]): string[] {
  return names.map((n) => {
    const v = p.get(n);
    if (v === undefined || v === '') throw new ApiError(INVALID_ARGS, `Required parameter missed: ${n}`);
    return v;
  });
}

export async function startZlmStandIn(opts: ZlmStandInOptions): Promise<ZlmStandIn> {
  const rtpTimeoutMs = opts.rtpTimeoutMs ?? 15_000;
  const keepaliveMs = opts.keepaliveIntervalMs ?? 10_000;
  const schemas = opts.schemas ?? ['rtsp', 'rtmp'];
  const hooks = new StandInHookSender(opts.hookBaseUrl, opts.mediaServerId, opts.hookTimeoutMs ?? 3000);
  const streams = new StandInStreams(hooks, { rtpTimeoutMs, noneReaderDelayMs: opts.noneReaderDelayMs ?? 0, schemas });
  let httpPort = 0;
  let closed = false;

  const api: Record<string, (p: Params) => Promise<Answer>> = {
    async openRtpServer(p) {
      const [id] = required(p, 'stream_id') as [string];
      if (streams.get(id) !== undefined) throw new ApiError(INVALID_ARGS, 'This stream_id already exists');
      const tcpMode = Number(p.get('tcp_mode') ?? '0');
      if (tcpMode !== 0 && tcpMode !== 1 && tcpMode !== 2) throw new ApiError(INVALID_ARGS, 'tcp_mode must be 0, 1 or 2');
      const ssrc = p.has('ssrc') ? Number(p.get('ssrc')) : undefined;
      const s = await streams
        .open({ id, port: Number(p.get('port') ?? '0'), tcpMode: tcpMode as TcpMode, ssrc, reUsePort: p.get('re_use_port') === '1' })
        .catch((err: Error) => {
          throw new ApiError(FAILED, `open rtp server failed: ${err.message}`);
        });
      return { json: { code: OK, port: s.port.stats.port } };
    },
    async closeRtpServer(p) {
      const s = streams.get(required(p, 'stream_id')[0]!);
      if (s !== undefined) await streams.close(s);
      return { json: { code: OK, hit: s === undefined ? 0 : 1 } };
    },
    async updateRtpServerSSRC(p) {
      const [id, ssrc] = required(p, 'stream_id', 'ssrc') as [string, string];
      const s = streams.get(id);
      if (s === undefined) throw new ApiError(FAILED, 'rtp server not found');
      s.port.filterSsrc(Number(ssrc));
      return { json: { code: OK } };
    },
    async connectRtpServer(p) {
      const [id, dstUrl, dstPort] = required(p, 'stream_id', 'dst_url', 'dst_port') as [string, string, string];
      const s = streams.get(id);
      if (s === undefined || s.port.stats.tcpMode !== 2) throw new ApiError(FAILED, 'rtp server not found or not in tcp active mode');
      await s.port.connectOut(dstUrl, Number(dstPort)).catch((err: Error) => {
        throw new ApiError(FAILED, `connect failed: ${err.message}`);
      });
      return { json: { code: OK } };
    },
    async getMediaList(p) {
      const wanted = (m: Record<string, unknown>): boolean => ['schema', 'app', 'stream'].every((k) => (p.get(k) ?? '') === '' || p.get(k) === m[k]);
      return { json: { code: OK, data: streams.mediaList().filter(wanted) } };
    },
    async getRtpInfo(p) {
      const s = streams.get(required(p, 'stream_id')[0]!);
      const peer = s?.port.stats.peer;
      if (s === undefined || peer === undefined) return { json: { code: OK, exist: false } };
      return { json: { code: OK, exist: true, peer_ip: peer.ip, peer_port: peer.port, local_ip: HOST, local_port: s.port.stats.port } };
    },
    async startSendRtp(p) {
      const [stream, ssrc, dstUrl, dstPort] = required(p, 'stream', 'ssrc', 'dst_url', 'dst_port') as [string, string, string, string];
      const s = streams.get(stream);
      if (s === undefined || !s.registered) throw new ApiError(FAILED, 'can not find the source stream');
      if (s.senders.has(ssrc)) throw new ApiError(FAILED, 'this ssrc is already being sent');
      const udp = p.get('is_udp') !== '0';
      const opts = { ssrc: Number(ssrc), dstHost: dstUrl, dstPort: Number(dstPort), udp, srcPort: Number(p.get('src_port') ?? '0') };
      const recv = p.get('recv_stream_id') ?? '';
      let sender: StandInRtpSender;
      if (recv !== '') {
        // ZLM two-way talk: send and receive on one port; what arrives there becomes stream `recv_stream_id` (app rtp)
        if (!udp) throw new ApiError(FAILED, 'the stand-in receives talk audio over UDP only');
        if (streams.get(recv) !== undefined) throw new ApiError(INVALID_ARGS, 'recv_stream_id already exists');
        const r = await streams.open({ id: recv, port: opts.srcPort, tcpMode: 0, ssrc: undefined, reUsePort: false }).catch((err: Error) => {
          throw new ApiError(FAILED, `start send rtp failed: ${err.message}`);
        });
        sender = StandInRtpSender.through(opts, { port: r.port.stats.port, sendUdp: (b, h, pt) => r.port.sendUdp(b, h, pt), close: async () => (streams.get(recv) === r ? streams.close(r) : undefined) });
      } else {
        sender = await StandInRtpSender.start(opts).catch((err: Error) => {
          throw new ApiError(FAILED, `start send rtp failed: ${err.message}`);
        });
      }
      s.senders.set(ssrc, sender);
      return { json: { code: OK, local_port: sender.localPort } };
    },
    async stopSendRtp(p) {
      const s = streams.get(required(p, 'stream')[0]!);
      const ssrc = p.get('ssrc') ?? '';
      const victims = [...(s?.senders.entries() ?? [])].filter(([k]) => ssrc === '' || k === ssrc);
      if (victims.length === 0) throw new ApiError(FAILED, 'stopSendRtp failed: no such sender');
      for (const [k, sender] of victims) {
        s?.senders.delete(k);
        await sender.close();
      }
      return { json: { code: OK } };
    },
    async getServerConfig() {
      const config = {
        'general.mediaServerId': opts.mediaServerId,
        'api.secret': opts.secret,
        'http.port': String(httpPort),
        'rtp_proxy.timeoutSec': String(Math.ceil(rtpTimeoutMs / 1000)),
        'hook.alive_interval': String(keepaliveMs / 1000),
        'hook.enable': opts.hookBaseUrl === '' ? '0' : '1',
      };
      return { json: { code: OK, data: [config] } };
    },
    async getSnap(p) {
      required(p, 'url');
      return { bytes: TINY_JPEG, contentType: 'image/jpeg' };
    },
  };

  const readers = async (p: Params): Promise<Answer> => {
    const [stream, delta] = required(p, 'stream', 'delta') as [string, string];
    const s = streams.get(stream);
    if (s === undefined || !s.registered) throw new ApiError(FAILED, 'stream not registered');
    return { json: { code: OK, readers: streams.setReaders(s, Number(delta)) } };
  };

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let answer: Answer;
    try {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const params = await readParams(req, url);
      const name = url.pathname.startsWith('/index/api/') ? url.pathname.slice('/index/api/'.length) : undefined;
      const handler = url.pathname === '/standin/readers' ? readers : name !== undefined && Object.hasOwn(api, name) ? api[name] : undefined;
      if (handler === undefined) answer = { status: 404, json: { code: FAILED, msg: 'not found' } };
      else if (params.get('secret') !== opts.secret) answer = { json: { code: AUTH_FAILED, msg: 'Incorrect secret' } };
      else answer = await handler(params);
    } catch (err) {
      answer = { json: err instanceof ApiError ? { code: err.zlmCode, msg: err.message } : { code: EXCEPTION, msg: String(err) } };
    }
    if ('bytes' in answer) res.writeHead(200, { 'content-type': answer.contentType }).end(answer.bytes);
    else res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
  };

  const server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, HOST, () => resolve());
  });
  httpPort = (server.address() as AddressInfo).port;

  // getStatistic-style object counts: one muxer per stream, one media source per schema
  const sendKeepalive = async (): Promise<void> => {
    const n = streams.registered().length;
    await hooks.fire('on_server_keepalive', { data: { MultiMediaSourceMuxer: n, MediaSource: n * schemas.length, RtpServer: streams.size } });
  };
  const keepalive = keepaliveMs > 0 ? setInterval(() => void sendKeepalive(), keepaliveMs) : undefined;
  keepalive?.unref();
  void hooks.fire('on_server_started', { 'general.mediaServerId': opts.mediaServerId, 'http.port': String(httpPort) });

  return {
    apiBaseUrl: `http://${HOST}:${httpPort}`,
    mediaServerId: opts.mediaServerId,
    httpPort,
    hookCalls: hooks.calls,
    stats: (streamId) => streams.stats(streamId),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(keepalive);
      hooks.close();
      await streams.closeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** ZLM takes parameters from the query string, or from a urlencoded or JSON POST body. */
async function readParams(req: IncomingMessage, url: URL): Promise<Params> {
  const p: Params = new Map(url.searchParams);
  if (req.method !== 'POST') return p;
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return p;
  if ((req.headers['content-type'] ?? '').includes('json')) {
    const json: unknown = JSON.parse(text);
    if (typeof json === 'object' && json !== null) for (const [k, v] of Object.entries(json)) p.set(k, String(v));
  } else {
    for (const [k, v] of new URLSearchParams(text)) p.set(k, v);
  }
  return p;
}
