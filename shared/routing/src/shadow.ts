/**
 * Shadow mode (Kamailio write-up §7.1): a candidate table decides beside the live one without acting; this
 * accumulator counts how often the two differ, per group, and keeps the last few differences as samples
 * (bounded: a busy platform must not grow memory with every request).
 */
import type { Decision } from './decision.ts';

export const SHADOW_SAMPLES = 20;

export interface ShadowSample {
  readonly at: number;
  readonly group: string;
  readonly key: string | undefined;
  readonly live: { readonly destination: string | undefined; readonly ruleId: number | undefined };
  readonly shadow: { readonly destination: string | undefined; readonly ruleId: number | undefined };
}

export interface ShadowGroupReport {
  readonly decisions: number;
  /** Decisions whose destination differs. */
  readonly differentDestination: number;
  /** Decisions with the same destination through a different rule (or side of a release). */
  readonly differentRuleOnly: number;
}

export interface ShadowReport {
  readonly liveVersion: number | undefined;
  readonly shadowVersion: number | undefined;
  readonly since: number | undefined;
  readonly groups: Readonly<Record<string, ShadowGroupReport>>;
  readonly samples: readonly ShadowSample[];
}

export class ShadowComparator {
  readonly #groups = new Map<string, { decisions: number; differentDestination: number; differentRuleOnly: number }>();
  readonly #samples: ShadowSample[] = [];
  #liveVersion: number | undefined;
  #shadowVersion: number | undefined;
  #since: number | undefined;

  record(at: number, group: string, key: string | undefined, live: Decision, shadow: Decision): void {
    this.#since ??= at;
    this.#liveVersion = live.version;
    this.#shadowVersion = shadow.version;
    let g = this.#groups.get(group);
    if (g === undefined) this.#groups.set(group, (g = { decisions: 0, differentDestination: 0, differentRuleOnly: 0 }));
    g.decisions++;
    const ld = live.destination?.id;
    const sd = shadow.destination?.id;
    if (ld !== sd) g.differentDestination++;
    else if (live.ruleId !== shadow.ruleId || live.side !== shadow.side) g.differentRuleOnly++;
    else return;
    if (this.#samples.length === SHADOW_SAMPLES) this.#samples.shift();
    this.#samples.push({ at, group, key, live: { destination: ld, ruleId: live.ruleId }, shadow: { destination: sd, ruleId: shadow.ruleId } });
  }

  report(): ShadowReport {
    const groups: Record<string, ShadowGroupReport> = {};
    for (const [k, v] of this.#groups) groups[k] = { ...v };
    return { liveVersion: this.#liveVersion, shadowVersion: this.#shadowVersion, since: this.#since, groups, samples: [...this.#samples] };
  }

  reset(): void {
    this.#groups.clear();
    this.#samples.length = 0;
    this.#since = undefined;
  }
}
