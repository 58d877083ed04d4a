// PlatformRepository contract against memory and a real MariaDB migrated with the repository's
// deploy/sql (V004__upstream_platform.sql), plus what only the database can show.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { createMemoryPlatformRepository, createMysqlPlatformRepository, type CascadeError } from '@vms/cascade';
import { createMysqlPool, migrate } from '@vms/cluster';
import { startMariaDb, type MariaDbServer } from '@vms/harness';
import { DEPLOY_SQL } from './cluster-paths.ts';
import { UP1, platform, platformRepositoryContract } from './cascade-platform-repository.contract.ts';

let db: MariaDbServer;
const pools: Pool[] = [];

async function freshPool(migrated = true): Promise<Pool> {
  const pool = createMysqlPool(await db.createDatabase());
  pools.push(pool);
  if (migrated) await migrate(pool, DEPLOY_SQL);
  return pool;
}

before(async () => {
  db = await startMariaDb();
});
after(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  await db.stop();
});

platformRepositoryContract('memory', async () => {
  const repo = createMemoryPlatformRepository();
  return { repo, close: () => repo.close() };
});

platformRepositoryContract('mariadb', async () => {
  const repo = createMysqlPlatformRepository(await freshPool());
  return { repo, close: () => repo.close() };
});

describe('MySQL PlatformRepository specifics', () => {
  it('V004 applies after V001-V003 and stores transport/charset as the enums the console reads', async () => {
    const pool = await freshPool();
    const repo = createMysqlPlatformRepository(pool);
    await repo.upsert(platform(UP1, { transport: 'tcp', charset: 'UTF-8' }));
    const [rows] = await pool.query<RowDataPacket[]>('SELECT transport, charset, enabled FROM upstream_platform');
    assert.deepEqual(rows.map((r) => ({ ...r })), [{ transport: 'TCP', charset: 'UTF-8', enabled: 1 }]);
    const [versions] = await pool.query<RowDataPacket[]>('SELECT version FROM schema_version ORDER BY version');
    assert.ok(versions.some((v) => v.version === 4));
  });

  it('a missing table is a query error, not a transient one', async () => {
    const repo = createMysqlPlatformRepository(await freshPool(false));
    await assert.rejects(repo.listEnabled(), (e: CascadeError) => e.code === 'CASCADE_ERR_STORE_QUERY' && !e.transient);
  });
});
