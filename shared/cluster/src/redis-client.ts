/**
 * Builds the ioredis client every Redis adapter uses, tuned for SPEC FAIL-3: commands fail fast
 * while Redis is unreachable (no offline queue, no per-request retries, a short command timeout for
 * a hung server) and the client keeps reconnecting in the background, so the same store object
 * heals by itself when Redis returns. Auto-pipelining coalesces commands issued in one event-loop
 * tick (OWN-5) and, in cluster mode, groups them per node.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { endSlotRefreshOnClose } from './cluster-slot-refresh.ts';
import { OwnershipUnavailableError } from './errors.ts';
import { parseRedisUrl } from './redis-url.ts';
import { instrumentRedisClient } from './store-diagnostics.ts';

export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** A command without a reply after this long fails (hung or paused server). Default 500 ms. */
  commandTimeoutMs?: number;
  /** TCP connect timeout. Default 1000 ms. */
  connectTimeoutMs?: number;
  /** Reconnect back-off ceiling. Default 1000 ms: heal within a second of Redis returning. */
  maxReconnectDelayMs?: number;
  /** Connection-level errors (reconnect attempts). They also surface as typed command errors. */
  onConnectionError?: (err: Error) => void;
  /** Name shown in CLIENT LIST. */
  connectionName?: string;
}

export function createRedisClient(url: string, opts: RedisClientOptions = {}): RedisClient {
  const target = parseRedisUrl(url);
  const maxDelay = opts.maxReconnectDelayMs ?? 1000;
  const retry = (times: number): number => Math.min(50 * 2 ** Math.min(times, 10), maxDelay);
  // Per-connection settings, shared by the single client and every cluster node connection.
  const connection: RedisOptions = {
    username: target.username,
    password: target.password,
    tls: target.tls ? {} : undefined,
    connectionName: opts.connectionName,
    connectTimeout: opts.connectTimeoutMs ?? 1000,
    commandTimeout: opts.commandTimeoutMs ?? 500,
    maxRetriesPerRequest: 0,
  };
  let client: RedisClient;
  if (target.mode === 'single') {
    client = new Redis({
      ...connection,
      host: target.endpoint.host,
      port: target.endpoint.port,
      db: target.db,
      enableOfflineQueue: false, // FAIL-3: reject at once while disconnected, never queue blindly
      enableAutoPipelining: true,
      retryStrategy: retry,
    });
  } else {
    client = new Cluster(target.nodes, {
      redisOptions: connection,
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      clusterRetryStrategy: retry,
      // ioredis drops a node whose connection ends and only re-adds it on a slot refresh, which
      // never comes when the node restarts with the same slots: reconnect nodes in place instead.
      clusterNodeRetryStrategy: retry,
      // FAIL-3: a command for a master that is down fails at once instead of being retried on a
      // timer (ioredis default 100 ms × maxRedirections); the next heartbeat is the retry. Slot-map
      // changes (failover, resharding) are then learned from MOVED replies and a periodic refresh.
      retryDelayOnFailover: 0,
      slotsRefreshInterval: 2000,
      slotsRefreshTimeout: opts.connectTimeoutMs ?? 1000,
      // A command's own MOVED/ASK hops are cheap; more than a few means the cluster is reshaping.
      maxRedirections: 4,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
    });
    endSlotRefreshOnClose(client);
  }
  client.on('error', (err: Error) => opts.onConnectionError?.(err));
  instrumentRedisClient(client); // vms.store.command events (store-diagnostics.ts)
  return client;
}

/**
 * Resolves once the client is connected (cluster: slot map loaded). With the offline queue off,
 * commands issued before that fail fast, which is right at run time but noisy at start-up.
 */
export function waitForRedisReady(client: RedisClient, timeoutMs = 5000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new OwnershipUnavailableError(`Redis not ready within ${timeoutMs} ms (status ${client.status})`));
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

/**
 * A second connection for SUBSCRIBE, with the client's settings except: an offline queue kept across
 * reconnect attempts (SUBSCRIBE waits for the connection instead of failing at once while it is not up
 * yet — with the command client's queue off, a subscribe sent right after creating it is refused), the
 * channels subscribed again after every reconnect, and no command timeout (a subscribed connection is
 * silent between messages).
 */
export function subscriberConnection(client: RedisClient, connectionName: string): Redis | Cluster {
  if (client.isCluster) {
    const cluster = client as Cluster;
    const subscriber = cluster.duplicate([], {
      enableOfflineQueue: true,
      redisOptions: { ...cluster.options.redisOptions, commandTimeout: undefined, maxRetriesPerRequest: null, connectionName },
    });
    endSlotRefreshOnClose(subscriber);
    return subscriber;
  }
  return (client as Redis).duplicate({
    enableOfflineQueue: true,
    commandTimeout: undefined,
    maxRetriesPerRequest: null,
    autoResubscribe: true,
    connectionName,
  });
}
