// MediaNodeRegistry contract against memory and a real MariaDB migrated with the repository's
// deploy/sql (V003__media_node.sql), plus what only the database can show: typed errors when
// MariaDB is down, and a working registry once it is back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool } from 'mysql2/promise';
import { createMysqlPool, migrate } from '@vms/cluster';
import { createMemoryMediaNodeRegistry, createMysqlMediaNodeRegistry, type MediaError } from '@vms/media';
import { startMariaDb, waitFor, type MariaDbServer } from '@vms/harness';
import { DEPLOY_SQL } from './cluster-paths.ts';
import { mediaNode, mediaNodeRegistryContract } from './media-node-registry.contract.ts';

let db: MariaDbServer;
const pools: Pool[] = [];

async function freshPool(): Promise<Pool> {
  const pool = createMysqlPool(await db.createDatabase());
  pools.push(pool);
  await migrate(pool, DEPLOY_SQL);
  return pool;
}

before(async () => {
  db = await startMariaDb();
});
after(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  await db.stop();
});

mediaNodeRegistryContract('memory', async () => {
  const registry = createMemoryMediaNodeRegistry();
  return { registry, close: () => registry.close() };
});

mediaNodeRegistryContract('mariadb', async () => {
  const registry = createMysqlMediaNodeRegistry(await freshPool());
  return { registry, close: () => registry.close() };
});

describe('MySQL MediaNodeRegistry specifics', () => {
  it('a missing table is a query error, not a transient one', async () => {
    const pool = createMysqlPool(await db.createDatabase());
    pools.push(pool);
    await assert.rejects(createMysqlMediaNodeRegistry(pool).listAll(), (e: MediaError) => e.code === 'MEDIA_ERR_STORE_QUERY' && !e.transient);
  });

  it('MariaDB killed: MEDIA_ERR_STORE_UNAVAILABLE (transient); restarted: the same registry works', async () => {
    const registry = createMysqlMediaNodeRegistry(await freshPool());
    await registry.upsert(mediaNode('zlm-a'));
    await db.kill();
    try {
      await assert.rejects(registry.listEnabled(), (e: MediaError) => e.code === 'MEDIA_ERR_STORE_UNAVAILABLE' && e.transient);
    } finally {
      await db.restart();
    }
    const back = await waitFor(() => registry.listEnabled(), { timeoutMs: 10_000 });
    assert.deepEqual(back.map((n) => n.id), ['zlm-a']);
  });
});
