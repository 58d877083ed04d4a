/**
 * Choosing the media node for a new stream (SPEC §9). Behind this interface so the routing engine
 * (SPEC §10) can replace the first implementation (least-load-selector.ts) without callers changing.
 * Selection is pure: the caller gathers nodes, health and load, the selector only decides.
 */
import type { MediaNode } from './media-node.port.ts';
import type { NodeHealthState } from './node-health.ts';

/** live: real-time view; playback / download: history streams (GB/T 28181 §9.8, `s=Playback|Download`). */
export type MediaPurpose = 'live' | 'playback' | 'download';

export interface MediaCandidate {
  readonly node: MediaNode;
  readonly state: NodeHealthState;
  /** Streams on the node now (the larger of the node's report and our own accounting). */
  readonly streams: number;
}

export interface MediaSelectRequest {
  /** 20-digit GB28181 channel code the stream is for. */
  readonly channelId: string;
  readonly purpose: MediaPurpose;
  /** Every known node with its health and load; disabled ones are skipped by the selector. */
  readonly candidates: readonly MediaCandidate[];
  /** Node already carrying this channel's live stream: viewers share it (sticky per channel). */
  readonly currentNodeId?: string | undefined;
  /** Nodes to avoid, e.g. one that just failed openRtpServer for this request. */
  readonly exclude?: readonly string[] | undefined;
}

export interface MediaNodeSelector {
  /** The node for the stream, or throws MediaError MEDIA_ERR_NO_NODE. */
  select(req: MediaSelectRequest): MediaNode;
}
