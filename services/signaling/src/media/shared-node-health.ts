// Media node health shared across instances (SPEC §10 health: "state shared across instances through
// Redis"). Each instance keeps its own NodeHealthTracker (keepalive hooks reach only the instance ZLM's
// hook URL leads to; the stream counts and the staleness clock are local), and every event it sees is
// also counted against the routing engine's shared record of the node (RoutingHealthMonitor: the Redis
// hash vms:routing:health, field = the node id, the same record a published 'media' rule's destination of
// that id uses): keepalives and API probes as probe results, reachability failures of business calls
// (openRtpServer …) as business failures. What a choice reads:
//
//   an operator's manual override of the node (disabled / enabled), which probing never undoes;
//   else the worse of the local state and the shared automatic state.
//
// So one instance's failed probes take the node out on every instance within one probe interval, and an
// operator's disable on any instance holds on all of them. Reports are fire-and-forget and bounded: at
// most MAX_REPORTS_IN_FLIGHT at once, more are dropped (the next keepalive or probe reports again).
import type { NodeHealth, NodeHealthState, NodeHealthTracker } from '@vms/media';
import type { DestinationHealth, DestinationState } from '@vms/routing';
import type { Logger } from 'pino';

/** Shared-state writes in flight at once (each is a Redis read and at most one compare-and-set). */
export const MAX_REPORTS_IN_FLIGHT = 64;

/** What the media plane and its prober use of node health (NodeHealthTracker is one). */
export interface MediaNodeHealth {
  keepalive(nodeId: string, streams: number | undefined): void;
  /** An API probe's result ('probe', default), or a business call's ('business': only reachability counts). */
  result(nodeId: string, ok: boolean, kind?: 'probe' | 'business'): void;
  get(nodeId: string): NodeHealth;
  state(nodeId: string): NodeHealthState;
  dueForProbe(nodeId: string): boolean;
  forget(nodeId: string): void;
}

/** The routing engine's shared health, as far as media nodes use it (RoutingHealthMonitor). */
export interface SharedHealthPort {
  health(id: string): DestinationHealth | undefined;
  reportProbe(id: string, ok: boolean): Promise<void>;
  reportBusiness(id: string, ok: boolean): Promise<void>;
}

const RANK: Record<DestinationState, number> = { inactive: 0, probing: 1, active: 2 };

/** Pure: the state a choice uses, from the local state and the shared record (absent = nothing known). */
export function combinedNodeState(local: NodeHealthState, shared: DestinationHealth | undefined): NodeHealthState {
  if (shared?.manual === 'disabled') return 'inactive';
  if (shared?.manual === 'enabled') return 'active';
  if (shared === undefined) return local;
  return RANK[shared.auto] < RANK[local] ? shared.auto : local;
}

export function sharedNodeHealth(local: NodeHealthTracker, shared: SharedHealthPort, log: Logger): MediaNodeHealth {
  let inFlight = 0;
  let dropped = 0;
  const report = (nodeId: string, kind: 'probe' | 'business', ok: boolean): void => {
    if (inFlight >= MAX_REPORTS_IN_FLIGHT) {
      if (dropped++ % 1000 === 0) log.warn({ nodeId, dropped }, 'media node health report dropped: too many in flight');
      return;
    }
    inFlight++;
    (kind === 'probe' ? shared.reportProbe(nodeId, ok) : shared.reportBusiness(nodeId, ok))
      .catch((err: unknown) => log.warn({ err, nodeId }, 'media node health not shared; the local state still applies'))
      .finally(() => inFlight--);
  };
  // A success is written only when the shared record has something for it to change (a failure count, a
  // state other than active): a keepalive every 10 s per node and every good API call would otherwise each
  // cost a Redis read. The record is the snapshot refreshed every probe round and on every state change.
  const successChanges = (nodeId: string, kind: 'probe' | 'business'): boolean => {
    const h = shared.health(nodeId);
    if (h === undefined) return false;
    return kind === 'probe' ? h.auto !== 'active' || h.probeFailures > 0 : h.businessFailures > 0;
  };
  const event = (nodeId: string, kind: 'probe' | 'business', ok: boolean): void => {
    if (!ok || successChanges(nodeId, kind)) report(nodeId, kind, ok);
  };
  return {
    keepalive(nodeId, streams) {
      local.keepalive(nodeId, streams);
      event(nodeId, 'probe', true);
    },
    result(nodeId, ok, kind = 'probe') {
      local.result(nodeId, ok);
      event(nodeId, kind, ok);
    },
    get: (nodeId) => local.get(nodeId),
    state: (nodeId) => combinedNodeState(local.state(nodeId), shared.health(nodeId)),
    // a node the shared state holds out is probed as long as the local tracker says so (its own
    // successes are what bring the shared state back)
    dueForProbe: (nodeId) => local.dueForProbe(nodeId) || (shared.health(nodeId)?.auto ?? 'active') !== 'active',
    forget: (nodeId) => local.forget(nodeId),
  };
}
