/**
 * This instance's own accounting of the streams it placed on media nodes: load between two
 * keepalives (which lag by up to hook.alive_interval), and the node carrying each channel's live
 * stream (stickiness, SPEC §9). In-memory and per instance; the node's keepalive report covers
 * streams placed by other instances.
 */
import type { MediaNode } from './media-node.port.ts';
import type { MediaCandidate, MediaPurpose } from './media-selector.port.ts';
import type { NodeHealthState } from './node-health.ts';

export interface PlacedStream {
  /** ZLM stream id (openRtpServer stream_id). */
  readonly streamId: string;
  readonly nodeId: string;
  readonly channelId: string;
  readonly purpose: MediaPurpose;
}

export class StreamLedger {
  readonly #streams = new Map<string, PlacedStream>();
  readonly #liveByChannel = new Map<string, string>();
  readonly #countByNode = new Map<string, number>();

  /** Records a stream; replacing an entry with the same stream id moves it. */
  add(s: PlacedStream): void {
    this.remove(s.streamId);
    this.#streams.set(s.streamId, { ...s });
    this.#countByNode.set(s.nodeId, (this.#countByNode.get(s.nodeId) ?? 0) + 1);
    if (s.purpose === 'live') this.#liveByChannel.set(s.channelId, s.streamId);
  }

  remove(streamId: string): PlacedStream | undefined {
    const s = this.#streams.get(streamId);
    if (s === undefined) return undefined;
    this.#streams.delete(streamId);
    const n = (this.#countByNode.get(s.nodeId) ?? 1) - 1;
    if (n > 0) this.#countByNode.set(s.nodeId, n);
    else this.#countByNode.delete(s.nodeId);
    if (this.#liveByChannel.get(s.channelId) === streamId) this.#liveByChannel.delete(s.channelId);
    return s;
  }

  get(streamId: string): PlacedStream | undefined {
    return this.#streams.get(streamId);
  }

  /** The channel's live stream, if this instance placed one. */
  liveStreamOf(channelId: string): PlacedStream | undefined {
    const id = this.#liveByChannel.get(channelId);
    return id === undefined ? undefined : this.#streams.get(id);
  }

  streamsOn(nodeId: string): number {
    return this.#countByNode.get(nodeId) ?? 0;
  }

  /** Streams on a node that went away, for the caller to tear down or move. */
  listOn(nodeId: string): PlacedStream[] {
    return [...this.#streams.values()].filter((s) => s.nodeId === nodeId);
  }

  get size(): number {
    return this.#streams.size;
  }
}

export interface CandidateSources {
  state(nodeId: string): NodeHealthState;
  /** Stream count from the node's last keepalive, if any. */
  reportedStreams(nodeId: string): number | undefined;
  ledger: StreamLedger;
}

/**
 * Candidates for MediaNodeSelector.select. Load is the larger of the node's report and our own
 * count: the report includes other instances' streams, our count includes streams placed since it.
 */
export function buildCandidates(nodes: readonly MediaNode[], src: CandidateSources): MediaCandidate[] {
  return nodes.map((node) => ({
    node,
    state: src.state(node.id),
    streams: Math.max(src.reportedStreams(node.id) ?? 0, src.ledger.streamsOn(node.id)),
  }));
}
