/**
 * What a decision says, so every choice can be explained (SPEC §10): which table version, which rule (by
 * id, with the field and prefix length that matched), which set and algorithm, which side of a gray
 * release and which step, and which health tier the destination came from.
 */
import type { ReleaseInput } from './gray-release.ts';
import type { Algorithm, Destination, DestinationState, MatchField } from './types.ts';

export type DecisionReason = 'chosen' | 'sticky' | 'no-rule' | 'no-destination';

export interface Decision {
  readonly version: number;
  readonly reason: DecisionReason;
  /** Undefined for no-rule and no-destination. */
  readonly destination: Destination | undefined;
  readonly ruleId: number | undefined;
  readonly matchedField: MatchField | undefined;
  /** Digits of the prefix that matched (0 for a group default). */
  readonly matchedLength: number | undefined;
  readonly setId: string | undefined;
  readonly algorithm: Algorithm | undefined;
  readonly side: 'stable' | 'canary';
  /** Index of the release step in force when the rule has a release (-1 = rolled back). */
  readonly releaseStep: number | undefined;
  readonly releasePercent: number | undefined;
  /** Health tier the destination was chosen in. */
  readonly tier: 'active' | 'probing' | undefined;
}

export interface DecideRequest extends ReleaseInput {
  /** Which choice: 'media', 'upstream', 'placement' … (the rules' group). */
  readonly group: string;
  /** Epoch ms, from the caller's clock. */
  readonly now: number;
  /** Destinations that already failed for this request (failover: decide again without them). */
  readonly exclude?: readonly string[] | undefined;
  /** Destination already serving this request's key (sticky): kept while in the set and not inactive. */
  readonly sticky?: string | undefined;
}

/** What decisions read from outside the table, each optional. */
export interface DecideInputs {
  /** Health per destination id; default: every destination active. */
  readonly state?: ((destinationId: string) => DestinationState) | undefined;
  /** Load per destination id for least-load (media node streams, shard devices). */
  readonly load?: ((destinationId: string) => number | undefined) | undefined;
  /** [0, 1) for random and priority; default Math.random. */
  readonly random?: (() => number) | undefined;
}
