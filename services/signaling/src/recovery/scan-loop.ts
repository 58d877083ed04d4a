// The periodic scan the recoveries run (device sessions: session-recovery.ts; talk and broadcast:
// audio-recovery.ts; upstream views held by a crashed leader: cascade/upstream-recovery.ts): one scan at a
// time, a request during a scan coalesced into one more after it, the next period armed when a scan ends, a
// newly gone holder scanned at once, the orphans a scan reads (the gone holders' indexes and its own entries
// of another run: createOrphanReader), and the jobs a scan finds worked on with a bounded number at once.
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { DialogSnapshot, IndexedSnapshot, SessionSnapshotStore } from './session-snapshots.port.ts';

export interface RecoveryScanLoop {
  /** The node codes out of the online window at the last node-table read; a new one scans at once. */
  setGoneHolders(codes: readonly string[]): void;
  /** A scan as soon as the running one (if any) ends; coalesced. */
  scanSoon(): void;
  /** One scan that starts after the call, awaited (tests). */
  scanNow(): Promise<void>;
  start(): void;
  /** Stops the timer and waits for the running scan. Idempotent. */
  close(): Promise<void>;
}

/** What a scan reads of the loop. */
export interface ScanLoopView {
  readonly gone: readonly string[];
  readonly closed: boolean;
}

export interface ScanLoopOptions {
  readonly clock: Clock;
  readonly scanPeriodMs: number;
  readonly log: Logger;
  /** Log message of a scan that threw. */
  readonly failureMessage: string;
}

export function createScanLoop(o: ScanLoopOptions, scan: (view: ScanLoopView) => Promise<void>): RecoveryScanLoop {
  const view = { gone: [] as readonly string[], closed: false };
  let timer: TimerHandle | null = null;
  let running: Promise<void> | null = null;
  let again = false;

  const runScan = (): Promise<void> => {
    if (running !== null) {
      again = true;
      return running;
    }
    running = scan(view)
      .catch((err: unknown) => o.log.warn({ err }, o.failureMessage))
      .finally(() => {
        running = null;
        if (again && !view.closed) {
          again = false;
          void runScan();
        }
      });
    return running;
  };

  const tick = (): void => {
    timer = null;
    if (view.closed) return;
    void runScan().finally(() => {
      if (!view.closed && timer === null) timer = o.clock.setTimeout(tick, o.scanPeriodMs);
    });
  };

  const loop: RecoveryScanLoop = {
    setGoneHolders(codes) {
      const fresh = codes.some((c) => !view.gone.includes(c));
      view.gone = [...codes];
      if (fresh) loop.scanSoon();
    },
    scanSoon() {
      if (!view.closed) void runScan();
    },
    async scanNow() {
      // a scan that starts after this call (one already running may have read the indexes before)
      while (running !== null) await running;
      await runScan();
    },
    start() {
      if (timer === null && !view.closed) timer = o.clock.setTimeout(tick, 0);
    },
    async close() {
      view.closed = true;
      if (timer !== null) o.clock.clearTimeout(timer);
      timer = null;
      await running;
    },
  };
  return loop;
}

/**
 * Works the queued jobs with at most `parallel` at once, taking no new job once `stop()` says so; a job
 * that throws is logged with `failureMessage` and left for the next scan.
 */
export async function runJobs(queue: (() => Promise<void>)[], parallel: number, stop: () => boolean, log: Logger, failureMessage: string): Promise<void> {
  const workers = Array.from({ length: Math.min(parallel, queue.length) }, async () => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      if (stop()) return;
      await job().catch((err: unknown) => log.warn({ err }, failureMessage));
    }
  });
  await Promise.all(workers);
}

/** An index entry a scan found orphaned, and since when this instance has seen it so (the give-up clock). */
export interface OrphanEntry<T extends DialogSnapshot> {
  readonly holder: string;
  readonly entry: IndexedSnapshot<T>;
  readonly since: number;
}

/**
 * A scan's reading of the indexes: those of the gone holders and this instance's own, whose entries of another
 * process run (an earlier run, or handed off to it by a moving device) are orphans too; at most `limit` per holder.
 * Remembers when each entry was first seen orphaned (entries gone from the indexes are forgotten).
 */
export function createOrphanReader<T extends DialogSnapshot & { readonly run: string }>(o: {
  readonly store: Pick<SessionSnapshotStore<T>, 'list'>;
  readonly self: string;
  readonly run: string;
  readonly limit: number;
  readonly log: Logger;
}): (loop: ScanLoopView, now: number) => Promise<OrphanEntry<T>[]> {
  let firstSeen = new Map<string, number>();
  return async (loop, now) => {
    const seen = new Map<string, number>();
    const out: OrphanEntry<T>[] = [];
    for (const holder of new Set([...loop.gone.filter((c) => c !== o.self), o.self])) {
      let entries: IndexedSnapshot<T>[];
      try {
        entries = await o.store.list(holder, o.limit);
      } catch (err) {
        o.log.warn({ err, holder }, 'snapshot index not read: next scan');
        continue;
      }
      for (const entry of entries) {
        if (holder === o.self && entry.state === 'ok' && entry.snapshot.run === o.run) continue; // ours, alive
        const key = `${holder}\n${entry.callId}`;
        const since = firstSeen.get(key) ?? now;
        seen.set(key, since);
        out.push({ holder, entry, since });
      }
    }
    firstSeen = seen;
    return out;
  };
}
