/**
 * Choosing one destination of a set (Kamailio dispatcher algorithms, SPEC §10). Members are tried in two
 * tiers: the active ones; when none is usable, the probing ones (a destination we could not confirm beats a
 * certain failure). Inactive, excluded and drained (weight 0) members are never chosen.
 *
 * Hash-based choices use weighted rendezvous hashing (highest random weight): each member scores
 * -weight / ln(u) with u a hash of (key, member id). When a member leaves, only the keys it held move, and
 * they spread over the others in proportion to weight; no other key moves (unlike hash mod N, which moves
 * nearly all of them when the active list changes, the dispatcher limitation the write-up describes).
 */
import { hashString, mix2 } from './hash.ts';
import type { Algorithm, Destination, DestinationState } from './types.ts';

export interface CompiledMember {
  readonly destination: Destination;
  readonly weight: number;
  readonly priority: number;
  /** Hash of the destination id, the member's identity in rendezvous hashing. */
  readonly seed: number;
}

export interface CompiledSet {
  readonly id: string;
  readonly algorithm: Algorithm;
  readonly members: readonly CompiledMember[];
  /** Per-table mutable state: next round-robin position; SWRR current weights. */
  rr: number;
  readonly current: Float64Array;
}

/** Inputs of one pick; a plain object with no closures made per decision (the hot path). */
export interface PickContext {
  readonly state: (destinationId: string) => DestinationState;
  /** Destinations already tried for this request. */
  readonly exclude: readonly string[] | undefined;
  /** The value hash algorithms read (Call-ID, From, To, device code); undefined → round robin instead. */
  readonly hashKey: string | undefined;
  readonly load: (destinationId: string) => number | undefined;
  readonly random: () => number;
  /** Set by pick: the health tier the choice came from. */
  tier: Tier;
}

export type Tier = 'active' | 'probing';

/** Marks usable members of the best tier in `ok`; returns the tier or undefined when none is usable. */
function eligible(set: CompiledSet, ctx: PickContext, ok: Uint8Array): Tier | undefined {
  let anyActive = false;
  let anyProbing = false;
  const ms = set.members;
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i]!;
    ok[i] = 0;
    if (m.weight <= 0 || (ctx.exclude !== undefined && ctx.exclude.includes(m.destination.id))) continue;
    const s = ctx.state(m.destination.id);
    if (s === 'active') {
      ok[i] = 2;
      anyActive = true;
    } else if (s === 'probing') {
      ok[i] = 1;
      anyProbing = true;
    }
  }
  const want = anyActive ? 2 : anyProbing ? 1 : 0;
  if (want === 0) return undefined;
  for (let i = 0; i < ms.length; i++) ok[i] = ok[i] === want ? 1 : 0;
  return anyActive ? 'active' : 'probing';
}

let scratch = new Uint8Array(64);

/** Index of the chosen member (and ctx.tier set), or -1 when no member is usable. */
export function pick(set: CompiledSet, ctx: PickContext): number {
  if (scratch.length < set.members.length) scratch = new Uint8Array(set.members.length * 2);
  const ok = scratch;
  const tier = eligible(set, ctx, ok);
  if (tier === undefined) return -1;
  ctx.tier = tier;
  let index: number;
  switch (set.algorithm) {
    case 'hash-callid':
    case 'hash-from':
    case 'hash-to':
    case 'hash-device':
      index = ctx.hashKey === undefined ? roundRobin(set, ok) : rendezvous(set.members, ok, hashString(ctx.hashKey));
      break;
    case 'round-robin':
      index = roundRobin(set, ok);
      break;
    case 'random':
      index = weightedRandom(set.members, ok, ctx.random(), -Infinity);
      break;
    case 'swrr':
      index = swrr(set.members, ok, set.current);
      break;
    case 'priority':
      index = byPriority(set.members, ok, ctx.random());
      break;
    case 'least-load':
      index = leastLoad(set.members, ok, ctx);
      break;
  }
  return index;
}

/** Weighted rendezvous: the member with the highest -w/ln(u); ties (practically never) to the lower index. */
export function rendezvous(ms: readonly CompiledMember[], ok: Uint8Array, keyHash: number): number {
  let best = -1;
  let bestScore = -Infinity;
  for (let i = 0; i < ms.length; i++) {
    if (ok[i] === 0) continue;
    const m = ms[i]!;
    const u = (mix2(keyHash, m.seed) + 0.5) / 4294967296;
    const score = -m.weight / Math.log(u);
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}

function roundRobin(set: CompiledSet, ok: Uint8Array): number {
  const n = set.members.length;
  for (let k = 0; k < n; k++) {
    const i = (set.rr + k) % n;
    if (ok[i] !== 0) {
      set.rr = (i + 1) % n;
      return i;
    }
  }
  return -1; // unreachable: eligible() found one
}

/**
 * Smooth weighted round robin exactly as Nginx's ngx_http_upstream_get_peer: every usable peer's current
 * weight grows by its weight, the largest (first on ties) is chosen and loses the total. Weights {5,1,1}
 * give a a b a c a a.
 */
export function swrr(ms: readonly CompiledMember[], ok: Uint8Array, current: Float64Array): number {
  let best = -1;
  let total = 0;
  for (let i = 0; i < ms.length; i++) {
    if (ok[i] === 0) continue;
    const w = ms[i]!.weight;
    current[i]! += w;
    total += w;
    if (best === -1 || current[i]! > current[best]!) best = i;
  }
  current[best]! -= total;
  return best;
}

/** Weighted random among usable members whose priority equals `onlyPriority` (or all, with -Infinity). */
function weightedRandom(ms: readonly CompiledMember[], ok: Uint8Array, r: number, onlyPriority: number): number {
  let total = 0;
  for (let i = 0; i < ms.length; i++) if (ok[i] !== 0 && (onlyPriority === -Infinity || ms[i]!.priority === onlyPriority)) total += ms[i]!.weight;
  let x = r * total;
  let last = -1;
  for (let i = 0; i < ms.length; i++) {
    if (ok[i] === 0 || (onlyPriority !== -Infinity && ms[i]!.priority !== onlyPriority)) continue;
    last = i;
    x -= ms[i]!.weight;
    if (x < 0) return i;
  }
  return last;
}

/** Lowest priority value first (DNS SRV order), weighted random within it; failover = decide again with exclude. */
function byPriority(ms: readonly CompiledMember[], ok: Uint8Array, r: number): number {
  let top = Infinity;
  for (let i = 0; i < ms.length; i++) if (ok[i] !== 0 && ms[i]!.priority < top) top = ms[i]!.priority;
  return weightedRandom(ms, ok, r, top);
}

/**
 * Fewest load per unit of weight (a destination that reports no load counts as 0); ties to the larger
 * weight, then the smaller id, so every instance decides the same way from the same inputs.
 */
function leastLoad(ms: readonly CompiledMember[], ok: Uint8Array, ctx: PickContext): number {
  let best = -1;
  let bestLoad = 0;
  for (let i = 0; i < ms.length; i++) {
    if (ok[i] === 0) continue;
    const load = ctx.load(ms[i]!.destination.id) ?? 0;
    if (best === -1) {
      best = i;
      bestLoad = load;
      continue;
    }
    const a = ms[i]!;
    const b = ms[best]!;
    // a.load / a.weight < b.load / b.weight, without division
    const la = load * b.weight;
    const lb = bestLoad * a.weight;
    if (la < lb || (la === lb && (a.weight > b.weight || (a.weight === b.weight && a.destination.id < b.destination.id)))) {
      best = i;
      bestLoad = load;
    }
  }
  return best;
}
