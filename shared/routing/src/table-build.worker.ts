/**
 * Build thread of a routing table (table-worker.ts starts it): reads one stored version through its own
 * store connection, checks and packs the rules and builds the prefix indexes (the same TableBuilder as the
 * main-thread build), and hands the typed arrays back in the transfer list. Nothing of this runs on the
 * event loop that serves requests (SPEC SEC-3's 50 ms; docs/routing.md).
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { TableBuilder } from './compile.ts';
import type { VersionReader } from './routing-store.port.ts';
import { packRuleRows, parsePackedRules } from './packed-rules.ts';
import { ruleFromArray } from './routing-rows.ts';
import { builtBuffers, type BuildReply, type BuildRequest, type PushMessage, type WarmRequest } from './table-build.protocol.ts';
import { WARMUP_PAGE_ROWS, warmupRows, warmupTopology } from './warmup-table.ts';
import type { TableTopology } from './compile.ts';
import type { Rule } from './types.ts';

/** What a source module's factory returns. */
export interface VersionSource {
  readVersion(version: number): Promise<VersionReader | undefined>;
  close?(): Promise<void>;
}

/** When this module was loaded (epoch ms; the thread's start-up ends here): reported with the first build only. */
let loadedMs = performance.timeOrigin + performance.now();

/** This thread's CPU so far, ms (Linux: /proc/thread-self/schedstat); NaN elsewhere. */
function threadCpuMs(): number {
  try {
    const text = readFileSync('/proc/thread-self/schedstat', 'latin1');
    return Number(text.slice(0, text.indexOf(' '))) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** Checks, packs and indexes pages of a version; the reply and its transfer list. */
async function buildFrom(top: TableTopology, ruleCount: number, pages: AsyncIterable<readonly Rule[]>, startMs: number, t0: number, cpu0: number): Promise<{ reply: BuildReply; transfer: ArrayBuffer[] }> {
  const builder = new TableBuilder(top, ruleCount);
  let packMs = 0;
  let packCpuMs = 0;
  for await (const page of pages) {
    const p0 = performance.now();
    const c0 = threadCpuMs();
    builder.addRules(page);
    packMs += performance.now() - p0;
    packCpuMs += threadCpuMs() - c0;
  }
  const t1 = performance.now();
  const steps = builder.buildSteps();
  let s = steps.next();
  while (s.done !== true) s = steps.next();
  const r = s.value;
  if (!r.ok) return { reply: { kind: 'refused', issues: r.issues, more: r.more }, transfer: [] };
  return { reply: { kind: 'built', top, built: r.built, startMs, readMs: t1 - t0, packMs, packCpuMs, buildMs: performance.now() - t1, cpuMs: threadCpuMs() - cpu0, postedAt: performance.timeOrigin + performance.now() }, transfer: builtBuffers(r.built) };
}

/** Pages the main thread posts (PushMessage), acked as each is taken. */
class PushedPages {
  readonly #queue: (readonly Rule[])[] = [];
  #done = false;
  #wake: (() => void) | undefined;
  constructor(private readonly ack: () => void) {}
  push(rules: readonly Rule[]): void {
    this.#queue.push(rules);
    this.#wake?.();
  }
  end(): void {
    this.#done = true;
    this.#wake?.();
  }
  async *pages(): AsyncGenerator<readonly Rule[]> {
    for (;;) {
      const next = this.#queue.shift();
      if (next !== undefined) {
        yield next;
        this.ack(); // packed: the sender may post one more
        continue;
      }
      if (this.#done) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}

async function build(req: BuildRequest): Promise<{ reply: BuildReply; transfer: ArrayBuffer[] }> {
  const startMs = loadedMs;
  loadedMs = 0;
  const mod = (await import(req.source.module)) as Record<string, unknown>;
  const open = mod[req.source.export];
  if (typeof open !== 'function') return { reply: { kind: 'error', message: `${req.source.export} is not a function of ${req.source.module}` }, transfer: [] };
  const source = (await (open as (o: unknown) => Promise<VersionSource> | VersionSource)(req.source.options)) as VersionSource;
  try {
    const t0 = performance.now();
    const cpu0 = threadCpuMs();
    const reader = await source.readVersion(req.version);
    if (reader === undefined) return { reply: { kind: 'missing' }, transfer: [] };
    const top = { version: req.version, timeZone: req.timeZone, destinations: reader.destinations, sets: reader.sets };
    return await buildFrom(top, reader.ruleCount, reader.pages(), startMs, t0, cpu0);
  } finally {
    await source.close?.();
  }
}

/**
 * Synthetic rows in pages, made into rules as the MySQL store makes them — three pages in four packed by the
 * server's format and split (parsePackedRules, the usual path), one row by row (ruleFromArray, its
 * fallback) — an I/O turn between pages.
 */
async function* warmupPages(count: number): AsyncGenerator<readonly Rule[]> {
  const rows = warmupRows(count);
  for (let n = 0; ; n++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const page: unknown[][] = [];
    for (let r = rows.next(); r.done !== true; r = rows.next()) {
      page.push(r.value);
      if (page.length === WARMUP_PAGE_ROWS) break;
    }
    if (page.length > 0) yield n % 4 === 3 ? page.map(ruleFromArray) : parsePackedRules(packRuleRows(page), page.length)!;
    if (page.length < WARMUP_PAGE_ROWS) return;
  }
}

/**
 * The warm-up (WarmRequest): the source's module imported (its driver loaded once, not in the first
 * build), then the synthetic version built and dropped. The thread's start is reported here, not with the
 * first build.
 */
async function warm(req: WarmRequest): Promise<BuildReply> {
  const startMs = loadedMs;
  loadedMs = 0;
  const t0 = performance.now();
  const cpu0 = threadCpuMs();
  if (req.source !== undefined) await import(req.source.module);
  const { reply } = await buildFrom(warmupTopology('UTC'), req.rules, warmupPages(req.rules), 0, performance.now(), threadCpuMs());
  if (reply.kind !== 'built') return { kind: 'warm-failed', message: `the warm-up version did not build (${reply.kind})` };
  return { kind: 'warmed', startMs, ms: performance.now() - t0, cpuMs: threadCpuMs() - cpu0, rules: req.rules };
}

const port = parentPort;
if (port !== null) {
  let pushed: PushedPages | undefined;
  const answer = (p: Promise<{ reply: BuildReply; transfer: ArrayBuffer[] }>): void => {
    p.then(
      ({ reply, transfer }) => port.postMessage(reply, transfer),
      (err: unknown) => port.postMessage({ kind: 'error', message: err instanceof Error ? err.message : String(err) } satisfies BuildReply),
    );
  };
  // a build asked for during the warm-up starts after it (one build at a time on this thread; its pages,
  // if posted, queue meanwhile within the sender's window)
  let warming: Promise<unknown> = Promise.resolve();
  port.on('message', (m: BuildRequest | PushMessage | WarmRequest) => {
    if (!('kind' in m)) return answer(warming.then(() => build(m)));
    switch (m.kind) {
      case 'warm':
        warming = warm(m).then(
          (reply) => port.postMessage(reply),
          (err: unknown) => port.postMessage({ kind: 'warm-failed', message: err instanceof Error ? err.message : String(err) } satisfies BuildReply),
        );
        return;
      case 'begin': {
        const pages = new PushedPages(() => port.postMessage({ kind: 'ack' } satisfies BuildReply));
        pushed = pages;
        return answer(
          warming.then(() => {
            const startMs = loadedMs;
            loadedMs = 0;
            return buildFrom(m.top, m.ruleCount, pages.pages(), startMs, performance.now(), threadCpuMs());
          }),
        );
      }
      case 'page':
        return pushed?.push(m.rules);
      case 'end':
        pushed?.end();
        pushed = undefined;
        return;
    }
  });
}
