/**
 * Cascade leadership as seen by one instance (SPEC CASC-1, CASC-2, FAIL-2, FAIL-4): successive reads
 * of the node table go in, the current leader and the transitions that matter to the cascade come
 * out. Pure: a reducer over (view, read, now) plus a thin stateful wrapper that takes `now` from a
 * clock. No timers, no I/O — the caller reads the table (on its node heartbeat) and feeds the result.
 *
 *  - A good read elects with the CASC-1 rule (electCascadeLeader); a change yields exactly one event:
 *    `became-leader` (now self), `lost-leadership` (was self), or `leader-changed` (neither).
 *  - A failed read changes nothing but the failure counters (FAIL-4: leadership does not flap on a
 *    transient MySQL error). Every instance reads the same table, so every instance keeps its last
 *    good view for the same outage and they keep agreeing.
 *  - Before the first good read the leader is unknown (null): an instance must not register upstream
 *    on a guess, or two instances starting together would both do it. Standalone mode feeds an empty
 *    table, which elects self (CASC-1 last resort, CASC-5).
 */
import type { Clock } from './clock.ts';
import { electCascadeLeader, type ElectionCandidate } from './election.ts';

export type NodeTableRead =
  | { readonly ok: true; readonly nodes: readonly ElectionCandidate[] }
  | { readonly ok: false; readonly error: unknown };

export interface LeadershipView {
  readonly selfId: string;
  /** Node code of the cascade leader; null until the first good read. */
  readonly leader: string | null;
  readonly isLeader: boolean;
  /** Clock time of the last good read; null before the first. */
  readonly lastGoodReadAt: number | null;
  /** Clock time of the first failure in the current run of failed reads; null after a good read. */
  readonly failingSince: number | null;
  readonly consecutiveFailures: number;
}

export type LeadershipEvent =
  /** Self is now the leader: register to every enabled upstream platform at once (CASC-2, FAIL-2). */
  | { readonly type: 'became-leader'; readonly leader: string; readonly previous: string | null; readonly at: number }
  /** Self was the leader and no longer is: stop upstream traffic, without unregistering. */
  | { readonly type: 'lost-leadership'; readonly leader: string; readonly previous: string; readonly at: number }
  /** The leader moved between two other nodes (or became known, not being self). */
  | { readonly type: 'leader-changed'; readonly leader: string; readonly previous: string | null; readonly at: number };

export interface LeadershipStep {
  readonly view: LeadershipView;
  /** At most one event per read. */
  readonly events: readonly LeadershipEvent[];
}

export function initialLeadership(selfId: string): LeadershipView {
  return { selfId, leader: null, isLeader: false, lastGoodReadAt: null, failingSince: null, consecutiveFailures: 0 };
}

export function applyNodeTableRead(view: LeadershipView, read: NodeTableRead, now: number): LeadershipStep {
  if (!read.ok) {
    // FAIL-4: keep the last good leader; only the failure bookkeeping moves
    return {
      view: { ...view, failingSince: view.failingSince ?? now, consecutiveFailures: view.consecutiveFailures + 1 },
      events: [],
    };
  }
  const leader = electCascadeLeader(read.nodes, view.selfId);
  const next: LeadershipView = {
    ...view,
    leader,
    isLeader: leader === view.selfId,
    lastGoodReadAt: now,
    failingSince: null,
    consecutiveFailures: 0,
  };
  const previous = view.leader;
  if (previous === leader) return { view: next, events: [] };
  let event: LeadershipEvent;
  if (leader === view.selfId) event = { type: 'became-leader', leader, previous, at: now };
  else if (previous === view.selfId) event = { type: 'lost-leadership', leader, previous, at: now };
  else event = { type: 'leader-changed', leader, previous, at: now };
  return { view: next, events: [event] };
}

export interface LeadershipTrackerOptions {
  readonly selfId: string;
  readonly clock: Pick<Clock, 'now'>;
  /** Called synchronously for each event, after the view has been updated. */
  readonly onEvent?: (event: LeadershipEvent) => void;
}

/** Stateful wrapper: one per instance, fed by the node heartbeat loop. */
export class LeadershipTracker {
  readonly #clock: Pick<Clock, 'now'>;
  readonly #onEvent: ((event: LeadershipEvent) => void) | undefined;
  #view: LeadershipView;

  constructor(opts: LeadershipTrackerOptions) {
    this.#clock = opts.clock;
    this.#onEvent = opts.onEvent;
    this.#view = initialLeadership(opts.selfId);
  }

  get view(): LeadershipView {
    return this.#view;
  }

  get leader(): string | null {
    return this.#view.leader;
  }

  get isLeader(): boolean {
    return this.#view.isLeader;
  }

  /** A good read of the node table (rows with `online` judged by the database clock, NODE-1). */
  observe(nodes: readonly ElectionCandidate[]): readonly LeadershipEvent[] {
    return this.#apply({ ok: true, nodes });
  }

  /** A failed read: the last good view stays (FAIL-4). */
  observeFailure(error: unknown): readonly LeadershipEvent[] {
    return this.#apply({ ok: false, error });
  }

  #apply(read: NodeTableRead): readonly LeadershipEvent[] {
    const step = applyNodeTableRead(this.#view, read, this.#clock.now());
    this.#view = step.view;
    for (const e of step.events) this.#onEvent?.(e);
    return step.events;
  }
}
