// What an instance's resident memory is made of, read from outside the process (memory-per-device.ts):
// V8's heap spaces from its own /metrics (prom-client's default `nodejs_heap_space_size_*` gauges, i.e.
// v8.getHeapSpaceStatistics) and the kernel's view from /proc/<pid>/smaps: anonymous vs file-backed
// resident memory, and glibc malloc's share (the main arena is the `[heap]` mapping; each thread arena is
// a 64 MiB-aligned anonymous reservation, HEAP_MAX_SIZE in glibc's arena.c, of which the resident part
// is its read-write head). Anonymous memory that is neither V8's committed heap nor malloc's is
// mostly V8's code range and thread stacks.
import { readFileSync } from 'node:fs';

export interface MemoryBreakdown {
  readonly rssKiB: number;
  readonly anonKiB: number;
  readonly fileKiB: number;
  /** The `[heap]` mapping: glibc's main arena (brk). */
  readonly mallocMainKiB: number;
  /** Resident part of the 64 MiB thread arenas. */
  readonly mallocThreadKiB: number;
  readonly mallocThreadArenas: number;
  /** V8 space → committed and used bytes (v8.getHeapSpaceStatistics through /metrics). */
  readonly spaces: Readonly<Record<string, { readonly total: number; readonly used: number }>>;
  readonly heapTotal: number;
  readonly heapUsed: number;
  /** process.memoryUsage().external: memory of Buffers/ArrayBuffers and other objects V8 was told about. */
  readonly external: number;
}

const ARENA = 64 * 2 ** 20;

/** Reads the breakdown; `metricsText` is the instance's /metrics page. */
export function memoryBreakdown(pid: number, metricsText: string): MemoryBreakdown {
  const spaces: Record<string, { total: number; used: number }> = {};
  let heapTotal = NaN;
  let heapUsed = NaN;
  let external = NaN;
  for (const line of metricsText.split('\n')) {
    const m = /^nodejs_heap_space_size_(total|used)_bytes\{space="([a-z_]+)"\} (\d+)/.exec(line);
    if (m !== null) {
      const space = (spaces[m[2] as string] ??= { total: 0, used: 0 });
      space[m[1] as 'total' | 'used'] = Number(m[3]);
      continue;
    }
    const v = /^nodejs_(heap_size_total|heap_size_used|external_memory)_bytes (\d+)/.exec(line);
    if (v === null) continue;
    if (v[1] === 'heap_size_total') heapTotal = Number(v[2]);
    else if (v[1] === 'heap_size_used') heapUsed = Number(v[2]);
    else external = Number(v[2]);
  }

  // smaps: a header line per mapping ("start-end perms offset dev inode [name]"), then "Key: n kB" lines
  interface Mapping { start: number; end: number; perms: string; name: string; rss: number; anon: number }
  const maps: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const h = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (h !== null) {
      maps.push({ start: parseInt(h[1] as string, 16), end: parseInt(h[2] as string, 16), perms: h[3] as string, name: h[4] ?? '', rss: 0, anon: 0 });
      continue;
    }
    const k = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    const last = maps.at(-1);
    if (k === null || last === undefined) continue;
    if (k[1] === 'Rss') last.rss = Number(k[2]);
    else last.anon = Number(k[2]);
  }
  let rssKiB = 0;
  let anonKiB = 0;
  let mallocMainKiB = 0;
  let mallocThreadKiB = 0;
  let mallocThreadArenas = 0;
  maps.forEach((m, i) => {
    rssKiB += m.rss;
    anonKiB += m.anon;
    if (m.name === '[heap]') mallocMainKiB += m.rss;
    const next = maps[i + 1];
    const isArena =
      m.name === '' && m.perms.startsWith('rw') && m.start % ARENA === 0 &&
      (m.end - m.start === ARENA || (next !== undefined && next.start === m.end && next.perms.startsWith('---') && next.end - m.start === ARENA));
    if (isArena) {
      mallocThreadKiB += m.rss;
      mallocThreadArenas++;
    }
  });
  return { rssKiB, anonKiB, fileKiB: rssKiB - anonKiB, mallocMainKiB, mallocThreadKiB, mallocThreadArenas, spaces, heapTotal, heapUsed, external };
}

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);

/** One line: RSS and what it is made of, in MB. */
export function formatBreakdown(b: MemoryBreakdown): string {
  const space = (name: string): string => {
    const s = b.spaces[name];
    return s === undefined ? '–' : `${mb(s.used)}/${mb(s.total)}`;
  };
  return (
    `RSS ${mb(b.rssKiB * 1024)} (anon ${mb(b.anonKiB * 1024)}, file ${mb(b.fileKiB * 1024)}); ` +
    `V8 used/committed ${mb(b.heapUsed)}/${mb(b.heapTotal)}: old ${space('old')}, new ${space('new')}, ` +
    `large ${space('large_object')}, code ${space('code')}; external ${mb(b.external)}; ` +
    `malloc main ${mb(b.mallocMainKiB * 1024)} + ${b.mallocThreadArenas} thread arenas ${mb(b.mallocThreadKiB * 1024)}`
  );
}
