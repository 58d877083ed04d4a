// Gives the heap back once a registration storm is over (storm-release.ts decides when): counts the
// REGISTERs of each second from the device events and, when the policy says so, asks V8 for full
// collections until V8's committed heap stops shrinking (at most MAX_ROUNDS). The first frees the storm's
// garbage but leaves its pages sparse (the live objects are spread over all of them); each next one
// evacuates a bounded share of the sparse pages, which are then unmapped instead of staying resident.
// Measured at 100,000 devices (docs/benchmarks.md § memory-per-device): two collections took the old
// generation from 379 to 183 MB committed with 60 MB live; up to five ≥ 5 % rounds, 530 to 243 MB once
// (an ordinary full collection evacuates only a few MB of live objects). Hence the second round
// compacts fully (V8's --compact-on-every-full-gc for that one collection) when the live heap is small
// enough to copy in a short pause, and further rounds run while they still give ≥ 2 % back.
import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import { DEFAULT_STORM_RELEASE, StormRelease, type StormReleasePolicy } from './storm-release.ts';

/**
 * One full collection, done when it has run. `compact`: evacuate every page with live objects, not only
 * the few MB of V8's ordinary compaction quota (a pause of about the time to copy the live heap).
 */
export type CollectGarbage = (o?: { readonly compact?: boolean }) => Promise<void>;

/** Window of one count. */
export const WINDOW_MS = 1000;
/**
 * Collections per release at most (~0.1-0.3 s each at 100,000 devices). A full collection that is not
 * V8's own memory-reducing one evacuates only a few MB of live objects (its compaction quota), so a heap
 * of 60 MB live spread over 500 MB of pages takes several rounds to give its pages back.
 */
export const MAX_ROUNDS = 10;
/** Another round only while the last one shrank V8's committed heap by at least this fraction. */
export const MIN_SHRINK = 0.02;
/**
 * No new round once the release has taken this long: each collection is one pause of the event loop
 * (marking the live heap: ~0.1 s at 100,000 devices, ~1 s expected at 1,000,000), and keepalives wait
 * in the socket's receive buffer meanwhile.
 */
export const MAX_RELEASE_MS = 3000;
/**
 * The second round compacts fully when the first left at most this much in objects (100,000 devices:
 * 60-75 MB); above it (1,000,000 devices: ~0.5-0.8 GB live, seconds to copy) only ordinary rounds run.
 */
export const COMPACT_MAX_USED_BYTES = 256 * 2 ** 20;

/**
 * V8's `gc` function, for heap-release. Side effect (called from main.ts only): the `--expose-gc` flag
 * is turned on just long enough for a fresh context to get `gc`, then off again, so no other context
 * (the main one included) gains it. `execution: 'async'` runs the collection from a V8 task.
 */
export function exposeCollector(): CollectGarbage | null {
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    setFlagsFromString('--no-expose-gc');
    if (typeof gc !== 'function') return null;
    const run = gc as (o: { type: 'major'; execution: 'async' }) => Promise<void>;
    return async (o) => {
      // V8's own flag, read when the collection selects its pages; off again right after (a collection V8
      // starts by itself meanwhile compacts fully too, which costs time only)
      if (o?.compact === true) setFlagsFromString('--compact-on-every-full-gc');
      try {
        await run({ type: 'major', execution: 'async' });
      } finally {
        if (o?.compact === true) setFlagsFromString('--no-compact-on-every-full-gc');
      }
    };
  } catch {
    return null;
  }
}

export interface HeapReleaseOptions {
  readonly events: DeviceEvents;
  readonly clock: Clock;
  readonly log: Logger;
  readonly collect: CollectGarbage;
  readonly policy?: StormReleasePolicy;
  /** V8's committed heap, bytes; default v8.getHeapStatistics().total_heap_size. */
  readonly heapCommitted?: () => number;
  /** V8's heap in objects, bytes; default v8.getHeapStatistics().used_heap_size. */
  readonly heapUsed?: () => number;
}

export interface HeapRelease {
  /** Releases started so far (each one is up to MAX_ROUNDS collections). */
  readonly releases: number;
  /** Stops counting and the timer; waits for a release in progress. Idempotent. */
  close(): Promise<void>;
}

export function startHeapRelease(o: HeapReleaseOptions): HeapRelease {
  const policy = new StormRelease(o.policy ?? DEFAULT_STORM_RELEASE);
  const heapCommitted = o.heapCommitted ?? ((): number => getHeapStatistics().total_heap_size);
  const heapUsed = o.heapUsed ?? ((): number => getHeapStatistics().used_heap_size);
  let count = 0;
  let releases = 0;
  let timer: TimerHandle | undefined;
  let running: Promise<void> | null = null;
  let closed = false;
  const off = o.events.on('uplink', (e) => {
    if (e.kind === 'register') count++;
  });

  const release = async (): Promise<void> => {
    const rssBefore = process.memoryUsage.rss();
    const started = performance.now();
    let committed = heapCommitted();
    let rounds = 0;
    const since = o.clock.now();
    while (rounds < MAX_ROUNDS && !closed && o.clock.now() - since < MAX_RELEASE_MS) {
      // the first round frees the garbage; the second evacuates every page when that is cheap enough
      await o.collect({ compact: rounds === 1 && heapUsed() <= COMPACT_MAX_USED_BYTES });
      rounds++;
      const now = heapCommitted();
      // the first round frees; from the second on, go on only while compaction still gives pages back
      const shrank = committed - now >= committed * MIN_SHRINK;
      committed = now;
      if (rounds >= 2 && !shrank) break;
    }
    o.log.info(
      { rounds, rssBeforeMb: Math.round(rssBefore / 2 ** 20), rssAfterMb: Math.round(process.memoryUsage.rss() / 2 ** 20), ms: Math.round(performance.now() - started) },
      'registration storm over: heap given back',
    );
  };

  const tick = (): void => {
    timer = undefined;
    if (closed) return;
    const n = count;
    count = 0;
    if (running === null && policy.observe(o.clock.now(), n)) {
      releases++;
      running = release()
        .catch((err: unknown) => o.log.warn({ err }, 'heap release failed'))
        .finally(() => {
          running = null;
        });
    }
    timer = o.clock.setTimeout(tick, WINDOW_MS);
  };
  timer = o.clock.setTimeout(tick, WINDOW_MS);

  return {
    get releases() {
      return releases;
    },
    async close() {
      closed = true;
      off();
      if (timer !== undefined) o.clock.clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
