// A large version's publish warms the build threads of the other instances too (routing-wiring.ts
// prepareBuild: the warm:<rules> hint on the nudge channel), through a real redis-server, each instance on
// its own connections as two processes would be. A small one's hint starts nothing anywhere.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRedisClient, waitForRedisReady, type RedisClient } from '@vms/cluster';
import { startRedis, waitFor, type RedisServer } from '@vms/harness';
import { KEEP_WARM_RULES, ROUTING_NUDGE_CHANNEL } from '@vms/routing';
import pino from 'pino';
import { loadConfig } from '../config/load.ts';
import { systemClock } from '../core/clock.ts';
import { openRouting, type RoutingWiring } from './routing-wiring.ts';

const log = pino({ level: 'silent' });

describe('build threads warmed across instances while a large version is published', () => {
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

  async function instance(name: string): Promise<RoutingWiring> {
    const config = loadConfig([], { VMS_GB28181_SIP_INSTANCE_ID: name, REDIS_URL: redis.url });
    const client = createRedisClient(redis.url, { connectionName: `${name}:cmd` });
    clients.push(client);
    await waitForRedisReady(client);
    const routing = await openRouting({ config, redis: client, clock: systemClock, log });
    closers.push(() => routing.close());
    return routing;
  }

  it('the publishing instance and the one that hears the hint start and warm their thread; a small table starts none', async () => {
    const a = await instance('a');
    const b = await instance('b');
    // both subscribers' SUBSCRIBE are in
    await waitFor(async () => Number(((await clients[0]!.call('PUBSUB', 'NUMSUB', ROUTING_NUDGE_CHANNEL)) as [string, number])[1]) === 2);
    a.prepareBuild(KEEP_WARM_RULES - 1);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual([a.builder.threads, b.builder.threads], [0, 0], 'a small table: no thread');
    a.prepareBuild(KEEP_WARM_RULES);
    assert.equal(a.builder.threads, 1, 'this instance at once');
    await waitFor(() => b.builder.threads === 1, { timeoutMs: 10_000 });
    const [wa, wb] = await Promise.all([a.builder.warm(), b.builder.warm()]);
    assert.ok(wa !== undefined && wb !== undefined, 'both warmed up');
    assert.ok(a.builder.lastWarm !== undefined && b.builder.lastWarm !== undefined);
  });
});
