// NodeRegistry contract against memory and a real MariaDB, plus what only a real database can show:
// online judged by the database clock (NODE-1), UTC sessions on a server in another time zone,
// and typed errors / recovery when MariaDB dies and comes back (FAIL-4).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import {
  FakeClock,
  NodeRegistryUnavailableError,
  createMemoryNodeRegistry,
  createMysqlNodeRegistry,
  createMysqlPool,
  migrate,
  retryTransient,
} from '@vms/cluster';
import { sleep, startMariaDb, waitFor, type MariaDbServer } from '@vms/harness';
import { nodeInfo, nodeRegistryContract } from './cluster-node-registry.contract.ts';
import { DEPLOY_SQL } from './cluster-paths.ts';

let db: MariaDbServer;
const pools: Pool[] = [];

async function freshPool(): Promise<Pool> {
  const pool = createMysqlPool(await db.createDatabase());
  pools.push(pool);
  await migrate(pool, DEPLOY_SQL);
  return pool;
}

before(async () => {
  // A server in China Standard Time: the registry must still store and read instants correctly.
  db = await startMariaDb({ args: ['--default-time-zone=+08:00'] });
});
after(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  await db.stop();
});

nodeRegistryContract('memory', async () => {
  const clock = new FakeClock(Date.parse('2025-03-01T08:00:00Z'));
  const registry = createMemoryNodeRegistry({ clock });
  return { registry, advance: async (ms) => clock.advance(ms), close: () => registry.close() };
});

nodeRegistryContract('mariadb', async () => {
  const registry = createMysqlNodeRegistry(await freshPool());
  return { registry, advance: sleep, close: () => registry.close() };
});

describe('MySQL NodeRegistry specifics', () => {
  it('online is judged by the database clock, not this process (NODE-1)', async () => {
    const pool = await freshPool();
    const registry = createMysqlNodeRegistry(pool);
    await registry.heartbeat(nodeInfo('signal-node-a'), 3);
    // as if its last heartbeat had been 10 s ago on the database clock
    await pool.query("UPDATE signal_node SET last_heartbeat = NOW(3) - INTERVAL 10 SECOND WHERE node_code = 'signal-node-a'");
    assert.equal((await registry.getNode('signal-node-a', 5000))?.online, false);
    assert.equal((await registry.getNode('signal-node-a', 15_000))?.online, true);
    // a heartbeat stamp in the future (a skewed writer) is online, never "negative age" offline
    await pool.query("UPDATE signal_node SET last_heartbeat = NOW(3) + INTERVAL 1 HOUR WHERE node_code = 'signal-node-a'");
    assert.equal((await registry.getNode('signal-node-a', 5000))?.online, true);
  });

  it('last_heartbeat is the database time, and instants survive a +08:00 server', async () => {
    const pool = await freshPool();
    const registry = createMysqlNodeRegistry(pool);
    const startedAt = new Date('2025-03-01T23:59:59.987Z');
    await registry.heartbeat(nodeInfo('signal-node-a', { startedAt }), 0);
    const [[now]] = await pool.query<RowDataPacket[]>('SELECT NOW(3) AS now, @@session.time_zone AS tz, @@global.time_zone AS gtz');
    assert.deepEqual([now?.tz, now?.gtz], ['+00:00', '+08:00'], 'pool sessions run in UTC on a +08:00 server');
    const row = await registry.getNode('signal-node-a', 10_000);
    assert.equal(row?.startedAt.getTime(), startedAt.getTime());
    assert.ok(Math.abs((row?.lastHeartbeat.getTime() ?? 0) - (now?.now as Date).getTime()) < 2000);
    assert.ok(Math.abs((row?.lastHeartbeat.getTime() ?? 0) - Date.now()) < 5000, 'same instant as the wall clock');
  });

  it('MariaDB killed: typed transient errors, no crash; restarted: same registry works (FAIL-4)', async () => {
    const pool = await freshPool();
    const registry = createMysqlNodeRegistry(pool);
    await registry.heartbeat(nodeInfo('signal-node-a'), 1);
    await db.kill();
    try {
      for (const call of [() => registry.heartbeat(nodeInfo('signal-node-a'), 2), () => registry.listNodes(5000)]) {
        const t0 = performance.now();
        await assert.rejects(call(), (err: NodeRegistryUnavailableError) => err.code === 'CLUSTER_ERR_MYSQL_UNAVAILABLE' && err.transient);
        assert.ok(performance.now() - t0 < 2500, 'fails within the connect timeout');
      }
      // the retry helper gives up with the same typed error
      await assert.rejects(
        retryTransient(() => registry.heartbeat(nodeInfo('signal-node-a'), 2), { attempts: 2, baseDelayMs: 10 }),
        NodeRegistryUnavailableError,
      );
    } finally {
      await db.restart();
    }
    await waitFor(() => registry.heartbeat(nodeInfo('signal-node-a'), 5).then(() => true), { timeoutMs: 10_000 });
    assert.equal((await registry.getNode('signal-node-a', 5000))?.onlineDeviceCount, 5);
  });
});
