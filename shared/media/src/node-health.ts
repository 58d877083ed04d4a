/**
 * Media node health, in the dispatcher vocabulary the routing engine will use (SPEC §10): states
 * active / probing / inactive. Two tracks feed it: the node's own on_server_keepalive hooks and the
 * platform's API probes (plus failed business calls, e.g. openRtpServer unreachable).
 *
 *   any success (keepalive, probe ok)          → active, failures reset
 *   a failure, fewer than `failureThreshold`   → probing (suspect: only chosen when nothing is active)
 *   `failureThreshold` consecutive failures    → inactive (never chosen until a success)
 *   active but silent longer than staleAfterMs → probing (neither keepalive nor probe confirmed it)
 *
 * A node never heard of is probing: a freshly added node is usable as a last resort and becomes
 * active on its first keepalive or successful probe. Pure functions with `now` passed in (STYLE §4);
 * NodeHealthTracker is the small stateful holder the service keeps.
 */
export type NodeHealthState = 'active' | 'probing' | 'inactive';

export interface HealthPolicy {
  /** Without any success for this long an active node becomes probing. ZLM's hook.alive_interval
   * defaults to 10 s, so the default 30 s tolerates two lost keepalives. */
  readonly staleAfterMs: number;
  /** Consecutive failures that make a node inactive. */
  readonly failureThreshold: number;
  /** A node whose last success is older than this is due for an API probe. */
  readonly probeAfterMs: number;
}

export const DEFAULT_HEALTH_POLICY: HealthPolicy = Object.freeze({ staleAfterMs: 30_000, failureThreshold: 3, probeAfterMs: 15_000 });

export interface NodeHealth {
  /** State as of the last event; use `healthState(h, now, policy)` for the state now. */
  readonly state: NodeHealthState;
  readonly lastOkAt: number | undefined;
  readonly lastFailureAt: number | undefined;
  readonly consecutiveFailures: number;
  /** Stream count from the last keepalive (ServerKeepalive.streams). */
  readonly reportedStreams: number | undefined;
  readonly reportedAt: number | undefined;
}

export const UNKNOWN_HEALTH: NodeHealth = Object.freeze({
  state: 'probing',
  lastOkAt: undefined,
  lastFailureAt: undefined,
  consecutiveFailures: 0,
  reportedStreams: undefined,
  reportedAt: undefined,
});

export function recordKeepalive(h: NodeHealth, now: number, streams: number | undefined): NodeHealth {
  return { ...recordSuccess(h, now), reportedStreams: streams ?? h.reportedStreams, reportedAt: now };
}

export function recordSuccess(h: NodeHealth, now: number): NodeHealth {
  return { ...h, state: 'active', lastOkAt: now, consecutiveFailures: 0 };
}

export function recordFailure(h: NodeHealth, now: number, policy: HealthPolicy): NodeHealth {
  const consecutiveFailures = h.consecutiveFailures + 1;
  return { ...h, state: consecutiveFailures >= policy.failureThreshold ? 'inactive' : 'probing', lastFailureAt: now, consecutiveFailures };
}

export function healthState(h: NodeHealth, now: number, policy: HealthPolicy): NodeHealthState {
  if (h.state === 'active' && (h.lastOkAt === undefined || now - h.lastOkAt > policy.staleAfterMs)) return 'probing';
  return h.state;
}

/** True when the monitor should call the node's API now (nothing confirmed it recently). */
export function dueForProbe(h: NodeHealth, now: number, policy: HealthPolicy): boolean {
  return h.lastOkAt === undefined || now - h.lastOkAt >= policy.probeAfterMs || h.state !== 'active';
}

export interface HealthClock {
  now(): number;
}

/** Health of every media node, keyed by MediaNode.id. */
export class NodeHealthTracker {
  readonly #nodes = new Map<string, NodeHealth>();
  readonly #clock: HealthClock;
  readonly #policy: HealthPolicy;

  constructor(clock: HealthClock, policy: HealthPolicy = DEFAULT_HEALTH_POLICY) {
    this.#clock = clock;
    this.#policy = policy;
  }

  keepalive(nodeId: string, streams: number | undefined): void {
    this.#nodes.set(nodeId, recordKeepalive(this.get(nodeId), this.#clock.now(), streams));
  }

  /** Result of an API probe or of a business call (only reachability failures count as failures). */
  result(nodeId: string, ok: boolean): void {
    const h = this.get(nodeId);
    const now = this.#clock.now();
    this.#nodes.set(nodeId, ok ? recordSuccess(h, now) : recordFailure(h, now, this.#policy));
  }

  get(nodeId: string): NodeHealth {
    return this.#nodes.get(nodeId) ?? UNKNOWN_HEALTH;
  }

  state(nodeId: string): NodeHealthState {
    return healthState(this.get(nodeId), this.#clock.now(), this.#policy);
  }

  dueForProbe(nodeId: string): boolean {
    return dueForProbe(this.get(nodeId), this.#clock.now(), this.#policy);
  }

  /** A node removed from the registry. */
  forget(nodeId: string): void {
    this.#nodes.delete(nodeId);
  }
}
