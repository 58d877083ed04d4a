/**
 * Builds a stored version's table on a worker thread (SPEC §10 hot reload, SEC-3's 50 ms): the thread
 * opens its own store connection from a VersionSourceSpec, reads the version in pages, checks, packs and
 * indexes it, and transfers the typed arrays back; the main thread only compiles the small topology and
 * wraps the arrays (milliseconds for a million rules; figures in docs/routing.md). Bounded: one build at a
 * time (a newer request terminates the build in progress: only the latest version matters), a deadline
 * per build, and no thread while idle (one thread per build, terminated when it answers).
 */
import { Worker } from 'node:worker_threads';
import { assembleTable, type CompileResult } from './compile.ts';
import type { BuildReply, BuildRequest, VersionSourceSpec } from './table-build.protocol.ts';

export type { VersionSourceSpec } from './table-build.protocol.ts';

/** A build may take this long (thread start, read, build) before its thread is terminated. */
export const DEFAULT_BUILD_DEADLINE_MS = 60_000;
/**
 * JS heap of the build thread: a page of rows at a time plus the windows and releases (the columns and
 * indexes are ArrayBuffers, outside the heap). A runaway build dies here instead of taking the process.
 */
const BUILD_HEAP_MB = 256;

export interface WorkerBuildOptions {
  readonly source: VersionSourceSpec;
  /** Default DEFAULT_BUILD_DEADLINE_MS. */
  readonly deadlineMs?: number;
}

/** A build was given up: a newer version was asked for, the builder was closed, or the deadline passed. */
export class TableBuildAbortedError extends Error {}

export interface WorkerTableBuilder {
  /** undefined when the store has no such version; rejects when the build fails or is given up. */
  build(version: number, timeZone: string): Promise<CompileResult | undefined>;
  /** Builds in progress (0 or 1). */
  readonly running: number;
  close(): Promise<void>;
}

const WORKER_URL = new URL('./table-build.worker.ts', import.meta.url).href;
// Services run their TypeScript through tsx (`node --import tsx`), and a worker thread does not inherit the
// loader hooks that flag installs: the thread registers tsx itself before loading its module (as the
// MANSCDP parse pool does).
const TSX_API_URL = import.meta.resolve('tsx/esm/api');
const WORKER_BOOTSTRAP = `import(${JSON.stringify(TSX_API_URL)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL)}); });`;

interface Running {
  readonly worker: Worker;
  settle(err: Error | undefined, r?: CompileResult | undefined): void;
}

export function createWorkerTableBuilder(o: WorkerBuildOptions): WorkerTableBuilder {
  const deadlineMs = o.deadlineMs ?? DEFAULT_BUILD_DEADLINE_MS;
  let current: Running | undefined;
  let closed = false;

  const build = (version: number, timeZone: string): Promise<CompileResult | undefined> => {
    if (closed) return Promise.reject(new TableBuildAbortedError('routing table builder is closed'));
    current?.settle(new TableBuildAbortedError(`build superseded by version ${version}`));
    return new Promise((resolve, reject) => {
      const worker = new Worker(WORKER_BOOTSTRAP, { eval: true, resourceLimits: { maxOldGenerationSizeMb: BUILD_HEAP_MB } });
      let done = false;
      const timer = setTimeout(() => run.settle(new TableBuildAbortedError(`routing table build of version ${version} exceeded ${deadlineMs} ms`)), deadlineMs);
      const run: Running = {
        worker,
        settle(err, r) {
          if (done) return;
          done = true;
          clearTimeout(timer);
          if (current === run) current = undefined;
          void worker.terminate();
          if (err !== undefined) reject(err);
          else resolve(r);
        },
      };
      current = run;
      worker.on('message', (reply: BuildReply) => {
        switch (reply.kind) {
          case 'built':
            return run.settle(undefined, assembleTable(reply.top, reply.built));
          case 'refused':
            return run.settle(undefined, { ok: false, issues: reply.issues, more: reply.more });
          case 'missing':
            return run.settle(undefined, undefined);
          default:
            return run.settle(new Error(`routing table build failed: ${reply.message}`));
        }
      });
      worker.on('error', (err) => run.settle(err));
      worker.on('exit', (code) => run.settle(new Error(`routing table build thread exited (code ${code})`)));
      worker.postMessage({ source: o.source, version, timeZone } satisfies BuildRequest);
    });
  };

  return {
    build,
    get running() {
      return current === undefined ? 0 : 1;
    },
    async close() {
      closed = true;
      const w = current?.worker;
      current?.settle(new TableBuildAbortedError('routing table builder is closed'));
      await w?.terminate();
    },
  };
}
