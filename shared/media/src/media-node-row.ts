// The `media_node` row as both stores hold it: MySQL in the cluster (media-node.mysql.ts) and SQLite in the
// standalone instance (services/signaling). One mapping, so a column added to one cannot be missed in the other.
import type { MediaNode } from './media-node.port.ts';

/** Column list of `media_node`, in the order of `mediaNodeRowValues`. */
export const MEDIA_NODE_COLUMNS =
  'id, api_base_url, secret, rtp_port_min, rtp_port_max, sdp_ip, stream_ip, hook_base_url, enabled, weight, http_port, rtsp_port, rtmp_port';

export interface MediaNodeRow {
  id: string;
  api_base_url: string;
  secret: string;
  rtp_port_min: number;
  rtp_port_max: number;
  sdp_ip: string;
  stream_ip: string;
  hook_base_url: string;
  enabled: number;
  weight: number;
  http_port: number;
  rtsp_port: number;
  rtmp_port: number;
}

export function mediaNodeFromRow(r: MediaNodeRow): MediaNode {
  return Object.freeze({
    id: r.id,
    apiBaseUrl: r.api_base_url,
    secret: r.secret,
    rtpPortRange: Object.freeze({ min: r.rtp_port_min, max: r.rtp_port_max }),
    sdpIp: r.sdp_ip,
    streamIp: r.stream_ip,
    hookBaseUrl: r.hook_base_url,
    enabled: r.enabled === 1,
    weight: r.weight,
    httpPort: r.http_port,
    rtspPort: r.rtsp_port,
    rtmpPort: r.rtmp_port,
  });
}

/** A validated node as the values of MEDIA_NODE_COLUMNS, in that order. */
export function mediaNodeRowValues(n: MediaNode): Array<string | number> {
  return [n.id, n.apiBaseUrl, n.secret, n.rtpPortRange.min, n.rtpPortRange.max, n.sdpIp, n.streamIp, n.hookBaseUrl, n.enabled ? 1 : 0, n.weight, n.httpPort, n.rtspPort, n.rtmpPort];
}
