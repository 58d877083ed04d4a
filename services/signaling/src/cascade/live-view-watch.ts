// Watching the streams the upstream's live views forward (SPEC CASC-6): when a device stream ends on its
// own — the device BYEs its owner, goes offline, its RTP times out on the media node, an operator stops
// the session the leader shares, the media node closes it — the leader is not told by the owner, but the
// stream disappears from the media node. The leader therefore looks at the media node (getMediaList)
// every STREAM_CHECK_MS for each stream it forwards, and ends the upstream's dialog once the stream is
// gone. This works whatever instance owns the device, and needs no message from it.
//
// `judgeStream` is the decision (pure); `StreamWatcher` is the loop (clock timers, a probe per distinct
// stream per round, `onGone` once per watched view).
import type { Clock, TimerHandle } from '../core/clock.ts';

/** A forwarded stream is looked at on its media node this often, ms. */
export const STREAM_CHECK_MS = 2000;
/** Consecutive checks not finding the stream before it counts as gone (one miss may be a race with its registration). */
export const STREAM_GONE_CHECKS = 2;
/** Consecutive checks the media node did not answer before its streams count as gone (≈ 10 s). */
export const STREAM_UNREACHABLE_CHECKS = 5;

/** What one check of a stream on its media node saw. */
export type StreamObservation =
  | { readonly kind: 'present'; /** ZLM aliveSecond, when the node reports it. */ readonly aliveSecond?: number | undefined }
  | { readonly kind: 'absent' }
  | { readonly kind: 'unreachable' };

export interface WatchState {
  readonly absent: number;
  readonly unreachable: number;
  /** The largest aliveSecond seen: a smaller one later means the stream was ended and started again. */
  readonly aliveSecond: number | undefined;
}

export type GoneReason = 'stream-gone' | 'stream-restarted' | 'media-node-unreachable';

export const INITIAL_WATCH: WatchState = { absent: 0, unreachable: 0, aliveSecond: undefined };

/**
 * One check's verdict. A stream restarted under the same id (its aliveSecond went back) is gone too:
 * the media node stopped this view's sending with the old stream, the new one is someone else's.
 */
export function judgeStream(s: WatchState, o: StreamObservation): { readonly state: WatchState; readonly gone: GoneReason | null } {
  switch (o.kind) {
    case 'present': {
      if (o.aliveSecond !== undefined && s.aliveSecond !== undefined && o.aliveSecond < s.aliveSecond) {
        return { state: { ...s, absent: 0, unreachable: 0 }, gone: 'stream-restarted' };
      }
      const aliveSecond = o.aliveSecond === undefined ? s.aliveSecond : Math.max(o.aliveSecond, s.aliveSecond ?? 0);
      return { state: { absent: 0, unreachable: 0, aliveSecond }, gone: null };
    }
    case 'absent': {
      const absent = s.absent + 1;
      return { state: { ...s, absent, unreachable: 0 }, gone: absent >= STREAM_GONE_CHECKS ? 'stream-gone' : null };
    }
    case 'unreachable': {
      const unreachable = s.unreachable + 1;
      return { state: { ...s, unreachable }, gone: unreachable >= STREAM_UNREACHABLE_CHECKS ? 'media-node-unreachable' : null };
    }
  }
}

/** Looks a stream up on its media node. Rejects when the node does not answer (counted as unreachable). */
export type StreamProbe = (nodeId: string, streamId: string) => Promise<StreamObservation>;

export interface StreamWatcherOptions {
  readonly clock: Clock;
  readonly probe: StreamProbe;
  /** Called once per watched key whose stream is judged gone; the key is unwatched first. */
  readonly onGone: (key: string, reason: GoneReason) => void;
  readonly intervalMs?: number;
}

interface Watched {
  readonly nodeId: string;
  readonly streamId: string;
  state: WatchState;
}

/** Checks every watched stream each interval (one probe per distinct node + stream), while any is watched. */
export class StreamWatcher {
  readonly #o: StreamWatcherOptions;
  readonly #watched = new Map<string, Watched>();
  #timer: TimerHandle | undefined;
  #running = false;
  #closed = false;

  constructor(opts: StreamWatcherOptions) {
    this.#o = opts;
  }

  get size(): number {
    return this.#watched.size;
  }

  watch(key: string, nodeId: string, streamId: string): void {
    if (this.#closed) return;
    this.#watched.set(key, { nodeId, streamId, state: INITIAL_WATCH });
    this.#arm();
  }

  unwatch(key: string): void {
    this.#watched.delete(key);
    if (this.#watched.size === 0) this.#disarm();
  }

  close(): void {
    this.#closed = true;
    this.#watched.clear();
    this.#disarm();
  }

  /** One round now (tests; the timer calls it). Resolves when every probe of the round has been judged. */
  async check(): Promise<void> {
    const byStream = new Map<string, { nodeId: string; streamId: string; keys: string[] }>();
    for (const [key, w] of this.#watched) {
      const id = `${w.nodeId}\u0000${w.streamId}`;
      const group = byStream.get(id) ?? { nodeId: w.nodeId, streamId: w.streamId, keys: [] };
      group.keys.push(key);
      byStream.set(id, group);
    }
    await Promise.all(
      [...byStream.values()].map(async (g) => {
        const seen = await this.#o.probe(g.nodeId, g.streamId).catch((): StreamObservation => ({ kind: 'unreachable' }));
        for (const key of g.keys) {
          const w = this.#watched.get(key);
          if (w === undefined) continue; // unwatched while probing
          const { state, gone } = judgeStream(w.state, seen);
          w.state = state;
          if (gone === null) continue;
          this.unwatch(key);
          this.#o.onGone(key, gone);
        }
      }),
    );
  }

  #arm(): void {
    if (this.#timer !== undefined || this.#running || this.#closed || this.#watched.size === 0) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#running = true;
      void this.check()
        .catch(() => undefined) // probe failures are observations; onGone does not throw
        .finally(() => {
          this.#running = false;
          this.#arm();
        });
    }, this.#o.intervalMs ?? STREAM_CHECK_MS);
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
