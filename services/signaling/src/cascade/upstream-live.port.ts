// What the upstream's live view (SPEC CASC-6, upstream-live.ts) needs from the rest of the instance,
// in domain terms. Both reject only with CascadeError (CASCADE_ERR_SOURCE_* / _MEDIA / _CHANNEL_NOT_SHARED).
//  - LiveSource: one viewer of a channel's live stream, got through the control API's play path (owner
//    routing forwards it to the device's owner, which INVITEs the device into a media node; the stream
//    is shared with every other viewer and ends with the last one).
//  - RtpForwarder: the media node re-sends that stream to the upstream (ZLM startSendRtp / stopSendRtp).

export interface LiveViewer {
  /** play/start's session id: stop it to leave (the stream ends with its last viewer). */
  readonly sessionId: string;
  /** ZLM stream id (app `rtp`) on the media node. */
  readonly streamId: string;
  readonly mediaNodeId: string;
}

export interface LiveSource {
  /** Joins (or starts) the channel's live stream as a viewer of the device's tenant. */
  start(req: { readonly deviceId: string; readonly channelId: string; readonly tenantId: string }): Promise<LiveViewer>;
  /** Leaves it. */
  stop(viewer: LiveViewer, tenantId: string): Promise<void>;
}

export interface SendRtpRequest {
  readonly streamId: string;
  /** y= of the upstream. */
  readonly ssrc: string;
  readonly dstAddress: string;
  readonly dstPort: number;
  /** false: TCP, the media node connects to the destination (RFC 4571 framing). */
  readonly udp: boolean;
  readonly payloadType: number;
}

export interface RtpSending {
  /** The media node's SDP address and the local port it sends from: the answer's c= and m=. */
  readonly address: string;
  readonly port: number;
}

export interface RtpForwarder {
  /** Resolves once the media node has the stream (the device's RTP arrived); CASCADE_ERR_SOURCE_TIMEOUT after `timeoutMs`. */
  waitForStream(nodeId: string, streamId: string, timeoutMs: number, signal: AbortSignal): Promise<void>;
  start(nodeId: string, req: SendRtpRequest): Promise<RtpSending>;
  stop(nodeId: string, streamId: string, ssrc: string): Promise<void>;
}
