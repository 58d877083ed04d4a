/**
 * Device ownership (SPEC §3): which instance received a device's REGISTER / heartbeats and therefore
 * is the only one that may send it SIP. Runtime state with a TTL, never persisted in MySQL (OWN-1).
 * Domain types only; adapters (memory, Redis) live beside this file.
 */
export interface OwnershipClaim {
  readonly deviceId: string;
  /** Time to live of the claim, ms (OWN-1: online window + one offline-scan period). */
  readonly ttlMs: number;
}

/** A claim replaced another instance's live claim: the device moved (OWN-4). */
export interface OwnershipMove {
  readonly deviceId: string;
  readonly newOwner: string;
  readonly previousOwner: string;
}

export interface OwnershipStore {
  /** OWN-1 / OWN-4: owner(deviceId) = instanceId for ttlMs, overwriting any other owner (a move is announced, see watchMoves). */
  claim(deviceId: string, instanceId: string, ttlMs: number): Promise<void>;
  /**
   * owner(deviceId) = instanceId for ttlMs only if nobody holds a live claim (atomic, `SET … NX PX`).
   * Resolves with the owner afterwards: instanceId when it claimed, else the holder. For an instance
   * re-asserting a device it still serves after the claim vanished (an empty Redis restart), never
   * overwriting a move made meanwhile (OWN-4).
   */
  claimIfVacant(deviceId: string, instanceId: string, ttlMs: number): Promise<string>;
  /** OWN-5: many claims for one instance in one round trip (pipelined). */
  claimMany(claims: readonly OwnershipClaim[], instanceId: string): Promise<void>;
  /**
   * OWN-1 renewal by keepalives, many devices in one round trip (OWN-5), each atomically: a claim
   * naming instanceId gets ttlMs from now; a vacant one is written for instanceId (the claim vanished,
   * e.g. an empty Redis restart); one naming another instance is left as it is — only a verified
   * REGISTER moves a device (OWN-4) — and reported. Resolves with device → other owner for those.
   */
  renewMany(deviceIds: readonly string[], instanceId: string, ttlMs: number): Promise<ReadonlyMap<string, string>>;
  /** The current owner, or null when nobody holds a live claim. */
  ownerOf(deviceId: string): Promise<string | null>;
  /** Owners of many devices in one round trip; devices without an owner are absent from the map. */
  ownersOf(deviceIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** OWN-3: deletes the claim only if it still names instanceId (atomic); true when deleted. */
  releaseIfOwner(deviceId: string, instanceId: string): Promise<boolean>;
  /**
   * OWN-4: `listener` hears of every claim (`claim`, `claimMany`: a verified REGISTER) that replaced
   * another instance's live claim, from any instance sharing the store, so the previous owner stops
   * acting for the device at once instead of at its next ownership check. Announced by the write
   * itself (same atomic step); heard at most once and only while subscribed (a notice lost in an
   * outage is left to the check pass). Renewals and claimIfVacant never move a device, so never
   * announce. Returns an unsubscribe function; close() ends every subscription.
   */
  watchMoves(listener: (move: OwnershipMove) => void): () => void;
  /** Idempotent; later calls reject with StoreClosedError. */
  close(): Promise<void>;
}

/** Input of ownershipTtlMs, in the units of the SPEC §12 settings. */
export interface OwnershipTtlSettings {
  keepaliveIntervalS: number;
  keepaliveTimeoutCount: number;
  offlineScanPeriodS: number;
}

/**
 * SPEC OWN-1: TTL = online window (keepalive interval × timeout count) + one offline-scan period. The
 * extra scan period keeps the owner resolvable for as long as the device can still be judged online.
 */
export function ownershipTtlMs(s: OwnershipTtlSettings): number {
  return Math.round((s.keepaliveIntervalS * s.keepaliveTimeoutCount + s.offlineScanPeriodS) * 1000);
}

/** Rejects values Redis would refuse (`PX` needs a positive integer), before any I/O. */
export function assertTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs <= 0) throw new RangeError(`ownership TTL must be a positive integer of ms, got ${ttlMs}`);
}
