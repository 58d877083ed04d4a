/**
 * The routing table as data (SPEC §10): destinations, destination sets, rules. Vocabulary from Kamailio's
 * dispatcher (set, destination, algorithm, state) and OpenSIPS drouting (rule groups, longest prefix, time
 * validity, priority). These are the shapes an operator edits and a store persists; `compileTable` turns
 * one version of them into the immutable structure decisions run on.
 */

/** How a set picks one of its destinations. */
export type Algorithm =
  | 'hash-callid'
  | 'hash-from'
  | 'hash-to'
  | 'hash-device'
  | 'round-robin'
  | 'random'
  | 'swrr'
  | 'priority'
  | 'least-load';

export const ALGORITHMS: readonly Algorithm[] = [
  'hash-callid',
  'hash-from',
  'hash-to',
  'hash-device',
  'round-robin',
  'random',
  'swrr',
  'priority',
  'least-load',
];

/**
 * Health of a destination as decisions see it (dispatcher states): active is used; probing (a destination
 * coming back, or one we could not confirm) is used only when no member of the set is active; inactive never.
 */
export type DestinationState = 'active' | 'probing' | 'inactive';

/** What a destination is, which also says how it is probed (SIP OPTIONS or HTTP). */
export type DestinationKind = 'sip' | 'http' | 'media' | 'shard';

export interface Destination {
  /** Stable id (also the rendezvous-hash identity: renaming a destination moves its keys). */
  readonly id: string;
  readonly kind: DestinationKind;
  /** `sip:host:port`, `http://host:port`, a media node id, a shard id … interpreted by the caller. */
  readonly address: string;
  /** Free attributes for the caller (the engine does not read them). */
  readonly attrs?: Readonly<Record<string, string>> | undefined;
}

export interface SetMember {
  readonly destinationId: string;
  /** Share of traffic (swrr, random, priority, least-load per unit of weight, weighted rendezvous); 0 = drained. */
  readonly weight: number;
  /** For 'priority': lower value is tried first (like DNS SRV). Ignored by the other algorithms. */
  readonly priority: number;
}

export interface DestinationSet {
  readonly id: string;
  readonly algorithm: Algorithm;
  readonly members: readonly SetMember[];
}

/** Which request value a rule's prefix is matched against. */
export type MatchField = 'device' | 'caller' | 'callee';
export const MATCH_FIELDS: readonly MatchField[] = ['device', 'caller', 'callee'];

/**
 * Validity of a rule in the platform's time zone (drouting's time recurrence, reduced to what operators use):
 * an optional date range, optional week days, an optional daily window. All parts absent = always.
 */
export interface TimeWindow {
  /** First local day it applies, `YYYY-MM-DD` (inclusive). */
  readonly from?: string | undefined;
  /** Last local day it applies, `YYYY-MM-DD` (inclusive). */
  readonly until?: string | undefined;
  /** ISO week days, 1 = Monday … 7 = Sunday. Absent = every day. */
  readonly days?: readonly number[] | undefined;
  /** Daily start `HH:MM` (inclusive). With `end`; `start > end` spans midnight (the day is the start's). */
  readonly start?: string | undefined;
  /** Daily end `HH:MM` (exclusive). */
  readonly end?: string | undefined;
}

/** Request value a gray-release condition or percentage reads. */
export type ReleaseKey = 'callid' | 'from' | 'to' | 'device' | 'caller' | 'callee';
export type ConditionField = 'caller' | 'callee' | 'device' | 'source';
export type ConditionOp = 'exact' | 'prefix' | 'regex' | 'cidr';

export interface ReleaseCondition {
  readonly field: ConditionField;
  readonly op: ConditionOp;
  readonly value: string;
}

/**
 * Gray release of a rule (Kamailio write-up §4): part of the rule's traffic goes to `canarySetId`. A request
 * is on the canary side when every condition holds, the window (if any) holds, and the stable hash of its
 * `key` falls under the current step's percentage. Steps only grow, so a key on the canary side stays there
 * as the release advances; `step = -1` is a rollback (everything stable) without deleting the release.
 */
export interface GrayRelease {
  readonly canarySetId: string;
  readonly key: ReleaseKey;
  /** Percentages in (0, 100], strictly increasing, e.g. [1, 10, 50, 100]. */
  readonly steps: readonly number[];
  /** Index into `steps` now in force; -1 = rolled back. */
  readonly step: number;
  readonly conditions?: readonly ReleaseCondition[] | undefined;
  readonly window?: TimeWindow | undefined;
}

export interface Rule {
  /** Numeric id (the database row id): kept in typed arrays, so a million rules stay compact. */
  readonly id: number;
  /** Which choice of the cluster the rule serves: 'media', 'upstream', 'placement' … */
  readonly group: string;
  readonly field: MatchField;
  /** Digits only, up to 24; '' is the group's default for that field. Longest match wins. */
  readonly prefix: string;
  /** Between rules with the same prefix: higher first. */
  readonly priority: number;
  readonly setId: string;
  readonly window?: TimeWindow | undefined;
  readonly release?: GrayRelease | undefined;
}

/** One version of the whole table, as published. */
export interface TableSource {
  readonly version: number;
  /** IANA zone windows are read in, e.g. 'Asia/Shanghai'. */
  readonly timeZone: string;
  readonly destinations: readonly Destination[];
  readonly sets: readonly DestinationSet[];
  readonly rules: readonly Rule[];
}
