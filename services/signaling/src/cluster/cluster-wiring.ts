// Builds the cluster side of one instance from its config (SPEC §3-§5, §7):
//  - REDIS_URL set: ownership in Redis (batched claims), owner routing with forwarding (when a secret
//    is set), session / SN indexes in Redis;
//  - no REDIS_URL: standalone, every device is local and routing never touches a store (ROUTE-8);
//  - MYSQL_URL set: the node table in MySQL, heartbeat at start and every interval, node listing and
//    cascade leader from it; without MySQL the app keeps its standalone node directory.
// Everything opened here is closed by close(), in reverse order.
import type { Shard } from '@vms/routing';
import {
  createForwardClient,
  createMemoryNodeRegistry,
  createMemoryOwnershipStore,
  createMysqlNodeRegistry,
  createMysqlPool,
  createRedisClient,
  createRedisOwnershipStore,
  migrate,
  ownershipTtlMs,
  waitForRedisReady,
  withClaimBatching,
  type ForwardClient,
  type NodeInfo,
  type NodeRegistry,
  type OwnershipStore,
  type RedisClient,
  type NodeRow,
} from '@vms/cluster';
import type { Logger } from 'pino';
import type { Config } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { EdgeRouting, OwnerRoutingHook } from '../http/routing-hooks.types.ts';
import type { NodeDirectory } from '../nodes/node-directory.port.ts';
import type { OwnerDirectory } from '../ownership/owner-directory.port.ts';
import { SQL_DIR } from '../storage/sql-dir.ts';
import { createMemoryDeviceKeyIndex } from './device-index.memory.ts';
import type { SessionDirectory, SnDirectory } from './device-index.port.ts';
import { createRedisDeviceKeyIndex } from './device-index.redis.ts';
import { ChannelMemory } from './channel-memory.ts';
import { createDeviceResolver } from './device-resolver.ts';
import { DeviceTenants } from './device-tenants.ts';
import { forwardReadTimeoutMs } from './forward-timeouts.ts';
import { createClusterNodeDirectory } from './node-directory.cluster.ts';
import { createNodeHeartbeat, type NodeHeartbeat } from './node-heartbeat.ts';
import { NodeTracker, type NodeTableReadResult } from './node-tracker.ts';
import { createEdgeRouting } from './edge-routing.ts';
import { OwnerCache } from './owner-cache.ts';
import { createInboundClassifier, type InboundClassifier } from './inbound-forward.ts';
import { createOwnerRouting } from './owner-routing.ts';
import { createClusterOwnerDirectory } from './owner-directory.cluster.ts';
import { createOwnershipRecorder, type OwnershipRecorder } from './ownership-recorder.ts';
import { mysqlPoolLimits } from '../config/limits.ts';

/** OWN-5: longest a keepalive's ownership renewal waits for company (ownership-recorder.ts renewFlushMs). */
const RENEW_FLUSH_MS = 1000;

/** SPEC NODE-1: a node is online while its last heartbeat is at most this many periods old. */
export const NODE_ONLINE_WINDOW_HEARTBEATS = 3;

export interface ClusterWiringDeps {
  readonly config: Config;
  readonly devices: DeviceRepository;
  readonly clock: Clock;
  readonly log: Logger;
  readonly version: string;
  /** Epoch ms this instance started. */
  readonly startedAt: number;
  /** Every node-table read (the cascade's leadership tracker follows it). */
  readonly onNodeRead?: (read: NodeTableReadResult) => void;
}

export interface ClusterWiring {
  readonly mode: 'standalone' | 'cluster';
  /** What the SIP side calls on device traffic (see ownership-recorder.ts). */
  readonly recorder: OwnershipRecorder;
  /** Play / playback session id → device, for routing by sessionId (the media issue writes it). */
  readonly sessions: SessionDirectory;
  /** Record-query SN → device, for routing by SN (the SIP device control writes it: its `snIndex`). */
  readonly sns: SnDirectory;
  readonly ownerRouting: OwnerRoutingHook;
  /** How a request arrived (direct / forwarded with the right secret / forged), for routing and request logging. */
  readonly inbound: InboundClassifier;
  /** The same routing before fastify for requests decidable from memory (http/edge.ts); null when nothing is forwarded. */
  readonly edgeRouting: EdgeRouting | null;
  /** null without MySQL: the app keeps its standalone node directory. */
  readonly nodes: NodeDirectory | null;
  /** null when standalone: the app keeps its "self owns everything" directory. */
  readonly owners: OwnerDirectory | null;
  /** CASC-1 on the last good node listing (self when there is none). */
  cascadeLeader(): string;
  /** The Redis client (REDIS_URL), shared by the media side (SSRC claims, stream holders); null standalone. */
  readonly redis: RedisClient | null;
  /** The forward client (Redis and a secret configured), also for forwards that are not control requests (media hooks). */
  readonly forwarder: ForwardClient | null;
  /** ROUTE-5 for those forwards: the internal base URL of node `code` while it is online in the node table, else null. */
  onlineBaseUrl(code: string): Promise<string | null>;
  /** Once HTTP is bound: first node heartbeat (awaited), then one every interval. */
  startHeartbeat(internalBaseUrl: () => string): Promise<void>;
  /**
   * Stops the heartbeat and marks this node as left in the node table: the others move the cascade
   * leader and stop forwarding here at their next read, while this instance drains. Idempotent; close()
   * does it too.
   */
  leave(): Promise<void>;
  /** Issue 14: the node table's shards as last read, for device placement; null standalone or before the first read. */
  shards(): readonly Shard[] | null;
  /** Idempotent. */
  close(): Promise<void>;
}

export async function openCluster(d: ClusterWiringDeps): Promise<ClusterWiring> {
  const { config, clock } = d;
  const { sip } = config;
  const log = d.log.child({ component: 'cluster' });
  const closers: (() => Promise<void>)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch (err) {
        log.warn({ err }, 'error while closing cluster resources');
      }
    }
  };

  try {
    const ttlMs = ownershipTtlMs({
      keepaliveIntervalS: sip.keepaliveIntervalSec,
      keepaliveTimeoutCount: sip.keepaliveTimeoutCount,
      offlineScanPeriodS: sip.offlineScanPeriodSec,
    });
    const heartbeatMs = Math.round(sip.nodeHeartbeatIntervalSec * 1000);
    const onlineWindowMs = heartbeatMs * NODE_ONLINE_WINDOW_HEARTBEATS;

    // Ownership store and the indexes: Redis, or in-process when standalone.
    let redis: RedisClient | null = null;
    let store: OwnershipStore;
    let sessions: SessionDirectory;
    let sns: SnDirectory;
    if (config.redis !== null) {
      redis = openRedis(config.redis.url, sip.instanceId, log);
      const client = redis;
      closers.push(async () => {
        await client.quit().catch(() => client.disconnect());
      });
      await waitForRedisReady(client, 2000).catch((err: unknown) => {
        log.warn({ err }, 'redis not reachable at start: routing answers "device offline" for devices of other nodes until it is');
      });
      store = withClaimBatching(createRedisOwnershipStore(client));
      sessions = createRedisDeviceKeyIndex({ client, prefix: 'vms:session:', clock });
      sns = createRedisDeviceKeyIndex({ client, prefix: 'vms:sn:', clock });
    } else {
      store = createMemoryOwnershipStore({ clock });
      sessions = createMemoryDeviceKeyIndex(clock);
      sns = createMemoryDeviceKeyIndex(clock);
    }
    const openStore = store;
    closers.push(() => openStore.close());
    closers.push(() => sessions.close());
    closers.push(() => sns.close());

    // Owner lookups of the routing hook, remembered for at most OWNER_CACHE_TTL_MS; this instance's own
    // ownership changes (claim after a gap, release, moved away) reach it at once.
    const redisClient = redis;
    const ownerCache = new OwnerCache({ clock, ...(redisClient === null ? {} : { available: () => redisClient.status === 'ready' }) });
    // FAIL-3: an outage (or one Redis Cluster node failing) empties it; routing then reads the store,
    // whose failure decides from this instance's own leases as before
    for (const event of ['error', 'close', 'node error']) redisClient?.on(event, () => ownerCache.clear());
    // after an outage: claims may have vanished (an empty restart) and move notices been lost
    let redisWasDown = false;
    redisClient?.on('close', () => {
      redisWasDown = true;
    });
    // issue 11: a keepalive renews its claim once this share of the TTL has passed since the last write
    // (vms.cluster.owner-renew-after: 84 s at the defaults, every other keepalive); every write gives exactly
    // the TTL, so the claim never outlives SPEC's TTL after a write, and a device that stops keeps it at
    // least (1 − share) × TTL after its last message (services/signaling/README.md has the trade-off)
    const renewAfterMs = Math.round(ttlMs * sip.ownerRenewAfterShare);
    const keepaliveMs = Math.round(sip.keepaliveIntervalSec * 1000);
    const recorder = createOwnershipRecorder({
      store,
      instanceId: sip.instanceId,
      ttlMs,
      checkIntervalMs: Math.round(sip.offlineScanPeriodSec * 1000),
      renewAfterMs,
      // a device still keeping alive here has renewed (and so had its owner checked) within renew-after +
      // one keepalive interval; the check pass reads only the others (moves are heard from the notices)
      checkAfterMs: renewAfterMs + keepaliveMs,
      // a keepalive's renewal waits up to a second for the others (issue 11): one script per second
      // (per 500 devices) instead of a round trip per keepalive; a second against the claim's ≥ 126 s
      // of remaining life at the defaults, at most a quarter of it with short test settings
      renewFlushMs: Math.max(1, Math.min(RENEW_FLUSH_MS, Math.floor((ttlMs - renewAfterMs) / 4))),
      clock,
      log: d.log, // it binds its own `component`
      onLocalOwnershipChange: (deviceId) => ownerCache.forget(deviceId),
    });
    closers.push(() => recorder.close());
    redisClient?.on('ready', () => {
      if (!redisWasDown) return;
      redisWasDown = false;
      recorder.storeReconnected();
    });
    recorder.onMoved(({ deviceId, newOwner }) => ownerCache.remember(deviceId, newOwner));

    // Node table: MySQL, or (Redis without MySQL) this node alone.
    let registry: NodeRegistry | null = null;
    if (config.mysql !== null) {
      const pool = createMysqlPool(config.mysql.url, { connectionLimit: 2, ...mysqlPoolLimits(config.limits) });
      closers.push(() => pool.end());
      await migrate(pool, SQL_DIR); // idempotent; the device store normally applied it already
      registry = createMysqlNodeRegistry(pool);
    } else if (config.redis !== null) {
      log.warn('redis is configured without mysql: the node table is local, so devices of other nodes cannot be forwarded to');
      registry = createMemoryNodeRegistry({ clock });
    }
    const tracker =
      registry === null
        ? null
        : new NodeTracker({
            registry,
            selfCode: sip.instanceId,
            onlineWindowMs,
            clock,
            onLeaderChange: (leader, previous) => log.info({ leader, previous }, 'cascade leader'),
            ...(d.onNodeRead === undefined ? {} : { onRead: d.onNodeRead }),
          });
    if (registry !== null) {
      const r = registry;
      closers.push(() => r.close());
    }
    if (tracker !== null) {
      const t = tracker;
      closers.push(async () => t.close());
    }

    let forwarder: ForwardClient | null = null;
    if (config.redis !== null && sip.nodeForwardSecret !== null) {
      forwarder = createForwardClient({ originNode: sip.instanceId, secret: sip.nodeForwardSecret });
      const f = forwarder;
      closers.push(() => f.close());
    }

    const channelMemory = new ChannelMemory({ clock });
    const inbound = createInboundClassifier(sip.nodeForwardSecret);
    const tenants = new DeviceTenants({ devices: d.devices, clock });
    const ownerRouting = createOwnerRouting({
      instanceId: sip.instanceId,
      secret: sip.nodeForwardSecret,
      inbound,
      owners: config.redis === null ? null : store,
      recorder,
      resolver: createDeviceResolver({ devices: d.devices, sessions, sns, channelMemory }),
      tenants,
      nodes: tracker,
      forwarder,
      readTimeoutMs: forwardReadTimeoutMs,
      ownerCache: config.redis === null ? null : ownerCache,
    });

    // Only where forwards can happen: Redis (owners, the owner cache), the node table, a secret.
    const edgeRouting =
      config.redis === null || tracker === null || forwarder === null
        ? null
        : createEdgeRouting({ instanceId: sip.instanceId, ownerCache, channelMemory, tenants, nodes: tracker, recorder, forwarder, readTimeoutMs: forwardReadTimeoutMs });

    let heartbeat: NodeHeartbeat | null = null;
    let closed: Promise<void> | null = null;
    return {
      mode: config.redis === null ? 'standalone' : 'cluster',
      recorder,
      sessions,
      sns,
      ownerRouting,
      inbound,
      edgeRouting,
      nodes: tracker === null || registry === null ? null : createClusterNodeDirectory(tracker, registry, { drainRate: config.placement.drainRate }),
      owners: config.redis === null ? null : createClusterOwnerDirectory(store, recorder, sip.instanceId),
      cascadeLeader: () => tracker?.cascadeLeader ?? sip.instanceId,
      shards: () => {
        const rows = tracker?.snapshot?.rows;
        return rows === undefined ? null : rows.map(shardOf);
      },
      redis,
      forwarder,
      async onlineBaseUrl(code) {
        const state = tracker === null ? null : await tracker.stateOf(code);
        return state?.kind === 'online' ? state.baseUrl : null;
      },
      async startHeartbeat(internalBaseUrl) {
        if (registry === null || tracker === null || heartbeat !== null || closed !== null) return;
        const self = (): NodeInfo => ({
          code: sip.instanceId,
          sipHost: sip.host,
          sipPort: sip.port,
          internalBaseUrl: internalBaseUrl(),
          cascadeNode: sip.cascadeNode,
          startedAt: new Date(d.startedAt),
          version: d.version,
          placementGroup: config.placement.group,
        });
        heartbeat = createNodeHeartbeat({
          registry,
          tracker,
          self,
          // NODE-2: in a cluster the devices this node holds; alone, every online device is ours
          onlineDeviceCount: config.redis === null ? () => d.devices.countOnlineDevices() : () => recorder.localCount(),
          intervalMs: heartbeatMs,
          clock,
          log: d.log,
          forwardSecretConfigured: sip.nodeForwardSecret !== null,
        });
        const hb = heartbeat;
        closers.push(() => hb.close());
        await hb.start();
      },
      async leave() {
        await heartbeat?.close();
      },
      close() {
        closed ??= closeAll();
        return closed;
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/** The Redis client, with connection trouble logged once per outage (FAIL-3 heals by itself). */
function openRedis(url: string, instanceId: string, log: Logger): RedisClient {
  let failing = false;
  const client = createRedisClient(url, {
    connectionName: `vms-signaling:${instanceId}`,
    onConnectionError: (err) => {
      if (failing) return;
      failing = true;
      log.warn({ err }, 'redis connection lost, reconnecting in the background');
    },
  });
  // A restart fast enough for the first reconnect to succeed raises no 'error': the outage is known by the
  // reconnect itself, so the restore is logged whatever way the connection went away.
  client.on('reconnecting', () => {
    if (failing) return;
    failing = true;
    log.warn('redis connection lost, reconnecting in the background');
  });
  client.on('ready', () => {
    if (!failing) return;
    failing = false;
    log.info('redis connection restored');
  });
  return client;
}

/** A node-table row as a placement shard (issue 14). */
function shardOf(r: NodeRow): Shard {
  return { code: r.code, sipHost: r.sipHost, sipPort: r.sipPort, group: r.placementGroup, online: r.online, draining: r.draining, drainedShare: r.drainedShare, joinedShare: r.joinedShare, joinFrom: r.joinFrom };
}
