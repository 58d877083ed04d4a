/**
 * One compiled, immutable version of the routing table (apart from the round-robin and SWRR counters, which
 * belong to the version and start afresh with the next one, as Nginx's do on reload). Readers hold a
 * reference to one table for a whole decision, so a reload that swaps the reference is never seen half-way.
 */
import type { DecideInputs, DecideRequest, Decision } from './decision.ts';
import { onCanary, type CompiledRelease } from './gray-release.ts';
import { PrefixIndex } from './prefix-index.ts';
import { pick, type CompiledSet, type PickContext } from './select.ts';
import { inWindow, type CompiledWindow, type LocalTime, type ZoneClock } from './time-window.ts';
import type { Algorithm, Destination, DestinationState, MatchField } from './types.ts';
import { MATCH_FIELDS } from './types.ts';

/** Rules as columns (one typed array per attribute): a million rules without a million objects. */
export interface RuleColumns {
  readonly id: Float64Array;
  readonly priority: Int32Array;
  readonly set: Int32Array;
  /** Index into windows, -1 = always. */
  readonly window: Int32Array;
  /** Index into releases, -1 = none. */
  readonly release: Int32Array;
  /** Next rule with the same key (priority descending, then id ascending), -1 = end. */
  readonly next: Int32Array;
}

/** Per group: one prefix index per match field (undefined when no rule of the group uses that field). */
export type GroupIndex = readonly (PrefixIndex | undefined)[];

function allActive(): DestinationState {
  return 'active';
}
function noLoad(): undefined {
  return undefined;
}

export interface RuleMatch {
  readonly rule: number;
  readonly field: MatchField;
  readonly length: number;
}

export interface TableParts {
  readonly version: number;
  readonly timeZone: string;
  readonly zone: ZoneClock;
  readonly destinations: ReadonlyMap<string, Destination>;
  readonly sets: readonly CompiledSet[];
  readonly rules: RuleColumns;
  readonly ruleCount: number;
  readonly windows: readonly CompiledWindow[];
  readonly releases: readonly CompiledRelease[];
  readonly groups: ReadonlyMap<string, GroupIndex>;
}

export class RoutingTable {
  readonly version: number;
  readonly timeZone: string;
  readonly #p: TableParts;

  constructor(parts: TableParts) {
    this.#p = parts;
    this.version = parts.version;
    this.timeZone = parts.timeZone;
  }

  get ruleCount(): number {
    return this.#p.ruleCount;
  }

  /** Bytes held in typed arrays (rule columns and prefix indexes): the bulk of a large table. */
  get typedBytes(): number {
    const r = this.#p.rules;
    let n = r.id.byteLength + r.priority.byteLength + r.set.byteLength + r.window.byteLength + r.release.byteLength + r.next.byteLength;
    for (const g of this.#p.groups.values()) for (const ix of g) n += ix?.bytes ?? 0;
    return n;
  }

  destination(id: string): Destination | undefined {
    return this.#p.destinations.get(id);
  }

  /** Destinations of the table (what health probing watches). */
  destinations(): IterableIterator<Destination> {
    return this.#p.destinations.values();
  }

  /**
   * The rule for a request: longest prefix over the fields the request carries (device, caller, callee);
   * at equal length the higher priority, then the smaller id. A rule whose window excludes `now` is passed
   * over and a shorter prefix may match (drouting backs off the same way).
   */
  matchRule(req: DecideRequest): RuleMatch | undefined {
    const g = this.#p.groups.get(req.group);
    if (g === undefined) return undefined;
    const { rules, windows, zone } = this.#p;
    let local: LocalTime | undefined;
    let best = -1;
    let bestLen = -1;
    let bestField: MatchField = 'device';
    for (let f = 0; f < MATCH_FIELDS.length; f++) {
      const ix = g[f];
      if (ix === undefined) continue;
      const field = MATCH_FIELDS[f]!;
      const key = field === 'device' ? req.device : field === 'caller' ? req.caller : req.callee;
      if (key === undefined) continue;
      const n = PrefixIndex.prepare(key);
      const lengths = ix.lengthsDesc;
      scan: for (let i = 0; i < lengths.length; i++) {
        const length = lengths[i]!;
        if (length > n) continue;
        if (length < bestLen) break; // cannot beat what another field found
        for (let r = ix.valueAt(length); r !== -1; r = rules.next[r]!) {
          const w = rules.window[r]!;
          if (w !== -1 && !inWindow(windows[w]!, (local ??= zone.local(req.now)))) continue;
          if (length > bestLen || better(rules, r, best)) {
            best = r;
            bestLen = length;
            bestField = field;
          }
          break scan;
        }
      }
    }
    return best === -1 ? undefined : { rule: best, field: bestField, length: bestLen };
  }

  decide(req: DecideRequest, inputs: DecideInputs = {}): Decision {
    const p = this.#p;
    const m = this.matchRule(req);
    if (m === undefined) return this.#result('no-rule', undefined, undefined, undefined, 'stable', undefined);
    const releaseIx = p.rules.release[m.rule]!;
    let setIx = p.rules.set[m.rule]!;
    let side: 'stable' | 'canary' = 'stable';
    const release = releaseIx === -1 ? undefined : p.releases[releaseIx]!;
    if (release !== undefined && onCanary(release, req, p.zone)) {
      side = 'canary';
      setIx = release.canarySet;
    }
    const set = p.sets[setIx]!;
    const state = inputs.state ?? allActive;
    const exclude = req.exclude !== undefined && req.exclude.length > 0 ? req.exclude : undefined;
    if (req.sticky !== undefined && exclude?.includes(req.sticky) !== true) {
      const s = state(req.sticky);
      if (s !== 'inactive') {
        for (const member of set.members) {
          if (member.destination.id === req.sticky) return this.#result('sticky', member.destination, m, set, side, release, s);
        }
      }
    }
    const ctx: PickContext = {
      state,
      exclude,
      hashKey: hashKeyFor(set.algorithm, req),
      load: inputs.load ?? noLoad,
      random: inputs.random ?? Math.random,
      tier: 'active',
    };
    const index = pick(set, ctx);
    if (index === -1) return this.#result('no-destination', undefined, m, set, side, release);
    return this.#result('chosen', set.members[index]!.destination, m, set, side, release, ctx.tier);
  }

  #result(
    reason: Decision['reason'],
    destination: Destination | undefined,
    m: RuleMatch | undefined,
    set: CompiledSet | undefined,
    side: 'stable' | 'canary',
    release: CompiledRelease | undefined,
    tier?: 'active' | 'probing',
  ): Decision {
    return {
      version: this.version,
      reason,
      destination,
      ruleId: m === undefined ? undefined : this.#p.rules.id[m.rule],
      matchedField: m?.field,
      matchedLength: m?.length,
      setId: set?.id,
      algorithm: set?.algorithm,
      side,
      releaseStep: release?.step,
      releasePercent: release?.percent,
      tier,
    };
  }
}

function better(rules: RuleColumns, a: number, b: number): boolean {
  if (b === -1) return true;
  const pa = rules.priority[a]!;
  const pb = rules.priority[b]!;
  return pa !== pb ? pa > pb : rules.id[a]! < rules.id[b]!;
}

function hashKeyFor(algorithm: Algorithm, req: DecideRequest): string | undefined {
  switch (algorithm) {
    case 'hash-callid':
      return req.callId;
    case 'hash-from':
      return req.from;
    case 'hash-to':
      return req.to;
    case 'hash-device':
      return req.device;
    default:
      return undefined;
  }
}
