/**
 * The synthetic version a kept build thread builds once after it starts (table-worker.ts `warm`), so that
 * the first real build finds the checking, packing and indexing code already optimized by the JIT instead
 * of interpreting it over its first pages (docs/routing.md: a build on a fresh thread was 0.9–1.1 s slower
 * than on a kept one for 1,000,000 rules from MariaDB, of which 0.34 s was the thread's start).
 *
 * Representative of a real table where it matters to the JIT: rows as arrays in RULE_COLUMNS order, made
 * into rules as the MySQL path makes them (packed in the server's format and split by parsePackedRules, or
 * row by row by ruleFromArray: table-build.worker.ts), with JSON text windows and gray releases
 * (what MariaDB hands), GB/T 28181 prefixes of every length class (province 2, city 4, district 6, unit 10,
 * device 20 digits), the three match fields, two groups and the algorithms of every set kind. Pure: no I/O.
 */
import type { TableTopology } from './compile.ts';
import type { Destination, DestinationSet } from './types.ts';

/** Rules of the warm-up version: enough for V8 to optimize the per-rule code (docs/routing.md). */
export const WARMUP_RULES = 20_000;
/** Rules per page handed to the builder (a MySQL page on the build thread is 20,000; the posted pages 2,000). */
export const WARMUP_PAGE_ROWS = 2_000;

const DESTINATIONS: readonly Destination[] = Array.from({ length: 16 }, (_, i) => ({ id: `warm-${i}`, kind: 'shard', address: `sip:127.0.0.${i + 1}:5060` }));
const ALGORITHMS = ['hash-device', 'swrr', 'least-load', 'round-robin', 'priority', 'random', 'hash-callid'] as const;
const SETS: readonly DestinationSet[] = ALGORITHMS.map((algorithm, s) => ({
  id: `warm-set-${s}`,
  algorithm,
  members: Array.from({ length: 4 }, (_, m) => ({ destinationId: `warm-${(s * 2 + m) % DESTINATIONS.length}`, weight: 1 + (m % 3), priority: m % 2 })),
}));
const WINDOW = JSON.stringify({ start: '08:00', end: '20:00', days: [1, 2, 3, 4, 5] });
const RELEASE = JSON.stringify({ canarySetId: 'warm-set-1', key: 'device', steps: [1, 10, 50, 100], step: 1 });

export function warmupTopology(timeZone: string): TableTopology {
  return { version: 1, timeZone, destinations: DESTINATIONS, sets: SETS };
}

/** Regional prefixes: 34 provinces, 9 cities each, 7 districts each (2,482), as GB/T 28181 codes begin. */
const REGIONS: readonly string[] = (() => {
  const provinces = Array.from({ length: 34 }, (_, i) => String(11 + i));
  const cities = provinces.flatMap((p) => Array.from({ length: 9 }, (_, i) => `${p}0${i + 1}`));
  const districts = cities.flatMap((c) => Array.from({ length: 7 }, (_, i) => `${c}0${i + 1}`));
  return [...provinces, ...cities, ...districts];
})();
const DISTRICTS = REGIONS.slice(34 + 34 * 9);

/**
 * The warm-up rows in id order, as arrays in RULE_COLUMNS order (id, grp, field, prefix, priority, set_id,
 * time_window, gray_release): the regional prefixes, then 10-digit units and 20-digit device codes (one unit
 * in ten), each key once (rules sharing group, field, prefix, priority and window are refused).
 */
export function* warmupRows(count: number): Generator<unknown[]> {
  let unit = 0;
  let device = 0;
  for (let id = 1; id <= count; id++) {
    const n = id - 1;
    let prefix: string;
    if (n < REGIONS.length) prefix = REGIONS[n]!;
    else if (n % 10 === 0) prefix = DISTRICTS[unit % DISTRICTS.length]! + String(Math.floor(unit++ / DISTRICTS.length)).padStart(4, '0');
    else prefix = DISTRICTS[device % DISTRICTS.length]! + '0000132' + String(Math.floor(device++ / DISTRICTS.length)).padStart(7, '0');
    const field = n % 50 === 7 ? 'callee' : n % 77 === 5 ? 'caller' : 'device';
    const release = n % 1000 === 0;
    // a release's canary set (warm-set-1) is not the rule's own
    yield [id, n % 13 === 0 ? 'upstream' : 'placement', field, prefix, n % 3, release ? 'warm-set-0' : SETS[n % SETS.length]!.id, n % 100 === 0 ? WINDOW : null, release ? RELEASE : null];
  }
}
