// MANSCDP bodies above a few KiB are decoded on a worker thread (SPEC SEC-3, issue #10 item 7: the event
// loop never blocks for more than 50 ms on device input). A 62 KiB catalog of 700 items costs 12–30 ms of
// CPU to decode (charset, XML, typed decode); on the main thread that is time in which no keepalive is
// answered and no timer fires, and a device allowed 200 messages a second could send several seconds of
// parsing a second. Here the decode runs beside the event loop, one body at a time per thread, with a
// bounded queue in front: when it is full the message is refused with 503 + Retry-After (the device sends
// it again later) instead of waiting in an unbounded line. Small bodies (keepalives, most answers) stay on
// the main thread, where a decode costs less than the round trip to a worker.
import { Worker } from 'node:worker_threads';
import type { ManscdpCommand, ManscdpMessage } from '@vms/gb28181';
import type { Logger } from 'pino';

/** Sent to the worker: the body's bytes (transferred, not copied). */
export interface ParseRequest {
  readonly id: number;
  readonly body: ArrayBuffer;
}

export type ParseReply =
  | { readonly id: number; readonly ok: true; readonly msg: ManscdpMessage; readonly cmd: ManscdpCommand }
  | { readonly id: number; readonly ok: false; readonly refused: boolean; readonly message: string };

export interface ManscdpParseLimits {
  /** Worker threads decoding large bodies (each decodes one body at a time). */
  readonly threads: number;
  /** Bodies waiting for a thread; one more is refused (`ParseQueueFullError`). */
  readonly maxQueued: number;
  /** A decode running longer is abandoned: its worker is replaced, the message answered as a failure. */
  readonly timeoutMs: number;
}

/** A worker that has not loaded its module by then is replaced and the bodies waiting for it fail. */
const STARTUP_TIMEOUT_MS = 60_000;

export const DEFAULT_PARSE_LIMITS: ManscdpParseLimits = { threads: 1, maxQueued: 64, timeoutMs: 5000 };

/** The queue in front of the threads is full: the message was not decoded (answer 503 + Retry-After). */
export class ParseQueueFullError extends Error {
  constructor() {
    super('large-body decode queue is full');
  }
}

/** The decoder refused the body (not well-formed, not MANSCDP, a field of the wrong shape...). */
export class ParseRefusedError extends Error {}

export interface ManscdpParsePool {
  /** Decodes `body` off the main thread. Rejects with ParseQueueFullError, ParseRefusedError or Error. */
  parse(body: Uint8Array): Promise<{ msg: ManscdpMessage; cmd: ManscdpCommand }>;
  /** Bodies waiting plus bodies being decoded. */
  readonly pending: number;
  close(): Promise<void>;
}

interface Job {
  readonly id: number;
  readonly body: ArrayBuffer;
  resolve(v: { msg: ManscdpMessage; cmd: ManscdpCommand }): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  /** The worker has loaded its module: jobs are given only to ready threads, so start-up is not decode time. */
  ready: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

const WORKER_URL = new URL('./manscdp-parse.worker.ts', import.meta.url).href;
// The service runs its TypeScript through tsx (`node --import tsx`), but a worker thread does not inherit
// the loader hooks that flag installs: the worker registers tsx itself before loading its module.
const TSX_API_URL = import.meta.resolve('tsx/esm/api');
const WORKER_BOOTSTRAP = `import(${JSON.stringify(TSX_API_URL)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL)}); });`;

export function createManscdpParsePool(limits: ManscdpParseLimits, log: Logger): ManscdpParsePool {
  const queue: Job[] = [];
  const threads: Thread[] = [];
  let nextId = 1;
  let closed = false;

  const settle = (t: Thread, reply: ParseReply | 'ready'): void => {
    if (reply === 'ready') {
      t.ready = true;
      clearTimeout(t.timer);
      pump();
      return;
    }
    const job = t.job;
    if (job === undefined || job.id !== reply.id) return; // a reply for a job abandoned after its timeout
    clearTimeout(t.timer);
    t.job = undefined;
    if (reply.ok) job.resolve({ msg: reply.msg, cmd: reply.cmd });
    else job.reject(reply.refused ? new ParseRefusedError(reply.message) : new Error(reply.message));
    pump();
  };

  /** Replaces a thread whose worker died or hung; its job, if any, fails. */
  const replace = (t: Thread, why: Error): void => {
    const job = t.job;
    t.job = undefined;
    clearTimeout(t.timer);
    t.worker.removeAllListeners();
    void t.worker.terminate();
    job?.reject(why);
    if (closed) return;
    t.ready = false;
    t.worker = spawn(t);
    pump();
  };

  const spawn = (t: Thread): Worker => {
    const w = new Worker(WORKER_BOOTSTRAP, { eval: true });
    w.unref(); // an idle decoder never keeps the process alive
    w.on('message', (reply: ParseReply | 'ready') => settle(t, reply));
    t.timer = setTimeout(() => {
      log.error({ startupTimeoutMs: STARTUP_TIMEOUT_MS }, 'MANSCDP decode worker did not start; replaced');
      for (const job of queue.splice(0)) job.reject(new Error('MANSCDP decode worker did not start'));
      replace(t, new Error('MANSCDP decode worker did not start'));
    }, STARTUP_TIMEOUT_MS);
    t.timer.unref();
    w.on('error', (err) => {
      log.error({ err }, 'MANSCDP decode worker failed; replaced');
      replace(t, err);
    });
    w.on('exit', (code) => {
      if (!closed && t.worker === w) replace(t, new Error(`MANSCDP decode worker exited with code ${code}`));
    });
    return w;
  };

  const pump = (): void => {
    for (const t of threads) {
      if (t.job !== undefined || !t.ready) continue;
      const job = queue.shift();
      if (job === undefined) return;
      t.job = job;
      t.timer = setTimeout(() => {
        log.warn({ timeoutMs: limits.timeoutMs }, 'MANSCDP decode took too long; worker replaced');
        replace(t, new Error(`MANSCDP decode exceeded ${limits.timeoutMs} ms`));
      }, limits.timeoutMs);
      t.timer.unref();
      const req: ParseRequest = { id: job.id, body: job.body };
      t.worker.postMessage(req, [job.body]);
    }
  };

  return {
    parse(body) {
      if (closed) return Promise.reject(new Error('MANSCDP decode pool is closed'));
      if (queue.length >= limits.maxQueued) return Promise.reject(new ParseQueueFullError());
      // threads start with the first large body: a process that never receives one never pays for them
      while (threads.length < limits.threads) {
        const t: Thread = { worker: undefined as unknown as Worker, ready: false, job: undefined, timer: undefined };
        t.worker = spawn(t);
        threads.push(t);
      }
      // a copy the worker owns: the SIP message's bytes may be a view into a larger socket buffer
      const copy = new Uint8Array(body.length);
      copy.set(body);
      return new Promise((resolve, reject) => {
        queue.push({ id: nextId++, body: copy.buffer, resolve, reject });
        pump();
      });
    },
    get pending() {
      return queue.length + threads.filter((t) => t.job !== undefined).length;
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('MANSCDP decode pool is closed'));
      await Promise.all(
        threads.map(async (t) => {
          clearTimeout(t.timer);
          t.job?.reject(new Error('MANSCDP decode pool is closed'));
          t.job = undefined;
          t.worker.removeAllListeners();
          await t.worker.terminate();
        }),
      );
      threads.length = 0;
    },
  };
}
