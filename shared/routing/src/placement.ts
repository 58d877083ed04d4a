/**
 * Device placement (SPEC §14, issue 14): which shard (signaling instance) serves a device. Pure and
 * deterministic — the redirect server, every shard and every SIP edge compute the same answer from the same
 * node table, with no coordination:
 *
 * 1. **Rule**: the longest digit prefix of the 20-digit device code among the placement rules names a shard
 *    group (a region's shards: GB/T 28181 codes start with the province/city/district, §附录 D). No rule
 *    matches → the `default` group.
 * 2. **Eligible shards**: the group's members that are online (the node table's heartbeat window) and not
 *    draining (an operator drains a shard before an upgrade). A drain is paced: a draining shard keeps a
 *    device until the drain's progress passes the device's slot (drainSlot), so its devices arrive at the
 *    others at an even rate over the drain period instead of all within one keepalive interval.
 * 3. **Rendezvous hash** of the device code over the eligible shards (highest random weight, the engine's
 *    hash): a shard leaving moves only its own devices, spread evenly over the others; a shard joining takes
 *    an even share from each. An undrained shard takes its share back paced, by the same slots (joinedShare).
 *
 * An empty group (no eligible shard) places nowhere (null): the caller serves locally or answers 503, it
 * never spills a region's devices into another region silently.
 */
import { hashString, mix2 } from './hash.ts';

export const DEFAULT_PLACEMENT_GROUP = 'default';

export interface Shard {
  /** Node code (instance-id), unique: the shard's identity in the hash. */
  readonly code: string;
  readonly sipHost: string;
  readonly sipPort: number;
  /** Shard group (region) the shard serves; `default` unless configured. */
  readonly group: string;
  /** Online in the node table (heartbeat within the window, not left). */
  readonly online: boolean;
  /** Set by an operator (or a stop in progress): takes no device, keeps none at its next registration. */
  readonly draining: boolean;
  /**
   * A draining shard's devices leave paced, not all at once: the share (0..1) of them released so far (the
   * node table's drain progress). A device whose drain slot (drainSlot) is below it is placed elsewhere,
   * the others stay until their slot comes. Absent = 1: everything leaves now (a stop in progress).
   */
  readonly drainedShare?: number;
  /**
   * A shard coming back (undrained) takes its devices back paced too: the share (0..1) of them given back so
   * far. It competes for a device only once this passes the device's slot (drainSlot); the others stay where
   * they are until then. Absent = 1: it competes for every device (a shard in its place).
   */
  readonly joinedShare?: number;
  /**
   * With joinedShare: how far the shard's drain had got when it was undrained (absent = 1, finished). Only
   * the devices below that slot left it, so only they are given back paced; the others it still holds.
   */
  readonly joinFrom?: number;
}

export interface PlacementRule {
  /** Digit prefix of the device code, 0..20 digits (`''` = every device). */
  readonly prefix: string;
  readonly group: string;
}

export interface PlacementPolicy {
  /** Longest prefix first (see compilePlacementRules); an empty list = every device in `default`. */
  readonly rules: readonly PlacementRule[];
}

const DIGITS = /^\d{0,20}$/;

/** Validates and orders rules longest prefix first; throws a RangeError naming the bad rule. */
export function compilePlacementRules(rules: readonly PlacementRule[]): PlacementPolicy {
  const seen = new Set<string>();
  rules.forEach((r, i) => {
    if (!DIGITS.test(r.prefix)) throw new RangeError(`placement rule ${i}: prefix must be 0..20 digits, got ${JSON.stringify(r.prefix)}`);
    if (r.group.length === 0) throw new RangeError(`placement rule ${i}: group must not be empty`);
    if (seen.has(r.prefix)) throw new RangeError(`placement rule ${i}: prefix ${JSON.stringify(r.prefix)} appears twice`);
    seen.add(r.prefix);
  });
  return { rules: [...rules].sort((a, b) => b.prefix.length - a.prefix.length) };
}

/** The shard group of a device: the longest matching prefix's group, else `default`. */
export function placementGroup(policy: PlacementPolicy, deviceId: string): string {
  for (const r of policy.rules) if (deviceId.startsWith(r.prefix)) return r.group;
  return DEFAULT_PLACEMENT_GROUP;
}

export const isEligibleShard = (s: Shard): boolean => s.online && !s.draining;

/** Seed of the drain slot hash: independent of the rendezvous scores, so a shard's own devices are uniform in it. */
const DRAIN_SEED = 0xd7a1;
const TWO_32 = 2 ** 32;

/**
 * When a device leaves a draining shard, as a share of the drain (0 ≤ slot < 1): it is placed elsewhere
 * once the shard's drainedShare passes its slot. Uniform over any shard's devices, so a drain over a period
 * releases them at an even rate; fixed per device, so a released device never comes back.
 */
export const drainSlot = (deviceId: string): number => hashString(deviceId, DRAIN_SEED) / TWO_32;

/**
 * hashString of shard codes, kept: placement runs per forwarded message at the edge, over the same few
 * codes. Bounded (emptied when full: only a recomputation is lost).
 */
const codeHashes = new Map<string, number>();
const MAX_CODE_HASHES = 4096;
function codeHash(code: string): number {
  let h = codeHashes.get(code);
  if (h === undefined) {
    h = hashString(code);
    if (codeHashes.size >= MAX_CODE_HASHES) codeHashes.clear();
    codeHashes.set(code, h);
  }
  return h;
}

/**
 * The shard for `deviceId`, or null when its group has no eligible shard. Equal weights: the highest
 * mix of (device hash, shard hash) wins; ties (practically never) go to the smaller code, so the answer
 * never depends on the order of `shards`. A draining shard still wins the devices whose drain slot it has
 * not reached (paced drain): it was their highest score before the drain, and only they see it.
 */
export function placeDevice(policy: PlacementPolicy, shards: readonly Shard[], deviceId: string): Shard | null {
  const group = placementGroup(policy, deviceId);
  const key = hashString(deviceId);
  let slot: number | undefined; // computed only when a draining shard is in the group (no closure: edge hot path)
  let best: Shard | null = null;
  let bestScore = -1;
  for (const s of shards) {
    if (s.group !== group || !s.online) continue;
    if (s.draining) {
      // paced drain: still this device's shard until the drain passes its slot
      if (s.drainedShare === undefined) continue;
      slot ??= drainSlot(deviceId);
      if (slot < s.drainedShare) continue;
    } else if (s.joinedShare !== undefined && s.joinedShare < 1) {
      // paced return: a device the drain had released (slot below joinFrom) is not this shard's again until
      // the return passes its slot (it stays on the shard it has without this one — where it is)
      slot ??= drainSlot(deviceId);
      const from = s.joinFrom ?? 1;
      if (slot < from && slot >= s.joinedShare * from) continue;
    }
    const score = mix2(key, codeHash(s.code));
    if (score > bestScore || (score === bestScore && best !== null && s.code < best.code)) {
      bestScore = score;
      best = s;
    }
  }
  return best;
}
