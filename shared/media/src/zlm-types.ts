/**
 * Parameters and results of the ZLMediaKit HTTP API calls the platform makes (`/index/api/<name>`),
 * in this codebase's camelCase. The wire names are ZLM's snake_case; zlm-client.ts translates.
 */

/**
 * openRtpServer `tcp_mode`: 0 UDP only, 1 also listen on TCP (device connects: SDP `a=setup:active`
 * on the device side), 2 ZLM connects out (device listens, see connectRtpServer). GB/T 28181-2016
 * §9.2 / RFC 4571 framing for TCP.
 */
export type RtpTcpMode = 'udp' | 'tcp-passive' | 'tcp-active';

export interface OpenRtpServerParams {
  /** ZLM stream id; also the `stream` of the media source once RTP arrives (app `rtp`). */
  streamId: string;
  /** 0 (default): ZLM picks a port in rtp_proxy.port_range. */
  port?: number;
  tcpMode?: RtpTcpMode;
  /** SO_REUSEPORT on the receive socket. */
  reUsePort?: boolean;
  /** Accept only this SSRC (decimal, the SDP `y=` value); omitted or 0 accepts any. */
  ssrc?: string;
}

export interface ConnectRtpServerParams {
  streamId: string;
  /** Device address to connect to (tcp-active). */
  dstUrl: string;
  dstPort: number;
}

export interface MediaListFilter {
  schema?: string;
  app?: string;
  stream?: string;
}

/** One entry of getMediaList: one per stream *and* protocol (schema), as ZLM registers each. */
export interface ZlmMediaInfo {
  app: string;
  stream: string;
  schema: string;
  vhost: string;
  /** Viewers of this schema. */
  readerCount: number;
  /** Viewers of the stream across all schemas. */
  totalReaderCount: number;
  /** ZLM MediaOriginType: 3 = rtp_push (GB28181 RTP received by openRtpServer). */
  originType: number;
  aliveSecond: number | undefined;
  bytesSpeed: number | undefined;
}

export interface StartSendRtpParams {
  /** Default `rtp`. */
  app?: string;
  stream: string;
  /** SSRC of the RTP ZLM sends (decimal string, e.g. the upstream platform's `y=`). */
  ssrc: string;
  dstUrl: string;
  dstPort: number;
  /** UDP (default) or TCP active (ZLM connects to dst). */
  isUdp?: boolean;
  /** Local port to send from; 0 / omitted: any. */
  srcPort?: number;
  /** RTP payload type; ZLM's default is 96. */
  pt?: number;
  /**
   * ZLM `recv_stream_id` (two-way talk, 语音对讲): the node also receives RTP on the sending port and
   * publishes it as this stream id (app `rtp`), released with the sender by stopSendRtp.
   */
  recvStreamId?: string;
}

export interface StopSendRtpParams {
  app?: string;
  stream: string;
  /** Omitted: stop every sender of the stream. */
  ssrc?: string;
}

export type ZlmRtpInfo =
  | { exist: false }
  | { exist: true; peerIp: string; peerPort: number; localIp: string; localPort: number };

export interface GetSnapParams {
  /** The stream URL ZLM takes the picture from (usually its own rtsp:// URL). */
  url: string;
  timeoutSec?: number;
  /** Reuse a snapshot younger than this. */
  expireSec?: number;
}
