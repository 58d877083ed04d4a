/**
 * Messages between the main thread and a table build thread (table-worker.ts, table-build.worker.ts).
 * Structured clone only: no functions; the built arrays' buffers travel in the transfer list (moved, not
 * copied).
 */
import type { BuiltRules, TableTopology, TableIssue } from './compile.ts';
import type { Rule } from './types.ts';

/**
 * How the build thread reaches the store: a module it imports and a function of it that opens a store
 * from `options` (a MySQL URL, a SQLite file path, a test's table …). The store it opens is its own: a
 * connection of the main thread cannot cross threads.
 */
export interface VersionSourceSpec {
  /** Module URL (file: or a package specifier resolvable from the build thread's module). */
  readonly module: string;
  /** Name of the export: `(options) => Promise<VersionSource> | VersionSource`. */
  readonly export: string;
  readonly options?: unknown;
}

export interface BuildRequest {
  readonly source: VersionSourceSpec;
  readonly version: number;
  readonly timeZone: string;
}

/**
 * A build whose pages the main thread reads (a store whose connection cannot be opened twice: the embedded
 * SQLite file is opened EXCLUSIVE; or the memory store) and posts: `begin`, then `page`s, then `end`. The
 * thread answers every page with `ack` once packed; the sender keeps at most PUSH_WINDOW pages unacked, so
 * the queue between the threads is bounded.
 */
export type PushMessage =
  | { readonly kind: 'begin'; readonly top: TableTopology; readonly ruleCount: number }
  | { readonly kind: 'page'; readonly rules: readonly Rule[] }
  | { readonly kind: 'end' };

/**
 * Warms a kept thread up (table-worker.ts `warm`): imports the source's module (the MySQL driver), then
 * builds `rules` synthetic rules (warmup-table.ts) through the same path as a version's pages, and throws
 * the result away. Answered with `warmed`.
 */
export interface WarmRequest {
  readonly kind: 'warm';
  readonly rules: number;
  readonly source?: VersionSourceSpec | undefined;
}

/** Pages posted and not yet packed, at most. */
export const PUSH_WINDOW = 4;

export type BuildReply =
  | { readonly kind: 'ack' }
  | {
      readonly kind: 'built';
      readonly top: TableTopology;
      readonly built: BuiltRules;
      /** When the thread had loaded its module (epoch ms), on its first build; else 0. */
      readonly startMs: number;
      /** Reading and packing the pages (wall, ms); of which packing (checking and packing the rules). */
      readonly readMs: number;
      readonly packMs: number;
      /** Packing's CPU, indexing included (the rest of the thread's CPU is reading and the driver's parsing). */
      readonly packCpuMs: number;
      readonly buildMs: number;
      /** When the reply was posted (epoch ms): the receiver measures the transfer. */
      readonly postedAt: number;
      /** CPU of the build thread for reading and building (NaN where the platform does not tell). */
      readonly cpuMs: number;
    }
  | { readonly kind: 'refused'; readonly issues: readonly TableIssue[]; readonly more: number }
  | { readonly kind: 'missing' }
  | {
      readonly kind: 'warmed';
      /** When the thread had loaded its module (epoch ms). */
      readonly startMs: number;
      /** The warm-up's wall and the thread's CPU for it, ms (module import included). */
      readonly ms: number;
      readonly cpuMs: number;
      readonly rules: number;
    }
  | { readonly kind: 'warm-failed'; readonly message: string }
  | { readonly kind: 'error'; readonly message: string };

/** Buffers of the built arrays, each once (the transfer list of the reply). */
export function builtBuffers(b: BuiltRules): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (a: { readonly buffer: ArrayBufferLike }): void => {
    if (a.buffer instanceof ArrayBuffer) out.add(a.buffer);
  };
  const r = b.rules;
  for (const a of [r.id, r.priority, r.set, r.window, r.release, r.next]) add(a);
  for (const g of b.groups) for (const ix of g.indexes) if (ix !== undefined) add(ix.slots);
  return [...out];
}
