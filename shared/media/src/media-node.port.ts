/**
 * Media nodes (ZLMediaKit servers) the platform may put streams on, and the store that lists them
 * (SPEC §9). The media plane is stateless: this record is configuration, health and load are runtime
 * state kept elsewhere (node-health.ts, stream-ledger.ts).
 */
export interface PortRange {
  readonly min: number;
  readonly max: number;
}

export interface MediaNode {
  /** ZLM `general.mediaServerId`: every hook body carries it, so hooks are matched to this row. */
  readonly id: string;
  /** Base of ZLM's HTTP API, e.g. `http://10.0.0.21:80` (the client appends `/index/api/<name>`). */
  readonly apiBaseUrl: string;
  /** ZLM `api.secret`; also expected as `?secret=` on the hook URLs configured in that ZLM. */
  readonly secret: string;
  /** ZLM `rtp_proxy.port_range`: where openRtpServer(port=0) binds; for firewall and SDP checks. */
  readonly rtpPortRange: PortRange;
  /** Address put in the SDP `c=` line of INVITEs: where devices send RTP (GB/T 28181 §9.2). */
  readonly sdpIp: string;
  /** Host put in the play URLs handed to viewers (may be a public name). */
  readonly streamIp: string;
  /** Where this ZLM's hooks are configured to go, e.g. `http://10.0.0.11:8080/vms/webhook` (CASC-6). */
  readonly hookBaseUrl: string;
  /** False: never chosen for new streams. */
  readonly enabled: boolean;
  /** Relative capacity for least-load selection; 0 drains the node (no new streams). */
  readonly weight: number;
  /** ZLM `http.port`: HTTP-FLV, HLS, WebRTC signalling. */
  readonly httpPort: number;
  /** ZLM `rtsp.port`. */
  readonly rtspPort: number;
  /** ZLM `rtmp.port`. */
  readonly rtmpPort: number;
}

export interface MediaNodeRegistry {
  /** Enabled nodes, ordered by id. */
  listEnabled(): Promise<MediaNode[]>;
  /** Every node, enabled or not, ordered by id (administration). */
  listAll(): Promise<MediaNode[]>;
  get(id: string): Promise<MediaNode | null>;
  /** Validates (MEDIA_ERR_INVALID_NODE), then inserts or replaces the node with this id. */
  upsert(node: MediaNode): Promise<void>;
  /** True when a node was removed. */
  remove(id: string): Promise<boolean>;
  /** Idempotent; later calls reject with MEDIA_ERR_CLOSED. Does not close a pool it was given. */
  close(): Promise<void>;
}
