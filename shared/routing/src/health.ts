/**
 * Destination health (SPEC §10; dispatcher states, the write-up's two tracks §3.2). Pure: an event and the
 * time come in, the next health goes out. Two tracks count against one state: probes (SIP OPTIONS, HTTP)
 * and business failures reported by callers (a media node refusing openRtpServer, an upstream answering
 * 5xx), so a destination that answers probes but fails real work still leaves the rotation.
 *
 *   active   --N consecutive probe failures, or M consecutive business failures-->  inactive
 *   inactive --one probe success-->  probing (used only when no member is active)
 *   probing  --K consecutive probe successes-->  active;   --a probe failure-->  inactive
 *
 * A manual disable or enable (operator) overrides the automatic state and probing never undoes it; only a
 * manual 'auto' returns the destination to its probed state (OpenSIPS drouting's MI disable works the same).
 */
import type { DestinationState } from './types.ts';

export interface HealthPolicy {
  /** Consecutive probe failures that take an active destination out. Default 3. */
  readonly probeFailuresToInactive: number;
  /** Consecutive probe successes that bring a probing destination back. Default 2. */
  readonly probeSuccessesToActive: number;
  /** Consecutive business failures that take an active or probing destination out. Default 5. */
  readonly businessFailuresToInactive: number;
}

export const DEFAULT_ROUTING_HEALTH_POLICY: HealthPolicy = { probeFailuresToInactive: 3, probeSuccessesToActive: 2, businessFailuresToInactive: 5 };

export type ManualOverride = 'disabled' | 'enabled';

export interface DestinationHealth {
  /** The probed / reported state, kept up to date even under a manual override. */
  readonly auto: DestinationState;
  readonly manual: ManualOverride | undefined;
  readonly probeFailures: number;
  readonly probeSuccesses: number;
  readonly businessFailures: number;
  /** When `auto` last changed (epoch ms). */
  readonly since: number;
}

export type HealthEvent =
  | { readonly kind: 'probe'; readonly ok: boolean }
  | { readonly kind: 'business'; readonly ok: boolean }
  | { readonly kind: 'manual'; readonly action: ManualOverride | 'auto' };

/** A destination nothing is known about yet: active (the dispatcher's default) until told otherwise. */
export function initialHealth(now: number): DestinationHealth {
  return { auto: 'active', manual: undefined, probeFailures: 0, probeSuccesses: 0, businessFailures: 0, since: now };
}

/** What decisions use: the manual override, else the automatic state. */
export function effectiveState(h: DestinationHealth): DestinationState {
  return h.manual === 'disabled' ? 'inactive' : h.manual === 'enabled' ? 'active' : h.auto;
}

export function stepHealth(h: DestinationHealth, e: HealthEvent, now: number, p: HealthPolicy = DEFAULT_ROUTING_HEALTH_POLICY): DestinationHealth {
  const to = (auto: DestinationState, counts: Partial<DestinationHealth>): DestinationHealth => ({
    ...h,
    ...counts,
    auto,
    since: auto === h.auto ? h.since : now,
  });
  switch (e.kind) {
    case 'manual':
      return { ...h, manual: e.action === 'auto' ? undefined : e.action };
    case 'business':
      if (e.ok) return h.businessFailures === 0 ? h : { ...h, businessFailures: 0 };
      if (h.auto !== 'inactive' && h.businessFailures + 1 >= p.businessFailuresToInactive) {
        return to('inactive', { businessFailures: 0, probeSuccesses: 0, probeFailures: 0 });
      }
      return { ...h, businessFailures: h.businessFailures + 1 };
    case 'probe':
      if (e.ok) {
        if (h.auto === 'inactive') return to('probing', { probeFailures: 0, probeSuccesses: 1 });
        if (h.auto === 'probing') {
          const n = h.probeSuccesses + 1;
          return n >= p.probeSuccessesToActive ? to('active', { probeFailures: 0, probeSuccesses: 0, businessFailures: 0 }) : { ...h, probeSuccesses: n, probeFailures: 0 };
        }
        return h.probeFailures === 0 ? h : { ...h, probeFailures: 0 };
      }
      if (h.auto === 'probing') return to('inactive', { probeFailures: 0, probeSuccesses: 0 });
      if (h.auto === 'inactive') return h;
      {
        const n = h.probeFailures + 1;
        return n >= p.probeFailuresToInactive ? to('inactive', { probeFailures: 0, probeSuccesses: 0 }) : { ...h, probeFailures: n };
      }
  }
}
