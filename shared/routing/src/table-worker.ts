/**
 * Builds a stored version's table on a worker thread (SPEC §10 hot reload, SEC-3's 50 ms): the thread
 * opens its own store connection from a VersionSourceSpec, reads the version in pages, checks, packs and
 * indexes it, and transfers the typed arrays back; the main thread only compiles the small topology and
 * wraps the arrays (milliseconds for a million rules; figures in docs/routing.md). Bounded: one build at a
 * time (a newer request terminates the build in progress: only the latest version matters), a deadline
 * per build, one thread at most. Between builds the thread is either kept warm (`keepWarm`: started and
 * warmed up by `warm()`, kept until `close()`, replaced when it dies — the first build after start-up then
 * runs as fast as later ones) or kept idle for `idleMs` and then terminated (started again by the next build).
 */
import { Worker } from 'node:worker_threads';
import { systemClock, type Clock, type TimerHandle } from '@vms/clock';
import { assembleTable, type CompileResult } from './compile.ts';
import { PUSH_WINDOW, type BuildReply, type BuildRequest, type PushMessage, type VersionSourceSpec, type WarmRequest } from './table-build.protocol.ts';
import { WARMUP_RULES } from './warmup-table.ts';
import type { RoutingStore } from './routing-store.port.ts';

export type { VersionSourceSpec } from './table-build.protocol.ts';

/** A build may take this long (thread start, read, build) before its thread is terminated. */
export const DEFAULT_BUILD_DEADLINE_MS = 60_000;
/**
 * Without `keepWarm`, a build thread is kept this long after a build: starting one costs loading tsx and the
 * engine's modules (0.3 s on an idle machine, 2 s at load 15), so versions published in a row reuse it, and
 * an instance that publishes rarely holds no thread.
 */
export const DEFAULT_BUILD_THREAD_IDLE_MS = 5 * 60_000;
/**
 * A table this large keeps its build thread warm for the process's lifetime: its next reload must fit in 3 s
 * (issue 13: 1,000,000 rules in 2.3–2.5 s on a kept thread, ~1 s more on a new one). A smaller table builds
 * in well under a second either way and is not worth the idle thread's 30–50 MB (docs/routing.md).
 */
export const KEEP_WARM_RULES = 100_000;

/** Whether the build thread of a table of `ruleCount` rules is kept warm. */
export function keepBuildThreadWarm(ruleCount: number): boolean {
  return ruleCount >= KEEP_WARM_RULES;
}
/**
 * Longest `idleMs`: a timer's delay is a signed 32-bit count of ms in Node; a longer one (Infinity included)
 * is clamped to 1 ms, which would end the thread at once instead of never (`keepWarm` is "never").
 */
export const MAX_BUILD_THREAD_IDLE_MS = 2 ** 31 - 1;
/**
 * A kept-warm thread that died is replaced after this long, doubled at each death in a row (a thread that
 * cannot start — a module that fails to load — is retried ever less often), up to REPLACE_MAX_MS; a
 * warm-up or a build that completes resets it.
 */
export const REPLACE_BASE_MS = 1000;
export const REPLACE_MAX_MS = 60_000;

/** Wait before replacing a kept-warm thread after its `deathsInRow`-th death in a row (1, 2, …). */
export function replacementDelayMs(deathsInRow: number): number {
  return Math.min(REPLACE_BASE_MS * 2 ** Math.max(0, Math.min(deathsInRow - 1, 30)), REPLACE_MAX_MS);
}
/**
 * JS heap of the build thread: a page of rows at a time plus the windows and releases (the columns and
 * indexes are ArrayBuffers, outside the heap). A runaway build dies here instead of taking the process.
 */
const BUILD_HEAP_MB = 256;
/**
 * Young generation of the build thread: a page of 20,000 rows (and the driver's packets) is live until it
 * is packed, more than V8's default semi-spaces hold, so each page was copied by scavenges and promoted.
 * 96 MB (semi-spaces of 32 MB) cut the thread's CPU for a MariaDB build by a fifth (docs/routing.md).
 */
const BUILD_YOUNG_MB = 96;

export interface WorkerBuildOptions {
  /**
   * How the thread opens the store itself (MySQL: its own connection; nothing of the rows touches this
   * thread). Or `reader`: a store this thread reads, page by page, posting each page to the build thread
   * (the embedded SQLite store, opened EXCLUSIVE, cannot be opened twice; the memory store): this thread
   * then spends the read and a structured clone per page (a millisecond or two for 2,000 rules), the
   * thread the checking, packing and indexing.
   */
  readonly source?: VersionSourceSpec | undefined;
  readonly reader?: Pick<RoutingStore, 'readVersion'> | undefined;
  /** Default DEFAULT_BUILD_DEADLINE_MS. */
  readonly deadlineMs?: number;
  /**
   * One thread kept for the builder's lifetime: `warm()` starts it and builds a synthetic version on it
   * (WARMUP_RULES rules, warmup-table.ts) so that its code is optimized before the first real build; it is
   * never idled out (idleMs does not apply), and one that dies is replaced (after REPLACE_BASE_MS, doubling
   * for deaths in a row) and warmed again. Its cost is the idle thread's memory (docs/routing.md). Default false.
   */
  readonly keepWarm?: boolean;
  /**
   * Without keepWarm: an idle build thread is kept this long for the next build, then terminated;
   * 0..MAX_BUILD_THREAD_IDLE_MS (a RangeError otherwise). Default DEFAULT_BUILD_THREAD_IDLE_MS.
   */
  readonly idleMs?: number;
  /** Rules of the warm-up version. Default WARMUP_RULES. */
  readonly warmupRules?: number;
  /** The deadline, idle and replacement timers. Default systemClock. */
  readonly clock?: Clock;
  /** A thread that died, its replacement, a warm-up that failed. */
  readonly log?: BuildThreadLog;
}

export interface BuildThreadLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** A build was given up: a newer version was asked for, the builder was closed, or the deadline passed. */
export class TableBuildAbortedError extends Error {}

/** Times of the last build that produced a table, ms. */
export interface BuildTimes {
  /** From the thread's start to the build's start (the thread's module loading, when it was new). */
  readonly threadStartMs: number;
  /** On the build thread: reading and packing the pages (wall). */
  readonly readMs: number;
  /**
   * Of readMs, packing (checking and packing the rules, and putting them into the prefix indexes as each
   * page comes), wall and CPU; the rest is waiting for and parsing rows.
   */
  readonly packMs: number;
  readonly packCpuMs: number;
  /** From the thread's post of the built arrays to their arrival here (moved, not copied). */
  readonly transferMs: number;
  /** On the build thread, after the last page: finishing the indexes (freezing them) and the columns. */
  readonly buildMs: number;
  /** CPU of the build thread for reading and building (NaN where the platform does not tell). */
  readonly threadCpuMs: number;
  /** On the main thread: the topology compiled and the arrays wrapped (what the swap costs the loop). */
  readonly wrapMs: number;
}

/** Times of a thread's warm-up, ms. */
export interface WarmTimes {
  /** From the spawn to the thread's module loaded (tsx and the engine's modules). */
  readonly threadStartMs: number;
  /** The warm-up on the thread: the source's module imported and the synthetic version built (wall, CPU). */
  readonly warmupMs: number;
  readonly warmupCpuMs: number;
  readonly rules: number;
}

export interface WorkerTableBuilder {
  readonly last: BuildTimes | undefined;
  /** undefined when the store has no such version; rejects when the build fails or is given up. */
  build(version: number, timeZone: string): Promise<CompileResult | undefined>;
  /** Builds in progress (0 or 1). */
  readonly running: number;
  /** Build threads alive (0 or 1). */
  readonly threads: number;
  /**
   * Starts the build thread now (if none is there) and warms it up (unless it has built already), so that the
   * next build waits for neither. Resolves with the warm-up's times, or undefined when the thread had warmed
   * up or built before, or ended before the warm-up did (closed, superseded, died). Never rejects.
   */
  warm(): Promise<WarmTimes | undefined>;
  /** The last completed warm-up. */
  readonly lastWarm: WarmTimes | undefined;
  /** Threads that died without being ended here (crashes), since the builder was made. */
  readonly deaths: number;
  /** Whether the thread is kept between builds (`keepWarm`). */
  readonly keptWarm: boolean;
  /**
   * Turns `keepWarm` on or off from now on: on, the idle thread's timer is cleared and it is kept (a dead
   * one replaced); off, an idle thread is ended after idleMs from now. Starts no thread by itself.
   */
  setKeepWarm(on: boolean): void;
  close(): Promise<void>;
}

const WORKER_URL = new URL('./table-build.worker.ts', import.meta.url).href;
// Services run their TypeScript through tsx (`node --import tsx`), and a worker thread does not inherit the
// loader hooks that flag installs: the thread registers tsx itself before loading its module (as the
// MANSCDP parse pool does).
const TSX_API_URL = import.meta.resolve('tsx/esm/api');
const WORKER_BOOTSTRAP = `import(${JSON.stringify(TSX_API_URL)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL)}); });`;

interface Thread {
  readonly worker: Worker;
  /** Epoch ms of the spawn. */
  readonly spawnedAt: number;
  idle: TimerHandle | undefined;
  /** Ended here on purpose, or exited: its exit is not counted again. */
  ended: boolean;
  /** Has warmed up or built: its code is warm. */
  warm: boolean;
  /** The warm-up asked of it, until answered or the thread's end. */
  warmup: Promise<WarmTimes | undefined> | undefined;
}

interface Running {
  readonly thread: Thread;
  settle(err: Error | undefined, r?: CompileResult | undefined): void;
}

export function createWorkerTableBuilder(o: WorkerBuildOptions): WorkerTableBuilder {
  if ((o.source === undefined) === (o.reader === undefined)) throw new TypeError('createWorkerTableBuilder: give either source or reader');
  const deadlineMs = o.deadlineMs ?? DEFAULT_BUILD_DEADLINE_MS;
  const idleMs = o.idleMs ?? DEFAULT_BUILD_THREAD_IDLE_MS;
  const warmupRules = o.warmupRules ?? WARMUP_RULES;
  for (const [name, v, max] of [
    ['deadlineMs', deadlineMs, MAX_BUILD_THREAD_IDLE_MS],
    ['idleMs', idleMs, MAX_BUILD_THREAD_IDLE_MS],
    ['warmupRules', warmupRules, 1_000_000],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`createWorkerTableBuilder: ${name} must be an integer 0..${max}, not ${v}`);
  }
  let keepWarm = o.keepWarm === true;
  const clock = o.clock ?? systemClock;
  const log = o.log;
  let thread: Thread | undefined;
  let current: Running | undefined;
  let closed = false;
  let last: BuildTimes | undefined;
  let lastWarm: WarmTimes | undefined;
  let deaths = 0;
  /** Deaths since the last warm-up or build that completed: the replacement's backoff. */
  let deathsInRow = 0;
  let replaceTimer: TimerHandle | undefined;
  /** Every thread not yet exited (close awaits them all). */
  const alive = new Set<Worker>();

  /** Ends a thread on purpose (superseded, past its deadline, idle, closed). */
  const end = (t: Thread): void => {
    if (t.idle !== undefined) clock.clearTimeout(t.idle);
    t.idle = undefined;
    if (thread === t) thread = undefined;
    if (t.ended) return;
    t.ended = true;
    void t.worker.terminate();
  };
  const replaceLater = (delayMs: number): void => {
    if (!keepWarm || closed || replaceTimer !== undefined) return;
    replaceTimer = clock.setTimeout(() => {
      replaceTimer = undefined;
      if (closed || thread !== undefined) return; // a build took a thread meanwhile
      log?.info({ deaths }, 'routing build thread replaced');
      void warm();
    }, delayMs);
  };
  const spawn = (): Thread => {
    const worker = new Worker(WORKER_BOOTSTRAP, { eval: true, resourceLimits: { maxOldGenerationSizeMb: BUILD_HEAP_MB, maxYoungGenerationSizeMb: BUILD_YOUNG_MB } });
    const t: Thread = { worker, spawnedAt: performance.timeOrigin + performance.now(), idle: undefined, ended: false, warm: false, warmup: undefined };
    alive.add(worker);
    let error: Error | undefined;
    // an uncaught exception on the thread: 'error', then 'exit'
    worker.on('error', (err) => (error = err));
    // registered first: a death is counted before a build or a warm-up waiting on the thread hears of it
    worker.on('exit', (code) => {
      alive.delete(worker);
      if (t.ended) return;
      end(t);
      deaths++;
      deathsInRow++;
      const replaceInMs = keepWarm && !closed ? replacementDelayMs(deathsInRow) : undefined;
      log?.warn({ err: error, code, deaths, replaceInMs }, 'routing build thread died');
      if (replaceInMs !== undefined) replaceLater(replaceInMs);
    });
    return t;
  };
  /** The kept thread, or a new one, held for work (holding the process open while working). */
  const take = (): Thread => {
    if (replaceTimer !== undefined) clock.clearTimeout(replaceTimer);
    replaceTimer = undefined;
    const t = (thread ??= spawn());
    if (t.idle !== undefined) clock.clearTimeout(t.idle);
    t.idle = undefined;
    t.worker.ref();
    return t;
  };
  /** Between builds: not holding the process open; kept (keepWarm) or ended after idleMs. */
  const park = (t: Thread): void => {
    if (closed || thread !== t) return end(t);
    t.worker.unref();
    if (!keepWarm) t.idle = clock.setTimeout(() => end(t), idleMs);
  };

  const warm = (): Promise<WarmTimes | undefined> => {
    if (closed) return Promise.resolve(undefined);
    if (thread?.warmup !== undefined) return thread.warmup;
    // a build warms its thread up as well as this would
    if (current !== undefined || thread?.warm === true) return Promise.resolve(undefined);
    const t = take();
    const warmup = new Promise<WarmTimes | undefined>((resolve) => {
      const done = (times: WarmTimes | undefined): void => {
        t.worker.off('message', onMessage);
        t.worker.off('exit', onExit);
        t.warmup = undefined;
        if (current?.thread !== t) park(t); // a build asked for meanwhile has the thread now
        resolve(times);
      };
      const onMessage = (m: BuildReply): void => {
        if (m.kind === 'warm-failed') {
          log?.warn({ reason: m.message }, 'routing build thread warm-up failed; its first build will run cold');
          return done(undefined);
        }
        if (m.kind !== 'warmed') return;
        t.warm = true;
        deathsInRow = 0;
        lastWarm = { threadStartMs: m.startMs - t.spawnedAt, warmupMs: m.ms, warmupCpuMs: m.cpuMs, rules: m.rules };
        done(lastWarm);
      };
      const onExit = (): void => done(undefined);
      t.worker.on('message', onMessage);
      t.worker.on('exit', onExit);
      t.worker.postMessage({ kind: 'warm', rules: warmupRules, source: o.source } satisfies WarmRequest);
    });
    t.warmup = warmup;
    return warmup;
  };

  const build = (version: number, timeZone: string): Promise<CompileResult | undefined> => {
    if (closed) return Promise.reject(new TableBuildAbortedError('routing table builder is closed'));
    current?.settle(new TableBuildAbortedError(`build superseded by version ${version}`));
    return new Promise((resolve, reject) => {
      const t = take();
      const worker = t.worker;
      let done = false;
      let unacked = 0;
      let acked: (() => void) | undefined;
      const timer = clock.setTimeout(() => run.settle(new TableBuildAbortedError(`routing table build of version ${version} exceeded ${deadlineMs} ms`)), deadlineMs);
      const onMessage = (reply: BuildReply): void => {
        switch (reply.kind) {
          case 'warmed':
          case 'warm-failed':
            return; // the warm-up's answer (warm)
          case 'ack':
            unacked--;
            return acked?.();
          case 'built': {
            const t0 = performance.now();
            const transferMs = performance.timeOrigin + t0 - reply.postedAt;
            const r = assembleTable(reply.top, reply.built);
            last = { threadStartMs: reply.startMs === 0 ? 0 : reply.startMs - t.spawnedAt, readMs: reply.readMs, packMs: reply.packMs, packCpuMs: reply.packCpuMs, transferMs, buildMs: reply.buildMs, threadCpuMs: reply.cpuMs, wrapMs: performance.now() - t0 };
            return run.settle(undefined, r, true);
          }
          case 'refused':
            return run.settle(undefined, { ok: false, issues: reply.issues, more: reply.more }, true);
          case 'missing':
            return run.settle(undefined, undefined, true);
          default:
            return run.settle(new Error(`routing table build failed: ${reply.message}`), undefined, true);
        }
      };
      const onError = (err: Error): void => run.settle(err);
      const onExit = (code: number): void => run.settle(new Error(`routing table build thread exited (code ${code})`));
      const run: Running & { settle(err: Error | undefined, r?: CompileResult | undefined, answered?: boolean): void } = {
        thread: t,
        settle(err, r, answered = false) {
          if (done) return;
          done = true;
          acked?.(); // a pump waiting for room ends
          clock.clearTimeout(timer);
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          if (current === run) current = undefined;
          // a thread that answered is kept for the next build; one given up (superseded, deadline) is
          // terminated: it may still be reading or building (a kept-warm one is replaced)
          if (answered) {
            t.warm = true;
            deathsInRow = 0;
            park(t);
          } else {
            end(t);
            replaceLater(0);
          }
          if (err !== undefined) reject(err);
          else resolve(r);
        },
      };
      current = run;
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      if (o.source !== undefined) {
        worker.postMessage({ source: o.source, version, timeZone } satisfies BuildRequest);
        return;
      }
      const reader = o.reader!;
      const post = (m: PushMessage): void => worker.postMessage(m);
      const pump = async (): Promise<void> => {
        const r = await reader.readVersion(version);
        if (done) return;
        if (r === undefined) return run.settle(undefined, undefined, true);
        post({ kind: 'begin', top: { version, timeZone, destinations: r.destinations, sets: r.sets }, ruleCount: r.ruleCount });
        for await (const rules of r.pages()) {
          while (unacked >= PUSH_WINDOW && !done) await new Promise<void>((resolve) => (acked = resolve));
          acked = undefined;
          if (done) return;
          post({ kind: 'page', rules });
          unacked++;
        }
        if (!done) post({ kind: 'end' });
      };
      pump().catch((err: unknown) => run.settle(err instanceof Error ? err : new Error(String(err))));
    });
  };

  return {
    build,
    warm,
    get last() {
      return last;
    },
    get lastWarm() {
      return lastWarm;
    },
    get deaths() {
      return deaths;
    },
    get keptWarm() {
      return keepWarm;
    },
    setKeepWarm(on) {
      if (on === keepWarm || closed) return;
      keepWarm = on;
      if (!on && replaceTimer !== undefined) clock.clearTimeout(replaceTimer);
      if (!on) replaceTimer = undefined;
      const t = thread;
      if (t === undefined || current?.thread === t || t.warmup !== undefined) return; // parked when its work ends
      if (t.idle !== undefined) clock.clearTimeout(t.idle);
      t.idle = undefined;
      if (!on) t.idle = clock.setTimeout(() => end(t), idleMs);
    },
    get running() {
      return current === undefined ? 0 : 1;
    },
    get threads() {
      return thread === undefined ? 0 : 1;
    },
    async close() {
      closed = true;
      if (replaceTimer !== undefined) clock.clearTimeout(replaceTimer);
      replaceTimer = undefined;
      current?.settle(new TableBuildAbortedError('routing table builder is closed'));
      if (thread !== undefined) end(thread);
      await Promise.all([...alive].map((w) => w.terminate()));
    },
  };
}
