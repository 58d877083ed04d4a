// SPEC FAIL-3: with Redis down or hung, ownership calls fail fast with a typed error; when Redis
// returns, the same store object works again (the client reconnects by itself).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  OwnershipUnavailableError,
  createRedisClient,
  createRedisOwnershipStore,
  waitForRedisReady,
  withClaimBatching,
  type OwnershipStore,
  type RedisClient,
} from '@vms/cluster';
import { startRedis, startRedisCluster, timed, waitFor, type RedisClusterHandle, type RedisServer } from '@vms/harness';

const isUnavailable = (err: unknown): boolean =>
  err instanceof OwnershipUnavailableError && err.code === 'CLUSTER_ERR_REDIS_UNAVAILABLE';

describe('ownership with a single Redis going away (FAIL-3)', () => {
  let redis: RedisServer;
  let client: RedisClient;
  let store: OwnershipStore;
  before(async () => {
    redis = await startRedis();
    client = createRedisClient(redis.url, { commandTimeoutMs: 300 });
    await waitForRedisReady(client);
    store = createRedisOwnershipStore(client, { keyPrefix: 'vms:fail:' });
  });
  after(async () => {
    client.disconnect();
    await redis.stop();
  });

  it('killed: every verb fails with a typed error in < 300 ms; restarted: the same store heals', async () => {
    await store.claim('d1', 'node-a', 60_000);
    await redis.kill();
    for (const call of <Array<() => Promise<unknown>>>[
      () => store.claim('d1', 'node-a', 60_000),
      () => store.claimMany([{ deviceId: 'd2', ttlMs: 60_000 }], 'node-a'),
      () => store.ownerOf('d1'),
      () => store.ownersOf(['d1', 'd2']),
      () => store.releaseIfOwner('d1', 'node-a'),
    ]) {
      const { ms, error } = await timed(call());
      assert.ok(isUnavailable(error), `typed error, got ${String(error)}`);
      assert.ok(ms < 300, `failed fast: ${ms.toFixed(0)} ms`);
    }
    await redis.restart();
    // OWN-1: ownership is rebuilt by the next heartbeat after a Redis restart
    await waitFor(() => store.claim('d1', 'node-a', 60_000).then(() => true), { timeoutMs: 5000 });
    assert.equal(await store.ownerOf('d1'), 'node-a');
  });

  it('hung (SIGSTOP): calls fail after the command timeout, not forever; resumed: works', async () => {
    redis.pause();
    await redis.paused();
    try {
      const { ms, error } = await timed(store.ownerOf('d1'));
      assert.ok(isUnavailable(error), `typed error, got ${String(error)}`);
      assert.ok(ms >= 250 && ms < 1000, `bounded by commandTimeout: ${ms.toFixed(0)} ms`);
    } finally {
      redis.resume();
    }
    assert.equal(await waitFor(() => store.ownerOf('d1'), { timeoutMs: 5000 }), 'node-a');
  });

  it('batched claims during an outage reject typed instead of hanging', async () => {
    const batched = withClaimBatching(store);
    await redis.kill();
    try {
      const { ms, error } = await timed(batched.claim('d3', 'node-a', 60_000));
      assert.ok(isUnavailable(error), `typed error, got ${String(error)}`);
      assert.ok(ms < 300, `failed fast: ${ms.toFixed(0)} ms`);
    } finally {
      await redis.restart();
    }
    await waitFor(() => batched.claim('d3', 'node-a', 60_000).then(() => true), { timeoutMs: 5000 });
  });

  it('a store created while Redis is down starts working when Redis comes up', async () => {
    await redis.kill();
    const late = createRedisClient(redis.url);
    try {
      const lateStore = createRedisOwnershipStore(late, { keyPrefix: 'vms:late:' });
      const { error } = await timed(lateStore.ownerOf('d1'));
      assert.ok(isUnavailable(error));
      await redis.restart();
      await waitFor(() => lateStore.claim('d9', 'node-b', 60_000).then(() => true), { timeoutMs: 5000 });
      assert.equal(await lateStore.ownerOf('d9'), 'node-b');
    } finally {
      late.disconnect();
    }
  });
});

describe('ownership on a Redis Cluster losing one master (FAIL-3)', () => {
  let cluster: RedisClusterHandle;
  let client: RedisClient;
  let store: OwnershipStore;
  before(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    client = createRedisClient(cluster.url, { commandTimeoutMs: 300 });
    await waitForRedisReady(client);
    store = createRedisOwnershipStore(client, { keyPrefix: 'vms:cfail:' });
  });
  after(async () => {
    client.disconnect();
    await cluster.stop();
  });

  it('keys on the dead master fail typed and bounded, then heal after it restarts', async () => {
    const ids = Array.from({ length: 60 }, (_, i) => `dev-${i}`);
    await store.claimMany(
      ids.map((deviceId) => ({ deviceId, ttlMs: 60_000 })),
      'node-a',
    );
    const victim = cluster.servers[0] as RedisServer;
    await victim.kill();
    const results = await Promise.all(ids.map((id) => timed(store.ownerOf(id))));
    const failed = results.filter((r) => r.error !== undefined);
    assert.ok(failed.length > 0 && failed.length < ids.length, `some keys lived on the dead master: ${failed.length}`);
    for (const r of failed) assert.ok(isUnavailable(r.error), `typed error, got ${String(r.error)}: ${String((r.error as Error).cause)}`);
    const slowest = Math.max(...results.map((r) => r.ms));
    console.log(`cluster master down: ${failed.length}/${ids.length} keys failed, slowest answer ${slowest.toFixed(0)} ms`);
    // typically < 50 ms; ioredis' default failover retry loop takes ~550 ms, the bound sits between
    assert.ok(slowest < 450, `failed fast: ${slowest.toFixed(0)} ms`);
    // once the client has seen the node go, later calls for its keys fail at once
    const again = await Promise.all(ids.map((id) => timed(store.ownerOf(id))));
    const slowestAgain = Math.max(...again.map((r) => r.ms));
    console.log(`cluster master still down: slowest answer ${slowestAgain.toFixed(0)} ms`);
    assert.ok(slowestAgain < 450, `fail fast: ${slowestAgain.toFixed(0)} ms`);

    await victim.restart(); // nodes.conf kept: it rejoins with its slots (data gone: no persistence)
    await cluster.waitUntilOk();
    await waitFor(
      () => store.claimMany(ids.map((deviceId) => ({ deviceId, ttlMs: 60_000 })), 'node-a').then(() => true),
      { timeoutMs: 10_000 },
    );
    assert.equal((await store.ownersOf(ids)).size, ids.length);
  });
});
