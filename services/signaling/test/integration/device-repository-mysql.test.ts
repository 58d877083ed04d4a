// The DeviceRepository contract against a real MariaDB (started by the test harness), schema from
// deploy/sql applied by the cluster migration runner, plus what only a durable store can show.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMysqlPool, migrate } from '@vms/cluster';
import { countStatements, startMariaDb, type MariaDbServer } from '@vms/harness';
import { createMysqlDeviceRepository } from '../../src/devices/device-repository.mysql.ts';
import { deviceRepositoryContract } from '../devices/device-repository.contract.ts';
import { SQL_DIR } from '../../src/storage/sql-dir.ts';

async function freshDatabase(db: MariaDbServer) {
  const pool = createMysqlPool(await db.createDatabase(), { connectionLimit: 4 });
  await migrate(pool, SQL_DIR);
  return pool;
}

describe('MySQL device repository', () => {
  let db: MariaDbServer;
  before(async () => {
    db = await startMariaDb();
  });
  after(async () => {
    await db?.stop();
  });

  deviceRepositoryContract('mysql (MariaDB)', async (limits) => {
    const pool = await freshDatabase(db);
    const repo = createMysqlDeviceRepository({ pool, keepaliveFlushMs: 50, ...limits });
    return {
      repo,
      dispose: async () => {
        await repo.close();
        await pool.end();
      },
    };
  });

  it('writes buffered keepalives in batches and on close', async () => {
    const pool = await freshDatabase(db);
    try {
      const repo = createMysqlDeviceRepository({ pool, keepaliveFlushMs: 60_000 });
      const at = Date.UTC(2024, 5, 1, 12, 0, 0, 250);
      const ids = Array.from({ length: 1200 }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`);
      for (const id of ids) await repo.registerDevice({ deviceId: id, transport: 'UDP', remoteIp: '10.0.0.1', remotePort: 5060, expiresSec: 3600, at });
      for (const id of ids) repo.touchKeepalive(id, at + 30_000);
      await repo.close();
      const [rows] = await pool.query('SELECT COUNT(*) AS n FROM gb_device WHERE keepalive_at = ?', [new Date(at + 30_000)]);
      assert.deepEqual(rows, [{ n: 1200 }]);
      const again = createMysqlDeviceRepository({ pool });
      assert.equal((await again.getDevice(ids[7] ?? ''))?.keepaliveAt, at + 30_000);
      await again.close();
    } finally {
      await pool.end();
    }
  });

  it('a registration storm shares statements, each registration answered with its own row', async () => {
    const pool = await freshDatabase(db);
    const counted = countStatements(pool);
    try {
      const repo = createMysqlDeviceRepository({ pool: counted.pool, keepaliveFlushMs: 60_000 });
      const at = Date.UTC(2024, 5, 1, 12, 0, 0);
      const ids = Array.from({ length: 1000 }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`);
      // every device once, and the first hundred a second time from another port (the later one wins)
      const storm = [...ids.map((id, i) => ({ id, port: 5060 + (i % 1000) })), ...ids.slice(0, 100).map((id) => ({ id, port: 6000 }))];
      const devices = await Promise.all(storm.map(({ id, port }) => repo.registerDevice({ deviceId: id, transport: 'UDP', remoteIp: '10.0.0.9', remotePort: port, expiresSec: 3600, at })));
      assert.equal(devices.length, 1100);
      for (const [i, d] of devices.entries()) {
        assert.equal(d.deviceId, storm[i]?.id);
        assert.equal(d.online, true);
      }
      assert.ok(counted.statements <= 20, `1,100 registrations in ${counted.statements} statements (two per registration before)`);
      const [rows] = await pool.query('SELECT COUNT(*) AS n FROM gb_device WHERE online = 1');
      assert.deepEqual(rows, [{ n: 1000 }]);
      assert.equal((await repo.getDevice(ids[5] ?? ''))?.remotePort, 6000, 'the later registration of a device wins');
      assert.equal((await repo.getDevice(ids[500] ?? ''))?.remotePort, 5560);
      await repo.close();
    } finally {
      await pool.end();
    }
  });

  it('300 concurrent getDevice share a few statements and answer as 300 single ones (unknown ids null, buffered keepalives applied)', async () => {
    const pool = await freshDatabase(db);
    const counted = countStatements(pool);
    try {
      const repo = createMysqlDeviceRepository({ pool: counted.pool, keepaliveFlushMs: 60_000 });
      const at = Date.UTC(2024, 5, 1, 12, 0, 0);
      const ids = Array.from({ length: 300 }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`);
      const known = ids.filter((_, i) => i % 3 !== 0); // every third one never registered
      await Promise.all(known.map((id, i) => repo.registerDevice({ deviceId: id, transport: 'UDP', remoteIp: '10.0.0.9', remotePort: 5060 + i, expiresSec: 3600, at })));
      repo.touchKeepalive(ids[1] ?? '', at + 5000); // buffered, not written yet
      const singles = [];
      for (const id of ids) singles.push(await repo.getDevice(id));
      const before = counted.statements;
      const together = await Promise.all(ids.map((id) => repo.getDevice(id)));
      const statements = counted.statements - before;
      assert.deepEqual(together, singles);
      assert.equal(singles.filter((d) => d === null).length, 100);
      assert.deepEqual(together.map((d) => d?.deviceId ?? null), ids.map((id, i) => (i % 3 === 0 ? null : id)));
      assert.equal(together[1]?.keepaliveAt, at + 5000, 'the buffered keepalive overlays the batched row');
      assert.ok(statements <= 4, `300 lookups in ${statements} statements (one each before)`);
      await repo.close();
    } finally {
      await pool.end();
    }
  });

  it('stores times in UTC DATETIME(3) columns', async () => {
    const pool = await freshDatabase(db);
    try {
      const repo = createMysqlDeviceRepository({ pool });
      await repo.registerDevice({ deviceId: '34020000001320000001', transport: 'TCP', remoteIp: '10.0.0.1', remotePort: 5060, expiresSec: 3600, at: Date.UTC(2024, 0, 1, 8, 0, 0, 5) });
      const [rows] = await pool.query("SELECT DATE_FORMAT(registered_at, '%Y-%m-%d %H:%i:%s.%f') AS t FROM gb_device");
      assert.deepEqual(rows, [{ t: '2024-01-01 08:00:00.005000' }]);
      await repo.close();
    } finally {
      await pool.end();
    }
  });
});
