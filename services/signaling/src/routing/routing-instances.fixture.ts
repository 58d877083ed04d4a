// Test fixture: several instances' routing wirings over one real redis-server, each on its own Redis
// connections as separate processes would be (the cross-instance tests of routing and media health).
// Call inside a describe: it adds the suite's before/after hooks (redis-server started, then everything
// opened closed in reverse and the server stopped).
import { after, before } from 'node:test';
import { createRedisClient, waitForRedisReady, type RedisClient } from '@vms/cluster';
import { startRedis, type RedisServer } from '@vms/harness';
import pino from 'pino';
import { loadConfig } from '../config/load.ts';
import { systemClock } from '../core/clock.ts';
import { openRouting, type RoutingWiring } from './routing-wiring.ts';

export interface RoutingInstances {
  /** One more instance's routing wiring, named `name` (its instance id). */
  open(name: string): Promise<RoutingWiring>;
  /** Each instance's command connection, in opening order. */
  readonly clients: readonly RedisClient[];
  /** Closed before the connections, in reverse order, when the suite ends. */
  onClose(close: () => Promise<void>): void;
}

export function routingInstancesOverRedis(): RoutingInstances {
  const log = pino({ level: 'silent' });
  let redis: RedisServer;
  const clients: RedisClient[] = [];
  const closers: (() => Promise<void>)[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of closers.reverse()) await c();
    for (const c of clients) c.disconnect();
    await redis.stop();
  });
  return {
    clients,
    onClose: (close) => void closers.push(close),
    async open(name) {
      const config = loadConfig([], { VMS_GB28181_SIP_INSTANCE_ID: name, REDIS_URL: redis.url });
      const client = createRedisClient(redis.url, { connectionName: `${name}:cmd` });
      clients.push(client);
      await waitForRedisReady(client);
      const routing = await openRouting({ config, redis: client, clock: systemClock, log });
      closers.push(() => routing.close());
      return routing;
    },
  };
}
