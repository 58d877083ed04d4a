/**
 * A local Redis Cluster of N masters (no replicas) built from Debian's redis-server: every node in
 * cluster mode with its own bus port (`cluster-port`, so port+10000 need not be free), joined with
 * `redis-cli --cluster create … --cluster-yes`, ready once every node reports `cluster_state:ok`.
 */
import { Redis } from 'ioredis';
import { requireBinary } from './binaries.ts';
import { spawnManaged, tail } from './child.ts';
import { freePort } from './ports.ts';
import { HOST, startRedis, type RedisServer } from './redis.ts';
import { waitFor } from './wait.ts';

export interface StartRedisClusterOptions {
  /** Number of masters; Redis Cluster needs at least 3. Default 3. */
  masters?: number;
  /** `cluster-node-timeout` in ms. Default 5000. */
  nodeTimeoutMs?: number;
  readyTimeoutMs?: number;
}

export interface RedisClusterHandle {
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  /** One handle per node: kill / pause / restart a single node for failure tests. */
  readonly servers: readonly RedisServer[];
  /** `redis://127.0.0.1:PORT` per node. */
  readonly urls: readonly string[];
  /** SPEC §12 form: `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,…` */
  readonly url: string;
  /** Resolves when every running node reports cluster_state:ok again (e.g. after a node restart). */
  waitUntilOk(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisCluster(opts: StartRedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const masters = opts.masters ?? 3;
  if (masters < 3) throw new Error('startRedisCluster: Redis Cluster needs at least 3 masters');
  const cli = requireBinary('redis-tools', 'redis-cli');
  const nodeTimeout = String(opts.nodeTimeoutMs ?? 5000);
  const servers: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    const started = await Promise.all(
      Array.from({ length: masters }, (_, i) =>
        startRedis({
          name: `redis-cluster-${i}`,
          args: async () => [
            '--cluster-enabled', 'yes',
            '--cluster-config-file', 'nodes.conf',
            '--cluster-node-timeout', nodeTimeout,
            '--cluster-port', String(await freePort()),
          ],
        }),
      ),
    );
    servers.push(...started);
    const addrs = servers.map((s) => `${HOST}:${s.port}`);
    const create = spawnManaged(cli, ['--cluster', 'create', ...addrs, '--cluster-replicas', '0', '--cluster-yes'], {
      name: 'redis-cli --cluster create',
    });
    const timer = setTimeout(() => create.signal('SIGKILL'), 30_000);
    const exit = await create.exited;
    clearTimeout(timer);
    if (exit.code !== 0) throw new Error(`redis-cli --cluster create failed (${exit.code ?? exit.signal})\n${tail(create.output())}`);

    const handle: RedisClusterHandle = {
      nodes: servers.map((s) => ({ host: HOST, port: s.port })),
      servers,
      urls: servers.map((s) => s.url),
      url: `redis+cluster://${addrs.join(',')}`,
      waitUntilOk: (timeoutMs = 15_000) => waitClusterOk(servers, timeoutMs),
      stop,
    };
    await handle.waitUntilOk(opts.readyTimeoutMs ?? 15_000);
    return handle;
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitClusterOk(servers: readonly RedisServer[], timeoutMs: number): Promise<void> {
  const running = servers.filter((s) => s.isRunning());
  const clients = running.map((s) => new Redis({ host: HOST, port: s.port, lazyConnect: true, maxRetriesPerRequest: 0 }));
  try {
    await waitFor(
      async () => {
        const infos = await Promise.all(clients.map((c) => c.cluster('INFO')));
        // Every node must agree the cluster is whole, or ioredis may fetch a partial slot map.
        return infos.every(
          (info) =>
            info.includes('cluster_state:ok') &&
            info.includes('cluster_slots_assigned:16384') &&
            info.includes(`cluster_known_nodes:${servers.length}`),
        );
      },
      { timeoutMs, intervalMs: 50, description: 'redis cluster_state:ok on every node' },
    );
  } finally {
    clients.forEach((c) => c.disconnect());
  }
}
