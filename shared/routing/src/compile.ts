/**
 * Validation and compilation of one table version. Every problem is reported (up to MAX_ISSUES, then a
 * count), never only the first: an operator fixes a change set in one round.
 *
 * Two phases. Rules are checked and packed into typed columns as they arrive (rule-packer.ts: a page of a
 * store's rows at a time, or slices of an in-memory list), then the prefix indexes are built from the packed
 * columns, without a string or an object per rule. Both phases are steps of a generator that yields every
 * SLICE_RULES rules, so the same code runs to completion at once (`compileTable`, tests and small tables) or
 * in time slices between which the event loop runs (`compileTableSliced`, `TableBuilder` with a store's
 * pages: a million rules are built while requests keep being served, SEC-3's 50 ms).
 */
import type { CompiledRelease } from './gray-release.ts';
import { PrefixIndex, PrefixIndexBuilder, type PrefixIndexParts } from './prefix-index.ts';
import { hashString } from './hash.ts';
import { Issues, isId, isInt, MAX_ID_LENGTH, MAX_ISSUES, RulePacker, rulePath, type PackedRules, type TableIssue } from './rule-packer.ts';
import type { CompiledMember, CompiledSet } from './select.ts';
import { RoutingTable, type GroupIndex, type RuleColumns } from './table.ts';
import { ZoneClock, type CompiledWindow } from './time-window.ts';
import { ALGORITHMS, type Destination, type DestinationSet, type Rule, type TableSource } from './types.ts';

export { MAX_ID_LENGTH, MAX_ISSUES, type TableIssue };
export const MAX_WEIGHT = 1_000_000;
/**
 * Rules per generator step. Small: a sliced build checks its time budget only between steps, and the first
 * steps of a build are the slow ones (fresh index pages touched for the first time, code not yet optimized:
 * 20-80 ms for 2,048 rules seen at load 20), so a step must stay well under the 8 ms budget even then.
 */
const SLICE_RULES = 256;
/**
 * Keys all prefix indexes of a build may be sized for up front, × the rule count: an index is sized when its
 * first rule comes, before its share of the rules is known (docs/routing.md).
 */
const INDEX_BUDGET = 2;
const KINDS = ['sip', 'http', 'media', 'shard'];

export type CompileResult =
  | { readonly ok: true; readonly table: RoutingTable }
  | { readonly ok: false; readonly issues: readonly TableIssue[]; readonly more: number };

/**
 * A built table apart from its topology: typed arrays (their buffers transferable between threads) and the
 * few shared windows and releases (structured-cloneable). `assembleTable` wraps it with the topology.
 */
export interface BuiltRules {
  readonly count: number;
  readonly rules: RuleColumns;
  readonly windows: readonly CompiledWindow[];
  readonly releases: readonly CompiledRelease[];
  /** Per group: one prefix index per match field (device, caller, callee). */
  readonly groups: readonly { readonly name: string; readonly indexes: readonly (PrefixIndexParts | undefined)[] }[];
}

export type BuildOutcome =
  | { readonly ok: true; readonly built: BuiltRules }
  | { readonly ok: false; readonly issues: readonly TableIssue[]; readonly more: number };

/** A version without its rules: what a store reads before streaming the rules. */
export interface TableTopology {
  readonly version: number;
  readonly timeZone: string;
  readonly destinations: readonly Destination[];
  readonly sets: readonly DestinationSet[];
}

/**
 * Builds one table from its topology and its rules given in pieces (`addRules` per page, in id order or
 * not), then `finishSteps` / `finishSliced`. Each piece is checked, packed and put into the prefix indexes
 * at once, so a store's reads and the build overlap (the next page is read while this one is indexed) and
 * nothing is left but freezing when the last page has come. Only typed columns stay alive between pages.
 */
export class TableBuilder {
  readonly #top: TableTopology;
  readonly #issues = new Issues();
  readonly #zone: ZoneClock | undefined;
  readonly #destinations = new Map<string, Destination>();
  readonly #sets: CompiledSet[] = [];
  readonly #packer: RulePacker;
  readonly #countHint: number;
  /** Prefix index per group number × 3 + field. */
  readonly #indexes: (PrefixIndexBuilder | undefined)[] = [];
  /** Keys the indexes were sized for so far (the budget of INDEX_BUDGET × the hint). */
  #reservedKeys = 0;
  /** Rules chained by key (rules sharing a key), as packed. */
  #next: Int32Array;
  /** Packed rules already in the indexes. */
  #indexed = 0;

  /** `ruleCountHint`: how many rules will come (columns and indexes are sized once for it; more cost a copy). */
  constructor(top: TableTopology, ruleCountHint: number) {
    this.#top = top;
    const issues = this.#issues;
    if (!isInt(top.version, 0, Number.MAX_SAFE_INTEGER)) issues.add('version', 'must be a non-negative integer');
    let zone: ZoneClock | undefined;
    try {
      zone = new ZoneClock(top.timeZone);
    } catch {
      issues.add('timeZone', `'${String(top.timeZone)}' is not an IANA time zone`);
    }
    this.#zone = zone;
    const setIndex = compileTopology(top, issues, this.#destinations, this.#sets);
    this.#countHint = Math.max(16, ruleCountHint);
    this.#packer = new RulePacker(setIndex, issues, this.#countHint);
    this.#next = new Int32Array(this.#countHint);
  }

  /** Checks and packs rules[from, to), and puts them into the prefix indexes. */
  addRules(rules: readonly Rule[], from = 0, to = rules.length): void {
    const packer = this.#packer;
    for (let i = from; i < to; i++) packer.add(rules[i]!);
    this.#index(packer.view());
  }

  /** Links the packed rules not yet indexed into their keys' chains. */
  #index(packed: PackedRules): void {
    if (this.#next.length < packed.id.length) {
      const grown = new Int32Array(packed.id.length);
      grown.set(this.#next);
      this.#next = grown;
    }
    const next = this.#next;
    for (let k = this.#indexed; k < packed.count; k++) {
      const ix = packed.index[k]!;
      const b = this.#indexes[ix] ?? this.#newIndex(ix, packed.pos[k]!);
      const clash = insertRule(b, packed, next, k);
      if (clash !== -1) {
        this.#issues.add(
          rulePath(packed.pos[k]!, { id: packed.id[k] }),
          `same group, field, prefix, priority and window as rule id ${packed.id[clash]}: which one applies would be arbitrary`,
        );
      }
    }
    this.#indexed = packed.count;
  }

  /**
   * An index first used by the rule being indexed: sized for every rule still to come (exact for the usual
   * large table, one group and field), within a budget of INDEX_BUDGET × the rule count over all indexes;
   * past it an index starts small and doubles. Oversized ones shrink when frozen.
   */
  #newIndex(ix: number, position: number): PrefixIndexBuilder {
    // from the rule's position, not from the pages seen: the same table is sized alike however it is paged
    const remaining = Math.max(1, this.#countHint - position);
    const keys = Math.max(16, Math.min(remaining, INDEX_BUDGET * this.#countHint - this.#reservedKeys));
    this.#reservedKeys += keys;
    const b = new PrefixIndexBuilder(keys);
    this.#indexes[ix] = b;
    return b;
  }

  /**
   * Finishes the indexes (everything added is in them already; yields once) and returns numbers and a few
   * small lists only (BuiltRules): what a build thread hands back to the main thread (table-worker.ts).
   */
  *buildSteps(): Generator<void, BuildOutcome, void> {
    const issues = this.#issues;
    const packer = this.#packer;
    this.#index(packer.view());
    const packed = packer.finish();
    const n = packed.count;
    yield;
    if (issues.count > 0 || this.#zone === undefined) return { ok: false, issues: issues.list, more: issues.more };
    const builders = this.#indexes;
    const groups = packer.groups.map((name, no) => ({ name, indexes: [0, 1, 2].map((f) => builders[no * 3 + f]?.freezeParts()) }));
    const next = this.#next.length === n ? this.#next : this.#next.slice(0, n);
    const rules: RuleColumns = { id: packed.id, priority: packed.priority, set: packed.set, window: packed.window, release: packed.release, next };
    return { ok: true, built: { count: n, rules, windows: packer.windows, releases: packer.releases, groups } };
  }

  /** buildSteps, then the table. */
  *finishSteps(): Generator<void, CompileResult, void> {
    const r = yield* this.buildSteps();
    if (!r.ok) return r;
    return { ok: true, table: wrapTable(this.#top, this.#zone!, this.#destinations, this.#sets, r.built) };
  }

  /** finishSteps in slices of at most `sliceMs` of CPU, the event loop running between them. */
  finishSliced(sliceMs = 8): Promise<CompileResult> {
    return runSliced(this.finishSteps(), sliceMs);
  }
}

function wrapTable(top: TableTopology, zone: ZoneClock, destinations: ReadonlyMap<string, Destination>, sets: readonly CompiledSet[], b: BuiltRules): RoutingTable {
  const groups = new Map<string, GroupIndex>();
  for (const g of b.groups) groups.set(g.name, g.indexes.map((p) => (p === undefined ? undefined : PrefixIndex.fromParts(p))));
  return new RoutingTable({
    version: top.version,
    timeZone: top.timeZone,
    zone,
    destinations,
    sets,
    rules: b.rules,
    ruleCount: b.count,
    windows: b.windows,
    releases: b.releases,
    groups,
  });
}

/**
 * The table of rules built elsewhere (a build thread) over `top`, whose destinations and sets are compiled
 * here (a few hundred at most: the rules are the bulk). The topology is checked again: the rules' set
 * numbers refer to it, so it must be the one the build saw.
 */
export function assembleTable(top: TableTopology, built: BuiltRules): CompileResult {
  const issues = new Issues();
  let zone: ZoneClock | undefined;
  try {
    zone = new ZoneClock(top.timeZone);
  } catch {
    issues.add('timeZone', `'${String(top.timeZone)}' is not an IANA time zone`);
  }
  const destinations = new Map<string, Destination>();
  const sets: CompiledSet[] = [];
  compileTopology(top, issues, destinations, sets);
  if (issues.count > 0 || zone === undefined) return { ok: false, issues: issues.list, more: issues.more };
  return { ok: true, table: wrapTable(top, zone, destinations, sets, built) };
}

function compileTopology(top: TableTopology, issues: Issues, destinations: Map<string, Destination>, sets: CompiledSet[]): Map<string, number> {
  top.destinations.forEach((d, i) => {
    const at = `destinations[${i}]`;
    if (!isId(d.id)) return issues.add(at, `id must be 1..${MAX_ID_LENGTH} characters`);
    if (destinations.has(d.id)) issues.add(`${at} (id ${d.id})`, 'duplicate id');
    if (!KINDS.includes(d.kind)) issues.add(`${at} (id ${d.id})`, `kind '${String(d.kind)}' is not one of ${KINDS.join(', ')}`);
    if (typeof d.address !== 'string' || d.address.length === 0 || d.address.length > 512) issues.add(`${at} (id ${d.id})`, 'address must be 1..512 characters');
    destinations.set(d.id, d);
  });

  const setIndex = new Map<string, number>();
  top.sets.forEach((s, i) => {
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
  return setIndex;
}

/** Steps of a compilation of an in-memory table; the return value is the result. */
export function* compileSteps(src: TableSource): Generator<void, CompileResult, void> {
  const b = new TableBuilder(src, src.rules.length);
  yield;
  const n = src.rules.length;
  for (let i = 0; i < n; i += SLICE_RULES) {
    b.addRules(src.rules, i, Math.min(n, i + SLICE_RULES));
    yield;
  }
  return yield* b.finishSteps();
}

/**
 * Links packed rule `k` into the chain of its key, ordered by priority (higher first) then id (smaller
 * first). Returns the packed index of a rule it cannot be told apart from (same priority and window), or -1.
 */
function before(p: PackedRules, a: number, c: number): boolean {
  return p.priority[a] !== p.priority[c] ? p.priority[a]! > p.priority[c]! : p.id[a]! < p.id[c]!;
}

function insertRule(b: PrefixIndexBuilder, p: PackedRules, next: Int32Array, k: number): number {
  const hi = p.keyHi[k]!;
  const lo = p.keyLo[k]!;
  b.reserve();
  const slot = b.slotOfKey(hi, lo);
  const head = b.valueOf(slot);
  let clash = -1;
  for (let r = head; r !== -1; r = next[r]!) if (p.priority[r] === p.priority[k] && p.window[r] === p.window[k]) clash = r;
  if (head === -1 || before(p, k, head)) {
    next[k] = head;
    b.putKey(slot, hi, lo, k);
    return clash;
  }
  let prev = head;
  while (next[prev] !== -1 && !before(p, k, next[prev]!)) prev = next[prev]!;
  next[k] = next[prev]!;
  next[prev] = k;
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

async function runSliced(steps: Generator<void, CompileResult, void>, sliceMs: number): Promise<CompileResult> {
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

/**
 * Compiles in slices of at most `sliceMs` of CPU, letting the event loop run between them (setImmediate),
 * so building a large table never stalls requests for long.
 */
export function compileTableSliced(src: TableSource, sliceMs = 8): Promise<CompileResult> {
  return runSliced(compileSteps(src), sliceMs);
}
