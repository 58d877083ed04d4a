// Upstream failover when health changes (SPEC §10 "upstream platform choice", §3.2 of the dispatcher
// write-up): the cascade's choice per redundancy group (upstream-choice.ts) is made again as soon as the
// routing health of one of the upstream platforms changes — the chosen one going inactive (its OPTIONS
// unanswered, probed by any instance; its REGISTERs failing; an operator's disable), or one coming back —
// instead of at the next platform resync (PLATFORM_RESYNC_MS). The registrations' outcomes also count as
// business results against the platform's shared state, so a platform that answers OPTIONS but refuses
// or drops REGISTER still leaves its group.
//
// Bounded: one re-choice at a time; changes arriving meanwhile fold into one more.
import type { RegistrationEvent } from '@vms/cascade';
import type { DestinationState } from '@vms/routing';
import type { Logger } from 'pino';

export interface UpstreamFailoverDeps {
  /** Health change feed (RoutingHealthMonitor.onChange). */
  onChange(listener: (id: string, from: DestinationState, to: DestinationState) => void): () => void;
  /** True for the server id of a known upstream platform. */
  isPlatform(id: string): boolean;
  /** Makes the choice again and brings the registrations in line (UpstreamRegistrations.reconcile). */
  reconcile(): Promise<void>;
  readonly log: Logger;
}

/** Starts following; returns the stop. */
export function followUpstreamHealth(d: UpstreamFailoverDeps): () => void {
  let running = false;
  let again = false;
  let stopped = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    again = false;
    d.reconcile()
      .catch((err: unknown) => d.log.warn({ err }, 'upstream choice not made again after a health change; the resync will'))
      .finally(() => {
        running = false;
        if (again && !stopped) run();
      });
  };
  const off = d.onChange((id, from, to) => {
    if (stopped || !d.isPlatform(id)) return;
    d.log.info({ platformId: id, from, to }, 'upstream platform health changed: choosing again');
    run();
  });
  return () => {
    stopped = true;
    off();
  };
}

/** A registration's outcome as a business result of the platform (undefined: not one). */
export function registrationOutcome(e: RegistrationEvent): boolean | undefined {
  switch (e.type) {
    case 'registered':
      return e.refresh ? undefined : true;
    case 'register-failed':
    case 'offline':
      return false;
    default:
      return undefined;
  }
}
