// Builds the media side of one instance: the node registry (MySQL when configured, else the embedded store)
// seeded from `vms.media.nodes`, SSRCs (memory alone; Redis in a cluster, with a local fallback), the
// media plane and its API probe loop, INVITE signaling on the device side's SIP stack, the session
// manager (with stream → holder records in a cluster), MediaStatus from the device events, and the
// webhook receiver (node secret; hooks about streams held elsewhere forwarded to their holder).
import {
  createHookHandler,
  createMemoryMediaNodeRegistry,
  createMemorySsrcAllocator,
  createMysqlMediaNodeRegistry,
  createRedisSsrcAllocator,
  type HealthPolicy,
  type HookHandler,
  type MediaNodeRegistry,
  type SsrcAllocator,
} from '@vms/media';
import { createMysqlPool } from '@vms/cluster';
import { nanoid } from 'nanoid';
import type { Logger } from 'pino';
import type { ClusterWiring } from '../cluster/cluster-wiring.ts';
import type { SessionDirectory } from '../cluster/device-index.port.ts';
import type { Config } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import type { DeviceSide } from '../sip/device-side.ts';
import { DEFAULT_QUERY_TIMEOUTS } from '../sip/query-timeouts.ts';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';
import { createHookReceiver, type HookReceiver } from './media-hooks.ts';
import { createSqliteMediaNodeRegistry } from './media-node-registry.sqlite.ts';
import { createMediaPlane } from './media-plane.ts';
import type { RoutingWiring } from '../routing/routing-wiring.ts';
import { createMediaProber } from './media-prober.ts';
import { createMediaSessionManager, type MediaSessionManager } from './media-session-manager.ts';
import { createSipMediaSignaling } from './media-signaling.sip.ts';
import { withLocalSsrcFallback } from './ssrc-fallback.ts';
import { createRedisStreamHolders } from './stream-holders.redis.ts';
import { mysqlPoolLimits } from '../config/limits.ts';
import { publishSessionRecovery } from '../metrics/channels.ts';
import { createSessionJournal } from '../recovery/session-journal.ts';
import { createSessionRecovery, type SessionRecovery } from '../recovery/session-recovery.ts';
import { createMemorySessionSnapshots } from '../recovery/session-snapshots.memory.ts';
import { createRedisSessionSnapshots } from '../recovery/session-snapshots.redis.ts';
import { NODE_ONLINE_WINDOW_HEARTBEATS } from '../cluster/cluster-wiring.ts';
import { isTalkStreamId } from './talk-stream.ts';

/** GB/T 28181 gives no INVITE deadline; devices answer in well under a second, NVRs in a few. */
export const INVITE_TIMEOUT_MS = 8000;
export const ZLM_API_TIMEOUT_MS = 5000;
export const NODE_LIST_REFRESH_MS = 10_000;

export interface MediaWiring {
  readonly sessions: MediaSessionManager;
  /** The media node client for snapshots and the like. */
  readonly plane: ReturnType<typeof createMediaPlane>;
  /** Authentication and parsing of a hook (no side effects). */
  readonly hooks: HookHandler;
  /** `POST /vms/webhook/:hook`: run here or forwarded to the stream's holder. */
  readonly receiveHook: HookReceiver;
  /** Session continuity (SPEC §11); null when `vms.recovery.enabled` is false. */
  readonly recovery: SessionRecovery | null;
  close(): Promise<void>;
}

export interface MediaWiringDeps {
  readonly config: Config;
  readonly side: Pick<DeviceSide, 'stack' | 'flows'>;
  readonly events: DeviceEvents;
  readonly directory: SessionDirectory;
  /** Cluster mode: the shared Redis client, the forward client and the node table. Absent: standalone. */
  readonly cluster?: Pick<ClusterWiring, 'redis' | 'forwarder' | 'onlineBaseUrl'>;
  readonly clock: Clock;
  readonly log: Logger;
  readonly inviteTimeoutMs?: number;
  /** Without MySQL: the embedded store the node list is kept in; null/absent = memory (tests). */
  readonly embedded?: EmbeddedDb | null;
  /** The routing engine (SPEC §10): its published table and shadow table drive the node choice. */
  readonly routing?: Pick<RoutingWiring, 'published' | 'shadow'> & Partial<Pick<RoutingWiring, 'health' | 'addKnownDestinations'>>;
  /** OWN-1: the device is owned by this instance (cluster: the ownership recorder). Default: its flow is known here. */
  readonly ownedHere?: (deviceId: string) => boolean;
}

/** Snapshot TTL: a crashed holder's snapshots outlive node online window + give-up, renewed every third. */
export function snapshotTtlMs(config: Config): number {
  const windowMs = config.sip.nodeHeartbeatIntervalSec * 1000 * NODE_ONLINE_WINDOW_HEARTBEATS;
  return Math.max(120_000, Math.round(3 * (windowMs + config.recovery.giveUpSec * 1000)));
}

/** The health policy from `vms.media.probe-after` / `failure-threshold` (suspect at twice probe-after). */
export function mediaHealthPolicy(media: Config['media']): HealthPolicy {
  const probeAfterMs = Math.round(media.probeAfterSec * 1000);
  return { probeAfterMs, staleAfterMs: 2 * probeAfterMs, failureThreshold: media.failureThreshold };
}

export async function openMedia(d: MediaWiringDeps): Promise<MediaWiring> {
  const closers: (() => Promise<void>)[] = [];
  const { config } = d;
  const log = d.log.child({ component: 'media' });
  let registry: MediaNodeRegistry;
  if (config.mysql !== null) {
    const pool = createMysqlPool(config.mysql.url, { connectionLimit: 2, ...mysqlPoolLimits(config.limits) });
    closers.push(() => pool.end());
    registry = createMysqlMediaNodeRegistry(pool); // table from deploy/sql V003, migrated at start
  } else if (d.embedded !== undefined && d.embedded !== null) {
    registry = createSqliteMediaNodeRegistry(d.embedded);
  } else {
    registry = createMemoryMediaNodeRegistry();
  }
  const reg = registry;
  closers.push(() => reg.close());

  const redis = d.cluster?.redis ?? null;
  const local = createMemorySsrcAllocator({ serverId: config.sip.serverId });
  let ssrcs: SsrcAllocator = local;
  if (redis !== null) {
    const shared = createRedisSsrcAllocator({
      client: redis,
      serverId: config.sip.serverId,
      holder: config.sip.instanceId,
      timers: d.clock,
      onLost: (nodeId, lost) => log.warn({ nodeId, ssrcs: lost }, 'SSRCs of running streams were taken by another instance'),
      onRenewError: (err) => log.warn({ err }, 'SSRC renewal failed, retrying next period'),
    });
    ssrcs = withLocalSsrcFallback(shared, local, log);
  }
  const allocator = ssrcs;
  closers.push(() => allocator.close());

  const plane = createMediaPlane({
    registry,
    seed: config.media.nodes,
    ssrcs,
    healthPolicy: mediaHealthPolicy(config.media),
    clock: d.clock,
    log: d.log,
    apiTimeoutMs: ZLM_API_TIMEOUT_MS,
    refreshMs: NODE_LIST_REFRESH_MS,
    routingTable: d.routing?.published,
    shadowTable: d.routing?.shadow.table,
    onShadow: d.routing === undefined ? undefined : (channelId, live, shadow) => d.routing!.shadow.comparator.record(d.clock.now(), 'media', channelId, live, shadow),
    // node health counted in the routing engine's shared state too (Redis in a cluster), where an
    // operator's manual disable of a node holds on every instance (shared-node-health.ts)
    sharedHealth: d.routing?.health,
  });
  // the media nodes are destinations an operator may disable or enable (PUT /vms/routing/health/:id)
  const offKnown = d.routing?.addKnownDestinations?.((id) => plane.node(id) !== undefined);
  if (offKnown !== undefined) closers.push(async () => offKnown());
  closers.push(() => plane.close());
  const closeAll = async (): Promise<void> => {
    for (const c of closers.reverse()) await c().catch((err: unknown) => d.log.warn({ err }, 'error while closing media'));
  };
  try {
    await plane.start();
  } catch (err) {
    await closeAll();
    throw err;
  }
  const prober = createMediaProber({ plane, clock: d.clock, log: d.log, intervalMs: Math.round(config.media.probeIntervalSec * 1000) });
  closers.push(() => prober.close());
  prober.start();
  void prober.probeNow(); // a first look at every node, not awaited: a dead node must not hold the start

  const holders = redis === null ? null : createRedisStreamHolders(redis, config.sip.instanceId);
  // SPEC §11: standalone keeps the same journal in memory (one code path; nothing outlives the process there)
  const snapshots = redis === null ? createMemorySessionSnapshots(d.clock) : createRedisSessionSnapshots(redis);
  const ttlMs = snapshotTtlMs(config);
  const journal = config.recovery.enabled ? createSessionJournal({ store: snapshots, holder: config.sip.instanceId, run: nanoid(), ttlMs, clock: d.clock, log: d.log }) : null;
  if (journal !== null) closers.push(() => journal.close()); // after the sessions' close (closers run in reverse)
  const signaling = createSipMediaSignaling({
    stack: d.side.stack,
    flows: d.side.flows,
    sip: config.sip,
    clock: d.clock,
    inviteTimeoutMs: d.inviteTimeoutMs ?? INVITE_TIMEOUT_MS,
    infoTimeoutMs: DEFAULT_QUERY_TIMEOUTS.requestMs,
    log,
  });
  const sessions = createMediaSessionManager({
    plane,
    signaling,
    directory: d.directory,
    holders,
    journal,
    clock: d.clock,
    log: d.log,
    serverId: config.sip.serverId,
    newId: () => nanoid(),
  });
  const offStatus = d.events.on('mediaStatus', (e) => sessions.onMediaStatus(e));
  const offOffline = d.events.on('offline', (e) => sessions.onDeviceGone(e.deviceId));
  closers.push(async () => {
    offStatus();
    offOffline();
  });
  closers.push(() => sessions.close());
  const reachable = (deviceId: string): boolean => d.side.flows.get(deviceId) !== undefined;
  const recovery =
    journal === null
      ? null
      : createSessionRecovery({
          store: snapshots,
          self: config.sip.instanceId,
          run: journal.run,
          sessions,
          signaling,
          plane,
          holders,
          directory: d.directory,
          ownedHere: d.ownedHere ?? reachable,
          reachable,
          giveUpMs: Math.round(config.recovery.giveUpSec * 1000),
          scanPeriodMs: Math.round(config.sip.nodeHeartbeatIntervalSec * 1000),
          // one recovery: BYE wait + INVITE deadline + media node calls, with room to spare
          lockTtlMs: (d.inviteTimeoutMs ?? INVITE_TIMEOUT_MS) + 2 * ZLM_API_TIMEOUT_MS + 10_000,
          clock: d.clock,
          log: d.log,
          onOutcome: (o) => publishSessionRecovery({ outcome: o.outcome, reason: o.outcome === 'recovered' ? '' : o.reason }),
        });
  if (recovery !== null) {
    // a device registering here may be one whose sessions wait for it
    const offOnline = d.events.on('online', () => recovery.scanSoon());
    closers.push(async () => {
      offOnline();
      await recovery.close();
    });
    recovery.start();
  }
  // A talk's received audio (sip/sip-broadcast.ts) has no viewer until the operator plays it: ZLM must
  // not close it for that; the talk's own end (BYE, stopSendRtp) releases it.
  const hooks = createHookHandler({ lookupNode: (id) => plane.node(id), closeWhenNoReader: (e) => !(e.app === 'rtp' && isTalkStreamId(e.stream)) });
  const receiveHook = createHookReceiver({
    self: config.sip.instanceId,
    hooks,
    sessions,
    forwardSecret: config.sip.nodeForwardSecret,
    holders,
    forwarder: d.cluster?.forwarder ?? null,
    onlineBaseUrl: d.cluster?.onlineBaseUrl ?? (async () => null),
  });
  let closed: Promise<void> | null = null;
  return {
    sessions,
    plane,
    hooks,
    receiveHook,
    recovery,
    close() {
      closed ??= closeAll();
      return closed;
    },
  };
}
