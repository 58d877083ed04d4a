import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConnection } from 'mysql2/promise';
import { startMariaDb, type MariaDbServer } from './index.ts';

describe('startMariaDb', () => {
  let db: MariaDbServer;
  before(async () => {
    db = await startMariaDb();
    const t = db.timings;
    console.log(`mariadb timings: datadir ${t.installMs} ms (${t.fromTemplate ? 'template copy' : 'install'}), start ${t.startMs} ms`);
  });
  after(async () => {
    await db.stop();
  });

  it('accepts the URL with a password, rejects a wrong one', async () => {
    assert.match(db.url, /^mysql:\/\/root:[0-9a-f]+@127\.0\.0\.1:\d+\/test$/);
    const conn = await createConnection(db.url);
    try {
      const [rows] = await conn.query('SELECT 1 + 1 AS two, DATABASE() AS db');
      assert.deepEqual(rows, [{ two: 2, db: 'test' }]);
    } finally {
      await conn.end();
    }
    await assert.rejects(
      createConnection({ host: db.host, port: db.port, user: 'root', password: 'wrong' }),
      (err: { code?: string }) => err.code === 'ER_ACCESS_DENIED_ERROR',
    );
  });

  it('createDatabase() gives a clean database each time', async () => {
    const url = await db.createDatabase('clean_me');
    let conn = await createConnection(url);
    await conn.query('CREATE TABLE t (id INT PRIMARY KEY)');
    await conn.end();
    const again = await db.createDatabase('clean_me');
    assert.equal(again, url);
    conn = await createConnection(url);
    try {
      const [rows] = await conn.query('SHOW TABLES');
      assert.deepEqual(rows, []);
    } finally {
      await conn.end();
    }
    assert.notEqual(await db.createDatabase(), await db.createDatabase(), 'generated names are unique');
  });

  it('kill() then restart() keeps port and committed data', async () => {
    const url = await db.createDatabase('durable');
    let conn = await createConnection(url);
    await conn.query('CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB');
    await conn.query('INSERT INTO t VALUES (1), (2)');
    await conn.end();
    const port = db.port;
    await db.kill();
    assert.equal(db.isRunning(), false);
    await assert.rejects(createConnection(url));
    await db.restart();
    assert.equal(db.port, port);
    conn = await createConnection(url);
    try {
      const [rows] = await conn.query('SELECT COUNT(*) AS n FROM t');
      assert.deepEqual(rows, [{ n: 2 }]);
    } finally {
      await conn.end();
    }
  });

  it('works without the template too (VMS_TEST_MARIADB_TEMPLATE=0)', async () => {
    const saved = process.env.VMS_TEST_MARIADB_TEMPLATE;
    process.env.VMS_TEST_MARIADB_TEMPLATE = '0';
    let other: MariaDbServer | undefined;
    try {
      other = await startMariaDb({ database: 'plain' });
      assert.equal(other.timings.fromTemplate, false);
      console.log(`mariadb without template: install ${other.timings.installMs} ms, start ${other.timings.startMs} ms`);
      const conn = await createConnection(other.url);
      const [rows] = await conn.query('SELECT DATABASE() AS db');
      await conn.end();
      assert.deepEqual(rows, [{ db: 'plain' }]);
    } finally {
      if (saved === undefined) delete process.env.VMS_TEST_MARIADB_TEMPLATE;
      else process.env.VMS_TEST_MARIADB_TEMPLATE = saved;
      await other?.stop();
    }
  });
});
