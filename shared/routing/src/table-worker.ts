/**
 * Builds a stored version's table on a worker thread (SPEC §10 hot reload, SEC-3's 50 ms): the thread
 * opens its own store connection from a VersionSourceSpec, reads the version in pages, checks, packs and
 * indexes it, and transfers the typed arrays back; the main thread only compiles the small topology and
 * wraps the arrays (milliseconds for a million rules; figures in docs/routing.md). Bounded: one build at a
 * time (a newer request terminates the build in progress: only the latest version matters), a deadline
 * per build, one thread at most, kept idle for the next build for a while and then terminated.
 */
import { Worker } from 'node:worker_threads';
import { assembleTable, type CompileResult } from './compile.ts';
import { PUSH_WINDOW, type BuildReply, type BuildRequest, type PushMessage, type VersionSourceSpec } from './table-build.protocol.ts';
import type { RoutingStore } from './routing-store.port.ts';

export type { VersionSourceSpec } from './table-build.protocol.ts';

/** A build may take this long (thread start, read, build) before its thread is terminated. */
export const DEFAULT_BUILD_DEADLINE_MS = 60_000;
/**
 * A build thread is kept this long after a build: starting one costs loading tsx and the engine's modules
 * (0.3 s on an idle machine, 2 s at load 15), so versions published in a row reuse it, and an instance that
 * publishes rarely holds no thread.
 */
export const DEFAULT_BUILD_THREAD_IDLE_MS = 5 * 60_000;
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
  /** An idle build thread is kept this long for the next build, then terminated. Default DEFAULT_BUILD_THREAD_IDLE_MS. */
  readonly idleMs?: number;
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

export interface WorkerTableBuilder {
  readonly last: BuildTimes | undefined;
  /** undefined when the store has no such version; rejects when the build fails or is given up. */
  build(version: number, timeZone: string): Promise<CompileResult | undefined>;
  /** Builds in progress (0 or 1). */
  readonly running: number;
  /** Build threads alive (0 or 1). */
  readonly threads: number;
  /** Starts the build thread now (if none is there), so that the next build does not wait for it. */
  warm(): void;
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
  idle: NodeJS.Timeout | undefined;
}

interface Running {
  readonly thread: Thread;
  settle(err: Error | undefined, r?: CompileResult | undefined): void;
}

export function createWorkerTableBuilder(o: WorkerBuildOptions): WorkerTableBuilder {
  if ((o.source === undefined) === (o.reader === undefined)) throw new TypeError('createWorkerTableBuilder: give either source or reader');
  const deadlineMs = o.deadlineMs ?? DEFAULT_BUILD_DEADLINE_MS;
  const idleMs = o.idleMs ?? DEFAULT_BUILD_THREAD_IDLE_MS;
  let thread: Thread | undefined;
  let current: Running | undefined;
  let closed = false;
  let last: BuildTimes | undefined;

  const kill = (t: Thread): void => {
    if (t.idle !== undefined) clearTimeout(t.idle);
    if (thread === t) thread = undefined;
    void t.worker.terminate();
  };
  const spawn = (): Thread => {
    const t: Thread = { worker: new Worker(WORKER_BOOTSTRAP, { eval: true, resourceLimits: { maxOldGenerationSizeMb: BUILD_HEAP_MB, maxYoungGenerationSizeMb: BUILD_YOUNG_MB } }), spawnedAt: performance.timeOrigin + performance.now(), idle: undefined };
    // a thread that dies between builds is simply started again at the next one
    t.worker.on('error', () => kill(t));
    t.worker.on('exit', () => kill(t));
    return t;
  };
  /** The idle thread, or a new one; not holding the process open while idle. */
  const take = (): Thread => {
    const t = (thread ??= spawn());
    if (t.idle !== undefined) clearTimeout(t.idle);
    t.idle = undefined;
    t.worker.ref();
    return t;
  };
  const park = (t: Thread): void => {
    if (closed || thread !== t) return kill(t);
    t.worker.unref();
    t.idle = setTimeout(() => kill(t), idleMs);
    t.idle.unref();
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
      const timer = setTimeout(() => run.settle(new TableBuildAbortedError(`routing table build of version ${version} exceeded ${deadlineMs} ms`)), deadlineMs);
      const onMessage = (reply: BuildReply): void => {
        switch (reply.kind) {
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
          clearTimeout(timer);
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          if (current === run) current = undefined;
          // a thread that answered is kept for the next build; one given up (superseded, deadline) is
          // terminated: it may still be reading or building
          if (answered) park(t);
          else kill(t);
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
    get last() {
      return last;
    },
    get running() {
      return current === undefined ? 0 : 1;
    },
    get threads() {
      return thread === undefined ? 0 : 1;
    },
    warm() {
      if (!closed && current === undefined) park(take());
    },
    async close() {
      closed = true;
      current?.settle(new TableBuildAbortedError('routing table builder is closed'));
      const t = thread;
      if (t !== undefined) {
        kill(t);
        await t.worker.terminate();
      }
    },
  };
}
