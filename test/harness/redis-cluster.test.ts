import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, type RedisClusterHandle } from './index.ts';

describe('startRedisCluster', () => {
  let cluster: RedisClusterHandle;
  before(async () => {
    cluster = await startRedisCluster({ masters: 3 });
  });
  after(async () => {
    await cluster.stop();
  });

  it('reports cluster_state:ok on every node with all slots covered', async () => {
    assert.equal(cluster.nodes.length, 3);
    assert.match(cluster.url, /^redis\+cluster:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    for (const node of cluster.nodes) {
      const c = new Redis(node.port, node.host);
      try {
        const info = await c.cluster('INFO');
        assert.match(info, /cluster_state:ok/);
        assert.match(info, /cluster_slots_assigned:16384/);
      } finally {
        c.disconnect();
      }
    }
  });

  it('round-trips keys that live on different masters through ioredis Cluster', async () => {
    const c = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })));
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `k:${i}`);
      for (const k of keys) await c.set(k, `v-${k}`);
      for (const k of keys) assert.equal(await c.get(k), `v-${k}`);
      const masters = c.nodes('master');
      assert.equal(masters.length, 3);
      const sizes = await Promise.all(masters.map((m) => m.dbsize()));
      assert.ok(sizes.every((s) => s > 0), `keys spread over all masters: ${sizes.join(',')}`);
    } finally {
      c.disconnect();
    }
  });
});
