/**
 * Typed client for the subset of ZLMediaKit's HTTP API the platform uses: RTP receive ports for
 * GB28181 streams (openRtpServer / connectRtpServer / closeRtpServer / getRtpInfo), forwarding to
 * an upstream platform (startSendRtp / stopSendRtp, CASC-6), stream listing, configuration and
 * snapshots. Rejects only with ZlmCallError (MEDIA_ERR_UNREACHABLE / _TIMEOUT / _API / _BAD_RESPONSE
 * / _CLOSED).
 */
import { ZlmCallError } from './errors.ts';
import { createZlmTransport, type ZlmJson, type ZlmNodeAddress, type ZlmTransportOptions } from './zlm-transport.ts';
import type {
  ConnectRtpServerParams,
  GetSnapParams,
  MediaListFilter,
  OpenRtpServerParams,
  RtpTcpMode,
  StartSendRtpParams,
  StopSendRtpParams,
  ZlmMediaInfo,
  ZlmRtpInfo,
} from './zlm-types.ts';

export interface ZlmClientOptions extends ZlmTransportOptions {
  /** ZLM virtual host. Default `__defaultVhost__`. */
  vhost?: string;
  /** Largest snapshot accepted. Default 8 MiB. */
  maxSnapBytes?: number;
}

export interface ZlmClient {
  readonly nodeId: string;
  /** Opens an RTP receive port bound to `streamId`; resolves with the port ZLM bound. */
  openRtpServer(p: OpenRtpServerParams): Promise<{ port: number }>;
  /** `hit: false` when no server had that stream id (already closed, or timed out). */
  closeRtpServer(streamId: string): Promise<{ hit: boolean }>;
  /**
   * Changes the SSRC an RTP server filters on, e.g. to the one a device answered instead of ours
   * (ZLM `updateRtpServerSSRC`).
   */
  updateRtpServerSsrc(streamId: string, ssrc: string): Promise<void>;
  /** tcp-active mode: ZLM connects to the device's TCP port (SDP `a=setup:passive` on the device). */
  connectRtpServer(p: ConnectRtpServerParams): Promise<void>;
  getMediaList(filter?: MediaListFilter): Promise<ZlmMediaInfo[]>;
  startSendRtp(p: StartSendRtpParams): Promise<{ localPort: number }>;
  stopSendRtp(p: StopSendRtpParams): Promise<void>;
  getRtpInfo(streamId: string): Promise<ZlmRtpInfo>;
  /** The node's configuration as flat `section.key → value` strings (e.g. `general.mediaServerId`). */
  getServerConfig(): Promise<Record<string, string>>;
  /** A JPEG of the stream at `url`. */
  getSnap(p: GetSnapParams): Promise<Buffer>;
  /** Idempotent; pending calls and later ones reject with MEDIA_ERR_CLOSED. */
  close(): Promise<void>;
}

const TCP_MODE: Record<RtpTcpMode, number> = { udp: 0, 'tcp-passive': 1, 'tcp-active': 2 };
const RTP_APP = 'rtp'; // ZLM registers GB28181 RTP under app "rtp"
const DEFAULT_VHOST = '__defaultVhost__';

export function createZlmClient(node: ZlmNodeAddress, opts: ZlmClientOptions = {}): ZlmClient {
  const t = createZlmTransport(node, opts);
  const vhost = opts.vhost ?? DEFAULT_VHOST;
  const bad = (api: string, what: string): ZlmCallError =>
    new ZlmCallError('MEDIA_ERR_BAD_RESPONSE', `${node.id} ${api}: ${what}`, { nodeId: node.id, api });
  const port = (api: string, o: ZlmJson, key: string): number => {
    const v = num(o[key]);
    if (v === undefined || !Number.isInteger(v) || v < 0 || v > 65_535) throw bad(api, `no valid ${key} in answer`);
    return v;
  };

  return {
    nodeId: node.id,
    async openRtpServer(p) {
      const o = await t.callJson('openRtpServer', {
        port: p.port ?? 0,
        tcp_mode: TCP_MODE[p.tcpMode ?? 'udp'],
        stream_id: p.streamId,
        re_use_port: p.reUsePort,
        ssrc: p.ssrc,
      });
      return { port: port('openRtpServer', o, 'port') };
    },
    async closeRtpServer(streamId) {
      const o = await t.callJson('closeRtpServer', { stream_id: streamId });
      return { hit: num(o.hit) === 1 };
    },
    async updateRtpServerSsrc(streamId, ssrc) {
      await t.callJson('updateRtpServerSSRC', { stream_id: streamId, ssrc });
    },
    async connectRtpServer(p) {
      await t.callJson('connectRtpServer', { stream_id: p.streamId, dst_url: p.dstUrl, dst_port: p.dstPort });
    },
    async getMediaList(filter = {}) {
      const o = await t.callJson('getMediaList', { vhost, schema: filter.schema, app: filter.app, stream: filter.stream });
      // ZLM omits `data` when nothing matches
      if (o.data === undefined) return [];
      if (!Array.isArray(o.data)) throw bad('getMediaList', 'data is not an array');
      return o.data.filter(isObject).map(toMediaInfo);
    },
    async startSendRtp(p) {
      const o = await t.callJson('startSendRtp', {
        vhost,
        app: p.app ?? RTP_APP,
        stream: p.stream,
        ssrc: p.ssrc,
        dst_url: p.dstUrl,
        dst_port: p.dstPort,
        is_udp: p.isUdp ?? true,
        src_port: p.srcPort,
        pt: p.pt,
        recv_stream_id: p.recvStreamId,
      });
      return { localPort: port('startSendRtp', o, 'local_port') };
    },
    async stopSendRtp(p) {
      await t.callJson('stopSendRtp', { vhost, app: p.app ?? RTP_APP, stream: p.stream, ssrc: p.ssrc });
    },
    async getRtpInfo(streamId) {
      const o = await t.callJson('getRtpInfo', { stream_id: streamId });
      if (o.exist !== true) return { exist: false };
      return {
        exist: true,
        peerIp: str(o.peer_ip),
        peerPort: port('getRtpInfo', o, 'peer_port'),
        localIp: str(o.local_ip),
        localPort: port('getRtpInfo', o, 'local_port'),
      };
    },
    async getServerConfig() {
      const o = await t.callJson('getServerConfig', {});
      const first: unknown = Array.isArray(o.data) ? o.data[0] : undefined;
      if (!isObject(first)) throw bad('getServerConfig', 'data[0] is not an object');
      return Object.fromEntries(Object.entries(first).map(([k, v]) => [k, typeof v === 'string' ? v : String(v)]));
    },
    async getSnap(p) {
      const res = await t.callBinary(
        'getSnap',
        { url: p.url, timeout_sec: p.timeoutSec ?? 10, expire_sec: p.expireSec ?? 1 },
        opts.maxSnapBytes ?? 8 * 1024 * 1024,
      );
      // ZLM answers its default picture (often a PNG) when the snapshot fails: not a JPEG of the stream
      if (!isJpeg(res.body)) throw bad('getSnap', `not a JPEG (content-type ${res.contentType || 'none'})`);
      return res.body;
    },
    close: () => t.close(),
  };
}

function toMediaInfo(o: Record<string, unknown>): ZlmMediaInfo {
  return {
    app: str(o.app),
    stream: str(o.stream),
    schema: str(o.schema),
    vhost: str(o.vhost),
    readerCount: num(o.readerCount) ?? 0,
    totalReaderCount: num(o.totalReaderCount) ?? 0,
    originType: num(o.originType) ?? 0,
    aliveSecond: num(o.aliveSecond),
    bytesSpeed: num(o.bytesSpeed),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

/** ZLM versions differ in sending numbers as JSON numbers or numeric strings. */
function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}

/** JPEG starts with SOI (FF D8) and ends with EOI (FF D9), ITU-T T.81 Annex B. */
function isJpeg(b: Buffer): boolean {
  return b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[b.length - 2] === 0xff && b[b.length - 1] === 0xd9;
}
