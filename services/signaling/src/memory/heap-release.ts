// Gives the heap back once a registration storm is over (storm-release.ts decides when): counts the
// REGISTERs of each second from the device events and, when the policy says so, asks V8 for two full
// collections. The first frees the storm's garbage; the second compacts the pages it left sparse, so
// they are unmapped instead of staying resident (measured: one collection left the old generation's
// committed size where it was, the second took it to its live size).
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import { DEFAULT_STORM_RELEASE, StormRelease, type StormReleasePolicy } from './storm-release.ts';

/** One full collection, done when it has run. */
export type CollectGarbage = () => Promise<void>;

/** Window of one count. */
export const WINDOW_MS = 1000;

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
    return async () => {
      await (gc as (o: { type: 'major'; execution: 'async' }) => Promise<void>)({ type: 'major', execution: 'async' });
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
}

export interface HeapRelease {
  /** Collections started so far (each release is two). */
  readonly releases: number;
  /** Stops counting and the timer; waits for a release in progress. Idempotent. */
  close(): Promise<void>;
}

export function startHeapRelease(o: HeapReleaseOptions): HeapRelease {
  const policy = new StormRelease(o.policy ?? DEFAULT_STORM_RELEASE);
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
    await o.collect();
    await o.collect();
    o.log.info(
      { rssBeforeMb: Math.round(rssBefore / 2 ** 20), rssAfterMb: Math.round(process.memoryUsage.rss() / 2 ** 20), ms: Math.round(performance.now() - started) },
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
