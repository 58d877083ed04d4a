// The media nodes this instance can put streams on (SPEC §9): the registry (MySQL when configured,
// else memory) seeded from `vms.media.nodes`, one ZLM client per node, node health from keepalive
// hooks, API probes (media-prober.ts) and API call results, this instance's stream ledger, node choice
// by the routing engine (SPEC §10: a published 'media' rule where one matches, else the built-in table —
// sticky per live channel, least load per unit of weight), SSRCs (the allocator is given: memory alone, Redis in a cluster).
// The node list is cached and refreshed every `refreshMs` so hook authentication stays synchronous.
import {
  buildCandidates,
  createRoutingMediaSelector,
  createZlmClients,
  DEFAULT_HEALTH_POLICY,
  isMediaError,
  NodeHealthTracker,
  StreamLedger,
  type HealthPolicy,
  type MediaNode,
  type MediaNodeRegistry,
  type MediaPurpose,
  type SsrcAllocator,
  type ZlmClient,
} from '@vms/media';
import type { Decision, RoutingTable } from '@vms/routing';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import { MediaFailedError } from '../errors/catalog.ts';
import { sharedNodeHealth, type MediaNodeHealth, type SharedHealthPort } from './shared-node-health.ts';

export interface MediaPlaneOptions {
  readonly registry: MediaNodeRegistry;
  /** Upserted into the registry at start (`vms.media.nodes`). */
  readonly seed: readonly MediaNode[];
  /** SSRCs unique per media node; the caller owns (and closes) it. */
  readonly ssrcs: SsrcAllocator;
  /** Default DEFAULT_HEALTH_POLICY. */
  readonly healthPolicy?: HealthPolicy;
  readonly clock: Clock;
  readonly log: Logger;
  /** ZLM API request timeout, ms. */
  readonly apiTimeoutMs: number;
  readonly refreshMs: number;
  /** The published routing table in force, if the routing engine's store is wired (SPEC §10). */
  readonly routingTable?: (() => RoutingTable | undefined) | undefined;
  /** Shadow mode: a candidate table deciding beside the live one; each pair goes to onShadow. */
  readonly shadowTable?: (() => RoutingTable | undefined) | undefined;
  readonly onShadow?: ((channelId: string, live: Decision, shadow: Decision) => void) | undefined;
  /**
   * The routing engine's health shared across instances (shared-node-health.ts): node events are counted
   * there too, and its manual overrides and shared state weigh in every choice. Absent: local health only.
   */
  readonly sharedHealth?: SharedHealthPort | undefined;
}

export interface MediaPlane {
  readonly ledger: StreamLedger;
  readonly ssrcs: SsrcAllocator;
  readonly health: MediaNodeHealth;
  /** Loads the registry (after seeding it). */
  start(): Promise<void>;
  /** Sync lookup from the cached list (hook authentication). */
  node(id: string): MediaNode | undefined;
  /** Every node of the cached list, enabled or not, ordered by id. */
  nodes(): readonly MediaNode[];
  /** The node for a new stream of `channelId`; MediaFailedError when there is none. */
  choose(channelId: string, purpose: MediaPurpose, exclude?: readonly string[]): Promise<MediaNode>;
  client(node: MediaNode): ZlmClient;
  /** Records a ZLM call result for health: only reachability failures count. */
  callResult(nodeId: string, err: unknown): void;
  close(): Promise<void>;
}

export function createMediaPlane(o: MediaPlaneOptions): MediaPlane {
  const log = o.log.child({ component: 'media-plane' });
  const clients = createZlmClients({ requestTimeoutMs: o.apiTimeoutMs, connectTimeoutMs: Math.min(2000, o.apiTimeoutMs) });
  const localHealth = new NodeHealthTracker(o.clock, o.healthPolicy ?? DEFAULT_HEALTH_POLICY);
  const health: MediaNodeHealth = o.sharedHealth === undefined ? localHealth : sharedNodeHealth(localHealth, o.sharedHealth, log);
  const ledger = new StreamLedger();
  const onShadow = o.onShadow;
  const selector = createRoutingMediaSelector({
    published: o.routingTable,
    now: () => o.clock.now(),
    shadow: o.shadowTable,
    onShadow: onShadow === undefined ? undefined : (req, live, shadow) => onShadow(req.channelId, live, shadow),
  });
  const ssrcs = o.ssrcs;
  let nodes = new Map<string, MediaNode>();
  let timer: ReturnType<Clock['setTimeout']> | null = null;
  let closed = false;

  const refresh = async (): Promise<void> => {
    const list = await o.registry.listAll();
    nodes = new Map(list.map((n) => [n.id, n]));
  };
  const schedule = (): void => {
    if (closed) return;
    timer = o.clock.setTimeout(() => {
      refresh()
        .catch((err: unknown) => log.warn({ err }, 'media node list refresh failed, keeping the last one'))
        .finally(schedule);
    }, o.refreshMs);
  };

  return {
    ledger,
    ssrcs,
    health,
    async start() {
      for (const n of o.seed) await o.registry.upsert(n);
      await refresh();
      log.info({ nodes: [...nodes.keys()], seeded: o.seed.length }, 'media nodes loaded');
      schedule();
    },
    node: (id) => nodes.get(id),
    nodes: () => [...nodes.values()],
    async choose(channelId, purpose, exclude) {
      const candidates = buildCandidates(
        [...nodes.values()],
        { state: (id) => health.state(id), reportedStreams: (id) => health.get(id).reportedStreams, ledger },
      );
      try {
        return selector.select({ channelId, purpose, candidates, currentNodeId: ledger.liveStreamOf(channelId)?.nodeId, exclude });
      } catch (err) {
        if (isMediaError(err)) throw new MediaFailedError('node selection', err.message, { cause: err });
        throw err;
      }
    },
    client: (node) => clients.clientFor(node),
    callResult(nodeId, err) {
      if (err === null || err === undefined) health.result(nodeId, true, 'business');
      else if (isMediaError(err) && (err.code === 'MEDIA_ERR_UNREACHABLE' || err.code === 'MEDIA_ERR_TIMEOUT')) health.result(nodeId, false, 'business');
    },
    async close() {
      closed = true;
      if (timer !== null) o.clock.clearTimeout(timer);
      await clients.close();
    },
  };
}
