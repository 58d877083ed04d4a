// Media node health from API probes (SPEC §10 "health from probes"). Keepalive hooks reach only the
// instance ZLM's hook URL leads to; every other instance, and any instance once a node falls silent,
// learns a node's health here: every `intervalMs` the nodes that nothing confirmed lately
// (probeTargets / NodeHealthTracker.dueForProbe) get one `getServerConfig` call with the node secret,
// and judgeProbe's verdict goes to the tracker. A node that keeps failing becomes inactive and the
// least-load selector skips it; its first good answer makes it active again. The decisions are pure
// (@vms/media node-probe.ts, node-health.ts); this file only schedules, calls and logs transitions.
//
// At most one probe per node is in flight; probes of a round run side by side, so a hung node does
// not delay the others. close() stops the timer; a probe still in flight is ignored when it settles
// (its client is closed with the media plane right after).
import { judgeProbe, probeTargets, type MediaNode, type NodeHealthState, type NodeHealthTracker, type ProbeOutcome, type ZlmClient } from '@vms/media';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';

export interface MediaProberDeps {
  readonly plane: {
    nodes(): readonly MediaNode[];
    client(node: MediaNode): Pick<ZlmClient, 'getServerConfig'>;
    readonly health: Pick<NodeHealthTracker, 'dueForProbe' | 'result' | 'state'>;
  };
  readonly clock: Clock;
  readonly log: Logger;
  readonly intervalMs: number;
}

export interface MediaProber {
  /** Arms the loop (the first round runs after one interval). Idempotent. */
  start(): void;
  /** One round now; resolves when its probes settled (tests, and the first look after start). */
  probeNow(): Promise<void>;
  /** Probes in flight. */
  readonly inFlight: number;
  /** Idempotent: stops the loop; results of probes still in flight are dropped. */
  close(): Promise<void>;
}

export function createMediaProber(d: MediaProberDeps): MediaProber {
  const { plane, clock } = d;
  const log = d.log.child({ component: 'media-prober' });
  const inFlight = new Map<string, Promise<void>>();
  let timer: TimerHandle | null = null;
  let started = false;
  let closed = false;

  // The state last logged per node. The state a choice uses can change without a probe of this instance
  // changing it: the shared record (shared-node-health.ts) catches up a moment after a report, a node goes
  // stale, an operator overrides it. Comparing before and after each probe alone missed those (a node
  // back up was never logged active when the shared record lagged its first good probe), so every round
  // also logs any node whose state moved since it was last logged.
  const logged = new Map<string, NodeHealthState>();
  const note = (nodeId: string, reason?: string): void => {
    const now = plane.health.state(nodeId);
    const before = logged.get(nodeId);
    logged.set(nodeId, now);
    if (before === undefined || before === now) return;
    const fields = { nodeId, from: before, to: now, reason };
    if (now === 'active') log.info(fields, 'media node health changed');
    else log.warn(fields, 'media node health changed');
  };

  const probe = async (node: MediaNode): Promise<void> => {
    if (!logged.has(node.id)) logged.set(node.id, plane.health.state(node.id));
    let outcome: ProbeOutcome;
    try {
      outcome = { config: await plane.client(node).getServerConfig() };
    } catch (error) {
      outcome = { error };
    }
    if (closed) return;
    const verdict = judgeProbe(node.id, outcome);
    plane.health.result(node.id, verdict.ok);
    const reason = verdict.ok ? undefined : verdict.reason;
    const before = logged.get(node.id);
    note(node.id, reason);
    if (before === logged.get(node.id) && !verdict.ok) log.debug({ nodeId: node.id, state: before, reason }, 'media node probe failed');
  };

  const round = (): Promise<void> => {
    if (closed) return Promise.resolve();
    const nodes = plane.nodes();
    for (const n of nodes) note(n.id);
    // bounded by the node list: a node removed from the registry is forgotten
    if (logged.size > nodes.length) for (const id of logged.keys()) if (!nodes.some((n) => n.id === id)) logged.delete(id);
    const due = probeTargets(nodes, (id) => plane.health.dueForProbe(id), new Set(inFlight.keys()));
    const probes: Promise<void>[] = [];
    for (const id of due) {
      const node = nodes.find((n) => n.id === id);
      if (node === undefined) continue;
      // probe() never rejects: every failure is a verdict; the guard keeps a bug from escaping the loop
      const p = probe(node)
        .catch((err: unknown) => log.error({ err, nodeId: id }, 'media node probe crashed'))
        .finally(() => inFlight.delete(id));
      inFlight.set(id, p);
      probes.push(p);
    }
    return Promise.all(probes).then(() => undefined);
  };

  const schedule = (): void => {
    if (closed) return;
    timer = clock.setTimeout(() => {
      timer = null;
      void round(); // not awaited: the next round is armed at once, in-flight nodes are skipped
      schedule();
    }, d.intervalMs);
  };

  return {
    start() {
      if (started || closed) return;
      started = true;
      schedule();
    },
    probeNow: round,
    get inFlight() {
      return inFlight.size;
    },
    async close() {
      closed = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
    },
  };
}
