// SsrcAllocator contract against the in-memory adapter, one real redis-server and a real 3-master
// Redis Cluster; then what only a shared store gives: two instances allocating on the same media node
// concurrently never collide, only the holder releases, the entries of a crashed instance expire,
// a running stream's entries are renewed (and re-claimed after Redis lost its data), and an
// unreachable Redis is MEDIA_ERR_STORE_UNAVAILABLE.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createRedisClient, waitForRedisReady, type RedisClient } from '@vms/cluster';
import { createMemorySsrcAllocator, createRedisSsrcAllocator, type MediaError, type RedisSsrcAllocatorOptions, type SsrcAllocator } from '@vms/media';
import { sleep, startRedis, startRedisCluster, waitFor, type RedisClusterHandle, type RedisServer } from '@vms/harness';
import { SERVER_ID, ssrcAllocatorContract } from './media-ssrc-allocator.contract.ts';

let redis: RedisServer;
let cluster: RedisClusterHandle;
const clients: RedisClient[] = [];
const allocators: SsrcAllocator[] = [];

async function client(url: string): Promise<RedisClient> {
  const c = createRedisClient(url);
  clients.push(c);
  await waitForRedisReady(c);
  return c;
}

function allocator(c: RedisClient, o: Partial<RedisSsrcAllocatorOptions> & { keyPrefix: string; holder: string }): SsrcAllocator {
  const a = createRedisSsrcAllocator({ client: c, serverId: SERVER_ID, ...o });
  allocators.push(a);
  return a;
}

before(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startRedisCluster({ masters: 3 })]);
});
after(async () => {
  await Promise.all(allocators.map((a) => a.close()));
  clients.forEach((c) => c.disconnect());
  await Promise.all([redis?.stop(), cluster?.stop()]);
});

ssrcAllocatorContract('memory', async () => createMemorySsrcAllocator({ serverId: SERVER_ID }));
ssrcAllocatorContract('redis', async (keyPrefix) => allocator(await client(redis.url), { keyPrefix, holder: 'node-a' }));
ssrcAllocatorContract('redis cluster', async (keyPrefix) => allocator(await client(cluster.url), { keyPrefix, holder: 'node-a' }));

const prefix = (): string => `vms:test:${randomBytes(4).toString('hex')}:`;

describe('SSRCs shared by instances on one media node (redis)', () => {
  it('two instances allocating concurrently on the same node never hand out the same SSRC; each sees both', async () => {
    const keyPrefix = prefix();
    // separate connections, as two processes would have
    const a = allocator(await client(redis.url), { keyPrefix, holder: 'node-a' });
    const b = allocator(await client(redis.url), { keyPrefix, holder: 'node-b' });
    const calls: Promise<string>[] = [];
    for (let i = 0; i < 400; i++) {
      calls.push(a.allocate('zlm-1', i % 3 === 0 ? 'playback' : 'live'), b.allocate('zlm-1', i % 3 === 0 ? 'playback' : 'live'));
    }
    const got = await Promise.all(calls);
    assert.equal(new Set(got).size, 800, 'no SSRC given to both instances');
    assert.deepEqual([await a.inUse('zlm-1'), await b.inUse('zlm-1')], [800, 800]);
    // the in-memory adapter, one per instance, is exactly what collides
    const [m1, m2] = [createMemorySsrcAllocator({ serverId: SERVER_ID }), createMemorySsrcAllocator({ serverId: SERVER_ID })];
    assert.equal(await m1.allocate('zlm-1', 'live'), await m2.allocate('zlm-1', 'live'));
  });

  it('only the holder releases: another instance cannot free an SSRC in use', async () => {
    const keyPrefix = prefix();
    const a = allocator(await client(redis.url), { keyPrefix, holder: 'node-a' });
    const b = allocator(await client(redis.url), { keyPrefix, holder: 'node-b' });
    const s = await a.allocate('zlm-1', 'live');
    assert.equal(await b.release('zlm-1', s), false);
    assert.equal(await b.reserve('zlm-1', s), false, 'still in use');
    assert.equal(await a.release('zlm-1', s), true);
    assert.equal(await b.reserve('zlm-1', s), true, 'free once its holder released it');
  });

  it('entries of a crashed instance expire after the TTL; a running instance renews its own', async () => {
    const keyPrefix = prefix();
    const c = await client(redis.url);
    const crashed = allocator(c, { keyPrefix, holder: 'node-a', ttlMs: 1000, renewEveryMs: 60_000 });
    const running = allocator(c, { keyPrefix, holder: 'node-b', ttlMs: 1000, renewEveryMs: 250 });
    const observer = allocator(c, { keyPrefix, holder: 'node-c' });
    const leaked = await crashed.allocate('zlm-1', 'live');
    await crashed.close(); // gone without releasing
    const kept = await running.allocate('zlm-1', 'live');
    await sleep(1600);
    assert.equal(await observer.inUse('zlm-1'), 1, 'the leaked entry expired, the renewed one did not');
    assert.equal(await observer.reserve('zlm-1', leaked), true, 'the leaked SSRC is free again');
    assert.equal(await observer.reserve('zlm-1', kept), false);
  });

  it('after Redis lost its data, the holder re-claims its running streams’ SSRCs at the next renewal', async () => {
    const keyPrefix = prefix();
    const c = await client(redis.url);
    const a = allocator(c, { keyPrefix, holder: 'node-a', ttlMs: 3000, renewEveryMs: 200 });
    const s = await a.allocate('zlm-1', 'live');
    await c.del(`${keyPrefix}{zlm-1}:used`, `${keyPrefix}{zlm-1}:owner`, `${keyPrefix}{zlm-1}:cursor`);
    const other = allocator(c, { keyPrefix, holder: 'node-b' });
    await waitFor(async () => (await other.inUse('zlm-1')) === 1, { timeoutMs: 3000, description: 're-claimed' });
    assert.equal(await other.reserve('zlm-1', s), false);
  });

  it('adopt (SPEC §11 RECOVER): takes over the SSRC of the crashed holder named, never one a third holder has; then renews and releases it as its own', async () => {
    const keyPrefix = prefix();
    const c = await client(redis.url);
    const dead = allocator(c, { keyPrefix, holder: 'node-a' });
    const s = await dead.allocate('zlm-1', 'live');
    const third = allocator(c, { keyPrefix, holder: 'node-c' });
    const kept = await third.allocate('zlm-1', 'live');
    const b = allocator(c, { keyPrefix, holder: 'node-b', ttlMs: 1500, renewEveryMs: 200 });
    assert.equal(await b.adopt('zlm-1', kept, 'node-a'), false, "node-c's SSRC stays node-c's");
    assert.equal(await b.adopt('zlm-1', s, 'node-a'), true);
    assert.equal(await b.adopt('zlm-1', s, 'node-a'), true, 'idempotent');
    assert.equal(await dead.release('zlm-1', s), false, 'the old holder no longer holds it');
    await sleep(2000); // beyond b's TTL: only its renewal keeps it
    assert.equal(await third.reserve('zlm-1', s), false, 'renewed by its new holder');
    assert.equal(await b.release('zlm-1', s), true);
    assert.equal(await third.reserve('zlm-1', s), true);
  });

  it('Redis unreachable: MEDIA_ERR_STORE_UNAVAILABLE (transient), and it heals when Redis is back', async () => {
    const keyPrefix = prefix();
    const a = allocator(await client(redis.url), { keyPrefix, holder: 'node-a' });
    await redis.kill();
    try {
      await assert.rejects(a.allocate('zlm-1', 'live'), (e: MediaError) => e.code === 'MEDIA_ERR_STORE_UNAVAILABLE' && e.transient);
    } finally {
      await redis.restart();
    }
    const s = await waitFor(async () => a.allocate('zlm-1', 'live').catch(() => null), { timeoutMs: 5000, description: 'allocation after restart' });
    assert.match(s, /^0200000\d{3}$/);
  });
});
