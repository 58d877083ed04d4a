/**
 * Rules checked and packed into typed columns as they arrive (a page of rows at a time from a store, or a
 * slice of an in-memory list). What is kept of a rule is numbers only: its id, priority, set, window and
 * release indexes, which prefix index it belongs to, and its prefix encoded as two doubles. A million rules
 * are then ~45 MB of ArrayBuffers and no object: the rows of a page die young (a cheap scavenge), and the
 * collector never has to mark a million live objects while the next table is built (docs/routing.md: that
 * mark-compact was the seconds-long stall of the earlier build).
 */
import { compileRelease, releaseProblems, type CompiledRelease } from './gray-release.ts';
import { fmix32 } from './hash.ts';
import { encodePrefixAt, isDigitPrefix, MAX_PREFIX_DIGITS } from './prefix-index.ts';
import { compileWindow, windowProblems, type CompiledWindow } from './time-window.ts';
import { MATCH_FIELDS, type Rule, type TimeWindow } from './types.ts';

export const MAX_ID_LENGTH = 128;

export interface TableIssue {
  /** Where: `rules[12] (id 7)`, `sets[0] (id media)`, `timeZone` … */
  readonly path: string;
  readonly message: string;
}

export const MAX_ISSUES = 200;

export class Issues {
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

export const isInt = (n: unknown, min: number, max: number): boolean => typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;
export const isId = (s: unknown): s is string => typeof s === 'string' && s.length > 0 && s.length <= MAX_ID_LENGTH;

export function fieldIndex(f: string): number {
  return f === 'device' ? 0 : f === 'caller' ? 1 : f === 'callee' ? 2 : -1;
}

/** Rules as packed columns; `count` rows are filled. */
export interface PackedRules {
  readonly count: number;
  readonly id: Float64Array;
  readonly priority: Int32Array;
  readonly set: Int32Array;
  /** Index into windows, -1 = always. */
  readonly window: Int32Array;
  readonly release: Int32Array;
  /** Which prefix index: group number × 3 + field index. */
  readonly index: Uint32Array;
  readonly keyHi: Float64Array;
  readonly keyLo: Float64Array;
  /** Position of the row among all rules given (for `rules[…]` paths). */
  readonly pos: Int32Array;
}

/**
 * Set of positive integer ids in one zeroed Float64Array (0 = empty), grown by doubling: a JS Set of a
 * million numbers leaves a million heap entries for the collector.
 */
class IdSet {
  #slots: Float64Array;
  #mask: number;
  #count = 0;
  constructor(n: number) {
    let cap = 16;
    while (cap < n * 2) cap *= 2;
    this.#slots = new Float64Array(cap);
    this.#mask = cap - 1;
  }
  /** Adds `id` (a positive safe integer); false when it was there already. */
  add(id: number): boolean {
    if ((this.#count + 1) * 2 > this.#mask + 1) this.#grow();
    const slots = this.#slots;
    for (let s = IdSet.#hash(id) & this.#mask; ; s = (s + 1) & this.#mask) {
      const v = slots[s]!;
      if (v === id) return false;
      if (v === 0) {
        slots[s] = id;
        this.#count++;
        return true;
      }
    }
  }
  static #hash(id: number): number {
    return fmix32((id >>> 0) ^ Math.imul(Math.floor(id / 4294967296), 0x9e3779b1));
  }
  #grow(): void {
    const old = this.#slots;
    this.#slots = new Float64Array(old.length * 2);
    this.#mask = this.#slots.length - 1;
    for (const id of old) {
      if (id === 0) continue;
      let s = IdSet.#hash(id) & this.#mask;
      while (this.#slots[s] !== 0) s = (s + 1) & this.#mask;
      this.#slots[s] = id;
    }
  }
}

export class RulePacker {
  readonly windows: CompiledWindow[] = [];
  readonly releases: CompiledRelease[] = [];
  /** Group names, by number. */
  readonly groups: string[] = [];
  readonly #groupNo = new Map<string, number>();
  readonly #windowIndex = new Map<string, number>();
  /**
   * Duplicate ids: stores read in id order (ORDER BY id), so while every id is above the last one there
   * can be no duplicate and no set is needed (a million random writes into a 16 MB set were a third of
   * the packing time); the set is made from the ids seen at the first id out of order.
   */
  #ids: IdSet | undefined;
  #lastId = 0;
  /** Ids of rules seen but not packed (invalid), while ids rise: the set needs them if order breaks. */
  readonly #unpackedIds: number[] = [];
  readonly #countHint: number;
  #seen = 0;
  #count = 0;
  #id: Float64Array;
  #priority: Int32Array;
  #set: Int32Array;
  #window: Int32Array;
  #release: Int32Array;
  #index: Uint32Array;
  #keyHi: Float64Array;
  #keyLo: Float64Array;
  #pos: Int32Array;

  /** `countHint`: rules expected (a store knows its version's rule count); more are taken, at a copy. */
  constructor(
    private readonly setIndex: ReadonlyMap<string, number>,
    private readonly issues: Issues,
    countHint: number,
  ) {
    const cap = Math.max(16, countHint);
    this.#countHint = cap;
    this.#id = new Float64Array(cap);
    this.#priority = new Int32Array(cap);
    this.#set = new Int32Array(cap);
    this.#window = new Int32Array(cap);
    this.#release = new Int32Array(cap);
    this.#index = new Uint32Array(cap);
    this.#keyHi = new Float64Array(cap);
    this.#keyLo = new Float64Array(cap);
    this.#pos = new Int32Array(cap);
  }

  /** Rules seen so far (valid or not): the position of the next one in `rules[…]` paths. */
  get seen(): number {
    return this.#seen;
  }

  add(r: Rule): void {
    const i = this.#seen++;
    const { issues, setIndex } = this;
    const before = issues.count;
    checkRule(r, i, issues, setIndex);
    if (isInt(r.id, 1, Number.MAX_SAFE_INTEGER) && !this.#newId(r.id)) issues.add(rulePath(i, r), 'duplicate id');
    if (issues.count > before) {
      if (this.#ids === undefined && isInt(r.id, 1, Number.MAX_SAFE_INTEGER)) this.#unpackedIds.push(r.id);
      return; // packed only when valid (ambiguities are still found among the valid ones)
    }
    if (this.#count === this.#id.length) this.#grow();
    const k = this.#count++;
    this.#id[k] = r.id;
    this.#pos[k] = i;
    this.#priority[k] = r.priority;
    this.#set[k] = setIndex.get(r.setId)!;
    this.#window[k] = r.window === undefined ? -1 : this.#windowOf(r.window);
    if (r.release === undefined) this.#release[k] = -1;
    else {
      this.#release[k] = this.releases.length;
      this.releases.push(compileRelease(r.release, setIndex.get(r.release.canarySetId)!));
    }
    let g = this.#groupNo.get(r.group);
    if (g === undefined) {
      g = this.groups.length;
      this.groups.push(r.group);
      this.#groupNo.set(r.group, g);
    }
    this.#index[k] = g * 3 + fieldIndex(r.field);
    encodePrefixAt(r.prefix, this.#keyHi, this.#keyLo, k);
  }

  /** False when `id` was seen before. */
  #newId(id: number): boolean {
    if (this.#ids === undefined) {
      if (id > this.#lastId) {
        this.#lastId = id;
        return true;
      }
      const ids = new IdSet(Math.max(this.#countHint, this.#count + this.#unpackedIds.length));
      for (let k = 0; k < this.#count; k++) ids.add(this.#id[k]!);
      for (const u of this.#unpackedIds) ids.add(u);
      this.#unpackedIds.length = 0;
      this.#ids = ids;
    }
    return this.#ids.add(id);
  }

  /** Rules packed so far (the valid ones). */
  get count(): number {
    return this.#count;
  }

  /**
   * The columns as they are now (rows [0, count) filled; not trimmed, and replaced when they grow): what the
   * indexes are built from while pages keep coming.
   */
  view(): PackedRules {
    return { count: this.#count, id: this.#id, priority: this.#priority, set: this.#set, window: this.#window, release: this.#release, index: this.#index, keyHi: this.#keyHi, keyLo: this.#keyLo, pos: this.#pos };
  }

  /** The packed columns, trimmed to what was filled. */
  finish(): PackedRules {
    const n = this.#count;
    const trim = <T extends Float64Array | Int32Array | Uint32Array>(a: T): T => (a.length === n ? a : (a.slice(0, n) as T));
    return {
      count: n,
      id: trim(this.#id),
      priority: trim(this.#priority),
      set: trim(this.#set),
      window: trim(this.#window),
      release: trim(this.#release),
      index: trim(this.#index),
      keyHi: this.#keyHi,
      keyLo: this.#keyLo,
      pos: this.#pos,
    };
  }

  #grow(): void {
    const cap = this.#id.length * 2;
    const grow = <T extends Float64Array | Int32Array | Uint32Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a);
      return b;
    };
    this.#id = grow(this.#id, (n) => new Float64Array(n));
    this.#priority = grow(this.#priority, (n) => new Int32Array(n));
    this.#set = grow(this.#set, (n) => new Int32Array(n));
    this.#window = grow(this.#window, (n) => new Int32Array(n));
    this.#release = grow(this.#release, (n) => new Int32Array(n));
    this.#index = grow(this.#index, (n) => new Uint32Array(n));
    this.#keyHi = grow(this.#keyHi, (n) => new Float64Array(n));
    this.#keyLo = grow(this.#keyLo, (n) => new Float64Array(n));
    this.#pos = grow(this.#pos, (n) => new Int32Array(n));
  }

  /** Windows are shared: most rules that have one use one of a few (office hours, a holiday). */
  #windowOf(w: TimeWindow): number {
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

export function rulePath(i: number, r: { readonly id: unknown }): string {
  return `rules[${i}]${typeof r.id === 'number' ? ` (id ${r.id})` : ''}`;
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
