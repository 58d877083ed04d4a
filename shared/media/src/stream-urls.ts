/**
 * Play URLs of a stream on a media node, following ZLMediaKit's URL rules: every protocol is muxed
 * from the one received stream, under `<app>/<stream>` (GB28181 RTP lands in app `rtp`).
 */
import type { MediaNode } from './media-node.port.ts';

export interface StreamUrls {
  /** HTTP-FLV: `http://host:http/app/stream.live.flv`. */
  readonly flv: string;
  /** WebSocket-FLV, same path over ws://. */
  readonly wsFlv: string;
  /** HLS: `http://host:http/app/stream/hls.m3u8`. */
  readonly hls: string;
  /** HTTP fragmented MP4: `http://host:http/app/stream.live.mp4`. */
  readonly fmp4: string;
  readonly rtsp: string;
  readonly rtmp: string;
  /** WebRTC play via ZLM's signalling endpoint (`/index/api/webrtc?…&type=play`). */
  readonly webrtc: string;
}

export type StreamUrlNode = Pick<MediaNode, 'streamIp' | 'httpPort' | 'rtspPort' | 'rtmpPort'>;

export function streamUrls(node: StreamUrlNode, stream: string, app = 'rtp'): StreamUrls {
  const host = node.streamIp.includes(':') && !node.streamIp.startsWith('[') ? `[${node.streamIp}]` : node.streamIp;
  const path = `${encodeURIComponent(app)}/${encodeURIComponent(stream)}`;
  const http = `${host}:${node.httpPort}`;
  const query = new URLSearchParams({ app, stream, type: 'play' });
  return {
    flv: `http://${http}/${path}.live.flv`,
    wsFlv: `ws://${http}/${path}.live.flv`,
    hls: `http://${http}/${path}/hls.m3u8`,
    fmp4: `http://${http}/${path}.live.mp4`,
    rtsp: `rtsp://${host}:${node.rtspPort}/${path}`,
    rtmp: `rtmp://${host}:${node.rtmpPort}/${path}`,
    webrtc: `http://${http}/index/api/webrtc?${query.toString()}`,
  };
}
