// createApp with MYSQL_URL: migrations applied at start, the API served from MariaDB.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMysqlPool } from '@vms/cluster';
import { startMariaDb, type MariaDbServer } from '@vms/harness';
import { pino } from 'pino';
import { createApp } from '../../src/app.ts';
import { signToken } from '../../src/auth/jwt.ts';
import { loadConfig } from '../../src/config/load.ts';

const KEY = 'mysql-app-test-key-0123456789abcdef';

describe('signaling instance on MariaDB', () => {
  let db: MariaDbServer;
  before(async () => {
    db = await startMariaDb();
  });
  after(async () => {
    await db?.stop();
  });

  it('migrates at start (twice is harmless) and serves devices from the database', async () => {
    const url = await db.createDatabase();
    const env = { SERVER_PORT: '0', SERVER_ADDRESS: '127.0.0.1', VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', VMS_GB28181_SIP_INSTANCE_ID: 'node-m', VMS_AUTH_SIGNING_KEY: KEY, MYSQL_URL: url };
    for (let round = 0; round < 2; round++) {
      const app = createApp(loadConfig([], env), { logger: pino({ level: 'silent' }) });
      try {
        const running = await app.start();
        const health = (await (await fetch(`${running.httpUrl}/healthz`)).json()) as { data: { storage: string } };
        assert.equal(health.data.storage, 'mysql');
        const pool = createMysqlPool(url);
        await pool.query(
          "INSERT IGNORE INTO gb_device (device_id, tenant_id, online, keepalive_at, created_at, updated_at) VALUES ('34020000001320000001', '000000', 1, NOW(3), NOW(3), NOW(3))",
        );
        await pool.end();
        const token = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, KEY, Date.now());
        const list = (await (await fetch(`${running.httpUrl}/blade-iot/vms/devices`, { headers: { 'Blade-Auth': `bearer ${token}` } })).json()) as {
          data: { total: number; records: { deviceId: string; ownerNode: string | null }[] };
        };
        assert.equal(list.data.total, 1);
        assert.deepEqual(list.data.records[0], { ...list.data.records[0], deviceId: '34020000001320000001', ownerNode: 'node-m' });
      } finally {
        await app.close();
      }
    }
  });
});
