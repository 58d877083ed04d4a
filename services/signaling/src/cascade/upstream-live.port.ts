// What the upstream's live view (SPEC CASC-6, upstream-live.ts) needs from the rest of the instance,
// in domain terms. Both reject only with CascadeError (CASCADE_ERR_SOURCE_* / _MEDIA / _CHANNEL_NOT_SHARED).
//  - LiveSource: one viewer of a channel's live stream, got through the control API's play path (owner
//    routing forwards it to the device's owner, which INVITEs the device into a media node; the stream
//    is shared with every other viewer and ends with the last one).
//  - RtpForwarder: the media node re-sends that stream to the upstream (ZLM startSendRtp / stopSendRtp).

/** A recording instead of the live stream (GB/T 28181-2016 §9.8 playback, §9.9 download). */
export interface HistoryRequest {
  readonly purpose: 'playback' | 'download';
  readonly start: Date;
  readonly end: Date;
  /** Download: multiple of real time. */
  readonly speed?: number;
}

/** Playback control relayed from the upstream's MANSRTSP INFO (§9.8, Annex B). */
export type HistoryAction = { readonly action: 'pause' | 'resume' } | { readonly action: 'seek' | 'speed'; readonly value: number };

export interface LiveViewer {
  readonly purpose: 'live' | 'playback' | 'download';
  /** play/start's (playback/start's…) session id: stop it to leave (the stream ends with its last viewer). */
  readonly sessionId: string;
  /** ZLM stream id (app `rtp`) on the media node. */
  readonly streamId: string;
  readonly mediaNodeId: string;
}

export interface LiveSource {
  /** Joins (or starts) the channel's live stream as a viewer of the device's tenant; with `history`, plays a recording back instead. */
  start(req: { readonly deviceId: string; readonly channelId: string; readonly tenantId: string; readonly history?: HistoryRequest }): Promise<LiveViewer>;
  /** Leaves it. */
  stop(viewer: LiveViewer, tenantId: string): Promise<void>;
  /** Pause / resume / seek / speed of a playback viewer; CascadeError when the owner or the device refused or did not answer. */
  control(viewer: LiveViewer, tenantId: string, action: HistoryAction): Promise<void>;
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
