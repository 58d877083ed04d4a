// PlatformRepository contract against memory and a real MariaDB migrated with the repository's
// deploy/sql (V004__upstream_platform.sql), plus what only the database can show.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { createMemoryPlatformRepository, createMysqlPlatformRepository, type CascadeError, type SharedChannel } from '@vms/cascade';
import { createMysqlPool, migrate } from '@vms/cluster';
import { countStatements, startMariaDb, type MariaDbServer } from '@vms/harness';
import { DEPLOY_SQL } from './cluster-paths.ts';
import { UP1, UP2, platform, platformRepositoryContract } from './cascade-platform-repository.contract.ts';

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

  it('300 concurrent sharesOfDevice share a few statements and answer as 300 single ones: each device its own limit and order', async () => {
    const pool = await freshPool();
    const counted = countStatements(pool);
    const repo = createMysqlPlatformRepository(counted.pool);
    await repo.upsert(platform(UP1));
    await repo.upsert(platform(UP2));
    const devices = Array.from({ length: 150 }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`);
    const share = (deviceId: string, c: number): SharedChannel => ({ deviceId, channelId: `340200000013100${String(c).padStart(5, '0')}`, catalogGroupId: null, parentId: `p${c}` });
    // device i shares i % 5 channels (none for every fifth), written in descending channel order, the odd ones with both platforms
    const up1 = devices.flatMap((d, i) => Array.from({ length: i % 5 }, (_, c) => share(d, 4 - c)));
    await repo.shareChannels(UP1, up1);
    await repo.shareChannels(UP2, up1.filter((_, i) => i % 2 === 1));
    // every device twice, with two limits: 300 lookups, the limits cut inside the device's order
    const asked = devices.flatMap((d, i) => [{ d, limit: 10 }, { d, limit: i % 3 }]);
    const singles = [];
    for (const { d, limit } of asked) singles.push(await repo.sharesOfDevice(d, limit));
    const before = counted.statements;
    const together = await Promise.all(asked.map(({ d, limit }) => repo.sharesOfDevice(d, limit)));
    const statements = counted.statements - before;
    assert.deepEqual(together, singles);
    assert.ok(together.some((s) => s.length > 4) && together.some((s, i) => s.length === 0 && (asked[i]?.limit ?? 0) > 0), 'devices with many shares and with none');
    for (const [i, shares] of together.entries()) {
      const order = shares.map((s) => `${s.channelId} ${s.platformId}`);
      assert.deepEqual(order, [...order].sort(), 'by channel then platform');
      assert.ok(shares.length <= (asked[i]?.limit ?? 0) && shares.every((s) => s.deviceId === asked[i]?.d));
    }
    assert.ok(statements <= 4, `300 lookups in ${statements} statements (one each before)`);
  });

  it('a missing table is a query error, not a transient one', async () => {
    const repo = createMysqlPlatformRepository(await freshPool(false));
    await assert.rejects(repo.listEnabled(), (e: CascadeError) => e.code === 'CASCADE_ERR_STORE_QUERY' && !e.transient);
  });
});
