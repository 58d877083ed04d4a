// The DeviceRepository contract against a real MariaDB (started by the test harness), schema from
// deploy/sql applied by the cluster migration runner, plus what only a durable store can show.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMysqlPool, migrate } from '@vms/cluster';
import { startMariaDb, type MariaDbServer } from '@vms/harness';
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
