/**
 * Validation and compilation of one table version in a single pass. Every problem is reported (up to
 * MAX_ISSUES, then a count), never only the first: an operator fixes a change set in one round.
 *
 * The work is a generator that yields every SLICE_RULES rules, so the same code runs to completion at once
 * (`compileTable`, tests and small tables) or in time slices between which the event loop runs
 * (`compileTableSliced`: a million rules are built while requests keep being served, SEC-3's 50 ms).
 */
import { compileRelease, releaseProblems, type CompiledRelease } from './gray-release.ts';
import { isDigitPrefix, MAX_PREFIX_DIGITS, PrefixIndexBuilder, type PrefixIndex } from './prefix-index.ts';
import { fmix32, hashString } from './hash.ts';
import type { CompiledMember, CompiledSet } from './select.ts';
import { RoutingTable, type GroupIndex, type RuleColumns } from './table.ts';
import { compileWindow, windowProblems, ZoneClock, type CompiledWindow } from './time-window.ts';
import { ALGORITHMS, MATCH_FIELDS, type Destination, type Rule, type TableSource, type TimeWindow } from './types.ts';

export const MAX_ISSUES = 200;
export const MAX_ID_LENGTH = 128;
export const MAX_WEIGHT = 1_000_000;
const SLICE_RULES = 2048;
const KINDS = ['sip', 'http', 'media', 'shard'];

export interface TableIssue {
  /** Where: `rules[12] (id 7)`, `sets[0] (id media)`, `timeZone` … */
  readonly path: string;
  readonly message: string;
}

export type CompileResult =
  | { readonly ok: true; readonly table: RoutingTable }
  | { readonly ok: false; readonly issues: readonly TableIssue[]; readonly more: number };

class Issues {
  readonly list: TableIssue[] = [];
  more = 0;
  add(path: string, message: string): void {
    if (this.list.length < MAX_ISSUES) this.list.push({ path, message });
    else this.more++;
  }
  get count(): number {
    return this.list.length + this.more;
  }
}

const isInt = (n: unknown, min: number, max: number): boolean => typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;
const isId = (s: unknown): s is string => typeof s === 'string' && s.length > 0 && s.length <= MAX_ID_LENGTH;

/** Steps of a compilation; the return value is the result. */
export function* compileSteps(src: TableSource): Generator<void, CompileResult, void> {
  const issues = new Issues();
  if (!isInt(src.version, 0, Number.MAX_SAFE_INTEGER)) issues.add('version', 'must be a non-negative integer');
  let zone: ZoneClock | undefined;
  try {
    zone = new ZoneClock(src.timeZone);
  } catch {
    issues.add('timeZone', `'${String(src.timeZone)}' is not an IANA time zone`);
  }

  const destinations = new Map<string, Destination>();
  src.destinations.forEach((d, i) => {
    const at = `destinations[${i}]`;
    if (!isId(d.id)) return issues.add(at, `id must be 1..${MAX_ID_LENGTH} characters`);
    if (destinations.has(d.id)) issues.add(`${at} (id ${d.id})`, 'duplicate id');
    if (!KINDS.includes(d.kind)) issues.add(`${at} (id ${d.id})`, `kind '${String(d.kind)}' is not one of ${KINDS.join(', ')}`);
    if (typeof d.address !== 'string' || d.address.length === 0 || d.address.length > 512) issues.add(`${at} (id ${d.id})`, 'address must be 1..512 characters');
    destinations.set(d.id, d);
  });

  const setIndex = new Map<string, number>();
  const sets: CompiledSet[] = [];
  src.sets.forEach((s, i) => {
    const at = `sets[${i}]${isId(s.id) ? ` (id ${s.id})` : ''}`;
    if (!isId(s.id)) issues.add(at, `id must be 1..${MAX_ID_LENGTH} characters`);
    else if (setIndex.has(s.id)) issues.add(at, 'duplicate id');
    if (!ALGORITHMS.includes(s.algorithm)) issues.add(at, `algorithm '${String(s.algorithm)}' is not one of ${ALGORITHMS.join(', ')}`);
    if (!Array.isArray(s.members) || s.members.length === 0) issues.add(at, 'a set needs at least one member');
    const members: CompiledMember[] = [];
    const seen = new Set<string>();
    (Array.isArray(s.members) ? s.members : []).forEach((m, j) => {
      const mat = `${at}.members[${j}]`;
      if (m === null || typeof m !== 'object') return issues.add(mat, 'must be an object');
      const d = destinations.get(m.destinationId);
      if (d === undefined) issues.add(mat, `destination '${String(m.destinationId)}' does not exist`);
      if (seen.has(m.destinationId)) issues.add(mat, `destination '${m.destinationId}' is listed twice`);
      seen.add(m.destinationId);
      if (!isInt(m.weight, 0, MAX_WEIGHT)) issues.add(mat, `weight must be an integer 0..${MAX_WEIGHT}`);
      if (!isInt(m.priority, -1_000_000, 1_000_000)) issues.add(mat, 'priority must be an integer -1000000..1000000');
      if (d !== undefined) members.push({ destination: d, weight: m.weight, priority: m.priority, seed: hashString(d.id) });
    });
    setIndex.set(s.id, sets.length);
    sets.push({ id: s.id, algorithm: s.algorithm, members, rr: 0, current: new Float64Array(members.length) });
  });
  yield;

  // Rules: first count keys per (group, field) to size each prefix index once.
  const n = src.rules.length;
  const counts = new Map<string, number[]>();
  for (let i = 0; i < n; i++) {
    const r = src.rules[i]!;
    const f = fieldIndex(r.field);
    if (f < 0 || typeof r.group !== 'string') continue;
    let c = counts.get(r.group);
    if (c === undefined) counts.set(r.group, (c = [0, 0, 0]));
    c[f]!++;
    if (i % (SLICE_RULES * 8) === 0) yield;
  }
  const builders = new Map<string, (PrefixIndexBuilder | undefined)[]>();
  for (const [g, c] of counts) builders.set(g, c.map((k) => (k === 0 ? undefined : new PrefixIndexBuilder(k))));

  const rules: RuleColumns = {
    id: new Float64Array(n),
    priority: new Int32Array(n),
    set: new Int32Array(n),
    window: new Int32Array(n).fill(-1),
    release: new Int32Array(n).fill(-1),
    next: new Int32Array(n).fill(-1),
  };
  const ruleBuilder = new RuleBuilder(src, rules, issues, setIndex, builders);
  for (let i = 0; i < n; i += SLICE_RULES) {
    ruleBuilder.addRange(i, Math.min(n, i + SLICE_RULES));
    yield;
  }
  const { windows, releases } = ruleBuilder;
  if (issues.count > 0 || zone === undefined) return { ok: false, issues: issues.list, more: issues.more };

  const groups = new Map<string, GroupIndex>();
  for (const [g, bs] of builders) groups.set(g, bs.map((b): PrefixIndex | undefined => b?.freeze()));
  const table = new RoutingTable({ source: src, zone, destinations, sets, rules, ruleCount: n, windows, releases, groups });
  return { ok: true, table };
}

/**
 * Set of positive integer ids in one zeroed Float64Array (0 = empty), sized once: a JS Set of a million
 * numbers would rehash as it grows (one long pause each time) and leave garbage for the collector.
 */
class IdSet {
  readonly #slots: Float64Array;
  readonly #mask: number;
  constructor(n: number) {
    let cap = 16;
    while (cap < n * 2) cap *= 2;
    this.#slots = new Float64Array(cap);
    this.#mask = cap - 1;
  }
  /** Adds `id` (a positive safe integer); false when it was there already. */
  add(id: number): boolean {
    const slots = this.#slots;
    for (let s = fmix32((id >>> 0) ^ Math.imul(Math.floor(id / 4294967296), 0x9e3779b1)) & this.#mask; ; s = (s + 1) & this.#mask) {
      const v = slots[s]!;
      if (v === id) return false;
      if (v === 0) {
        slots[s] = id;
        return true;
      }
    }
  }
}

/** The per-rule work, in a plain class so the engine optimizes it (the generator only slices). */
class RuleBuilder {
  readonly windows: CompiledWindow[] = [];
  readonly releases: CompiledRelease[] = [];
  readonly #windowIndex = new Map<string, number>();
  readonly #ids: IdSet;

  constructor(
    private readonly src: TableSource,
    private readonly rules: RuleColumns,
    private readonly issues: Issues,
    private readonly setIndex: ReadonlyMap<string, number>,
    private readonly builders: ReadonlyMap<string, (PrefixIndexBuilder | undefined)[]>,
  ) {
    this.#ids = new IdSet(src.rules.length);
  }

  addRange(from: number, to: number): void {
    for (let i = from; i < to; i++) this.add(i, this.src.rules[i]!);
  }

  add(i: number, r: Rule): void {
    const { rules, issues, setIndex } = this;
    const before = issues.count;
    checkRule(r, i, issues, setIndex);
    if (isInt(r.id, 1, Number.MAX_SAFE_INTEGER)) {
      if (!this.#ids.add(r.id)) issues.add(rulePath(i, r), 'duplicate id');
    }
    if (issues.count > before) return;
    rules.id[i] = r.id;
    rules.priority[i] = r.priority;
    rules.set[i] = setIndex.get(r.setId)!;
    if (r.window !== undefined) rules.window[i] = this.#window(r.window);
    if (r.release !== undefined) {
      rules.release[i] = this.releases.length;
      this.releases.push(compileRelease(r.release, setIndex.get(r.release.canarySetId)!));
    }
    const builder = this.builders.get(r.group)![fieldIndex(r.field)]!;
    const ambiguous = insertRule(builder, r.prefix, i, rules);
    if (ambiguous !== -1) {
      issues.add(rulePath(i, r), `same group, field, prefix, priority and window as rule id ${rules.id[ambiguous]}: which one applies would be arbitrary`);
    }
  }

  /** Windows are shared: most rules that have one use one of a few (office hours, a holiday). */
  #window(w: TimeWindow): number {
    const key = JSON.stringify([w.from, w.until, w.days, w.start, w.end]);
    let ix = this.#windowIndex.get(key);
    if (ix === undefined) {
      ix = this.windows.length;
      this.windows.push(compileWindow(w));
      this.#windowIndex.set(key, ix);
    }
    return ix;
  }
}

function rulePath(i: number, r: Rule): string {
  return `rules[${i}]${typeof r.id === 'number' ? ` (id ${r.id})` : ''}`;
}

function fieldIndex(f: string): number {
  return f === 'device' ? 0 : f === 'caller' ? 1 : f === 'callee' ? 2 : -1;
}

/** Checks one rule; builds its path only when there is something to report (a million rules, most fine). */
function checkRule(r: Rule, i: number, issues: Issues, setIndex: ReadonlyMap<string, number>): void {
  if (
    isInt(r.id, 1, Number.MAX_SAFE_INTEGER) &&
    isId(r.group) &&
    fieldIndex(r.field) >= 0 &&
    typeof r.prefix === 'string' &&
    isDigitPrefix(r.prefix) &&
    isInt(r.priority, -1_000_000, 1_000_000) &&
    setIndex.has(r.setId) &&
    r.window === undefined &&
    r.release === undefined
  ) {
    return; // the common case, without building a path
  }
  const at = rulePath(i, r);
  if (!isInt(r.id, 1, Number.MAX_SAFE_INTEGER)) issues.add(at, 'id must be a positive integer');
  if (!isId(r.group)) issues.add(at, `group must be 1..${MAX_ID_LENGTH} characters`);
  if (!MATCH_FIELDS.includes(r.field)) issues.add(at, `field '${String(r.field)}' is not device, caller or callee`);
  if (typeof r.prefix !== 'string' || !isDigitPrefix(r.prefix)) issues.add(at, `prefix must be 0..${MAX_PREFIX_DIGITS} digits`);
  if (!isInt(r.priority, -1_000_000, 1_000_000)) issues.add(at, 'priority must be an integer -1000000..1000000');
  if (!setIndex.has(r.setId)) issues.add(at, `set '${String(r.setId)}' does not exist`);
  if (r.window !== undefined) for (const p of windowProblems(r.window)) issues.add(at, `window: ${p}`);
  if (r.release !== undefined) {
    for (const p of releaseProblems(r.release)) issues.add(at, `release: ${p}`);
    if (!setIndex.has(r.release.canarySetId)) issues.add(at, `release: canary set '${String(r.release.canarySetId)}' does not exist`);
    else if (r.release.canarySetId === r.setId) issues.add(at, 'release: canary set is the rule\'s own set');
  }
}

/**
 * Links rule `i` into the chain of its key, ordered by priority (higher first) then id (smaller first).
 * Returns the index of a rule it cannot be told apart from (same priority and window), or -1.
 */
function before(rules: RuleColumns, a: number, c: number): boolean {
  return rules.priority[a] !== rules.priority[c] ? rules.priority[a]! > rules.priority[c]! : rules.id[a]! < rules.id[c]!;
}

function insertRule(b: PrefixIndexBuilder, prefix: string, i: number, rules: RuleColumns): number {
  const slot = b.slotOf(prefix);
  const head = b.valueOf(slot);
  let clash = -1;
  for (let r = head; r !== -1; r = rules.next[r]!) if (rules.priority[r] === rules.priority[i] && rules.window[r] === rules.window[i]) clash = r;
  if (head === -1 || before(rules, i, head)) {
    rules.next[i] = head;
    b.put(slot, prefix, i);
    return clash;
  }
  let prev = head;
  while (rules.next[prev] !== -1 && !before(rules, i, rules.next[prev]!)) prev = rules.next[prev]!;
  rules.next[i] = rules.next[prev]!;
  rules.next[prev] = i;
  return clash;
}

/** Validates and compiles at once. */
export function compileTable(src: TableSource): CompileResult {
  const steps = compileSteps(src);
  for (;;) {
    const s = steps.next();
    if (s.done === true) return s.value;
  }
}

/** Every problem of a table, or none. */
export function validateTable(src: TableSource): { issues: readonly TableIssue[]; more: number } {
  const r = compileTable(src);
  return r.ok ? { issues: [], more: 0 } : { issues: r.issues, more: r.more };
}

/**
 * Compiles in slices of at most `sliceMs` of CPU, letting the event loop run between them (setImmediate),
 * so building a large table never stalls requests for long.
 */
export async function compileTableSliced(src: TableSource, sliceMs = 8): Promise<CompileResult> {
  const steps = compileSteps(src);
  let sliceStart = performance.now();
  for (;;) {
    const s = steps.next();
    if (s.done === true) return s.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}
