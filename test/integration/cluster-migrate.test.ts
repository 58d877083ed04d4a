// The migration runner against a real MariaDB: repository migrations, idempotence, numeric order,
// concurrent runners, changed files and failing statements.
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { MigrationError, createMysqlPool, migrate } from '@vms/cluster';
import { startMariaDb, tmpDir, type MariaDbServer, type TmpDir } from '@vms/harness';
import { DEPLOY_SQL } from './cluster-paths.ts';

let db: MariaDbServer;
const pools: Pool[] = [];
const dirs: TmpDir[] = [];

async function freshPool(): Promise<Pool> {
  const pool = createMysqlPool(await db.createDatabase());
  pools.push(pool);
  return pool;
}

function migrationsDir(files: Record<string, string>): string {
  const dir = tmpDir('vms-migrations-');
  dirs.push(dir);
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir.path, name), sql);
  return dir.path;
}

async function versions(pool: Pool): Promise<number[]> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT version FROM schema_version ORDER BY version');
  return rows.map((r) => r.version as number);
}

before(async () => {
  db = await startMariaDb();
});
after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  dirs.forEach((d) => d.remove());
  await db.stop();
});

describe('migrate()', () => {
  it('applies every deploy/sql migration once; a second run is a no-op', async () => {
    const pool = await freshPool();
    const expected = readdirSync(DEPLOY_SQL)
      .map((f) => /^V(\d+)__.+\.sql$/.exec(f)?.[1])
      .filter((v): v is string => v !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    assert.ok(expected.includes(2), 'V002__signal_node.sql is in deploy/sql');
    const first = await migrate(pool, DEPLOY_SQL);
    assert.deepEqual(
      first.applied.map((a) => a.version),
      expected,
    );
    assert.equal(first.current, Math.max(...expected));
    const second = await migrate(pool, DEPLOY_SQL);
    assert.deepEqual(second.applied, []);
    assert.equal(second.current, first.current);
    assert.deepEqual(await versions(pool), expected);
    const [cols] = await pool.query<RowDataPacket[]>('SHOW COLUMNS FROM signal_node');
    assert.deepEqual(
      cols.map((c) => c.Field),
      ['node_code', 'sip_host', 'sip_port', 'internal_base_url', 'cascade_node', 'started_at', 'last_heartbeat', 'left_at', 'draining', 'drain_started_at', 'drain_period_ms', 'join_started_at', 'join_period_ms', 'join_from', 'placement_group', 'online_device_count', 'version'],
    );
  });

  it('orders by version number and applies only what is new', async () => {
    const pool = await freshPool();
    const dir = migrationsDir({
      'V2__create.sql': 'CREATE TABLE t (id INT PRIMARY KEY);',
      'V10__alter.sql': "ALTER TABLE t ADD COLUMN note VARCHAR(20) NOT NULL DEFAULT 'a;b'; -- needs V2 first",
      'README.txt': 'not a migration',
    });
    assert.deepEqual((await migrate(pool, dir)).applied, [
      { version: 2, name: 'create' },
      { version: 10, name: 'alter' },
    ]);
    writeFileSync(join(dir, 'V11__seed.sql'), "INSERT INTO t (id) VALUES (1);\nINSERT INTO t (id, note) VALUES (2, 'x');\n");
    const res = await migrate(pool, dir);
    assert.deepEqual(res.applied, [{ version: 11, name: 'seed' }]);
    assert.equal(res.current, 11);
    const [rows] = await pool.query<RowDataPacket[]>('SELECT id, note FROM t ORDER BY id');
    assert.deepEqual(rows, [
      { id: 1, note: 'a;b' },
      { id: 2, note: 'x' },
    ]);
  });

  it('concurrent runners (several instances starting) apply each file once', async () => {
    const url = await db.createDatabase();
    const a = createMysqlPool(url);
    const b = createMysqlPool(url);
    pools.push(a, b);
    const dir = migrationsDir({ 'V1__t.sql': 'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);' });
    const [ra, rb] = await Promise.all([migrate(a, dir), migrate(b, dir)]);
    assert.equal(ra.applied.length + rb.applied.length, 1);
    assert.deepEqual(await versions(a), [1]);
  });

  it('refuses a migration edited after it was applied', async () => {
    const pool = await freshPool();
    const dir = migrationsDir({ 'V1__t.sql': 'CREATE TABLE t (id INT PRIMARY KEY);' });
    await migrate(pool, dir);
    writeFileSync(join(dir, 'V1__t.sql'), 'CREATE TABLE t (id BIGINT PRIMARY KEY);');
    await assert.rejects(migrate(pool, dir), (err: MigrationError) => err.code === 'CLUSTER_ERR_MIGRATION' && /V1__t\.sql/.test(err.message));
  });

  it('CRLF line endings do not count as an edit', async () => {
    const pool = await freshPool();
    const dir = migrationsDir({ 'V1__t.sql': 'CREATE TABLE t (id INT PRIMARY KEY);\n' });
    await migrate(pool, dir);
    writeFileSync(join(dir, 'V1__t.sql'), 'CREATE TABLE t (id INT PRIMARY KEY);\r\n');
    assert.deepEqual((await migrate(pool, dir)).applied, []);
  });

  it('a failing statement is a MigrationError and its version is not recorded; fixed, it applies', async () => {
    const pool = await freshPool();
    const dir = migrationsDir({
      'V1__ok.sql': 'CREATE TABLE a (id INT PRIMARY KEY);',
      'V2__bad.sql': 'CREATE TABLE IF NOT EXISTS b (id INT PRIMARY KEY);\nINSERT INTO missing_table VALUES (1);',
    });
    await assert.rejects(migrate(pool, dir), (err: MigrationError) => err instanceof MigrationError && /V2__bad\.sql/.test(err.message));
    assert.deepEqual(await versions(pool), [1]);
    writeFileSync(join(dir, 'V2__bad.sql'), 'CREATE TABLE IF NOT EXISTS b (id INT PRIMARY KEY);\nINSERT INTO a VALUES (1);');
    assert.deepEqual((await migrate(pool, dir)).applied, [{ version: 2, name: 'bad' }]);
  });

  it('rejects duplicate versions and a missing directory before touching the database', async () => {
    const pool = await freshPool();
    await assert.rejects(migrate(pool, migrationsDir({ 'V1__a.sql': 'SELECT 1', 'V01__b.sql': 'SELECT 2' })), MigrationError);
    await assert.rejects(migrate(pool, '/nonexistent/vms/sql'), MigrationError);
    const [tables] = await pool.query<RowDataPacket[]>('SHOW TABLES');
    assert.deepEqual(tables, []);
  });
});
