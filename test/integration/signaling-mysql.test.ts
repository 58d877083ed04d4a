// The same instance on MariaDB (MYSQL_URL): a SIPp device registers with digest, keeps alive and
// answers a catalog sync in two MESSAGEs; the API and the tables show the result.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMysqlPool } from '@vms/cluster';
import { sleep, startMariaDb, waitFor, type MariaDbServer } from '@vms/harness';
import type { RowDataPacket } from 'mysql2/promise';
import { runDevice, startInstance, waitOnline, type Instance } from './signaling-fixture.ts';

const DEV = '34020000001320000011';
const CH_PREFIX = '340200000013100001';

describe('signaling instance on MariaDB with a SIPp device', () => {
  let db: MariaDbServer;
  let instance: Instance;
  let url: string;
  before(async () => {
    db = await startMariaDb();
    url = await db.createDatabase();
    instance = await startInstance({ MYSQL_URL: url });
  });
  after(async () => {
    await instance?.stop();
    await db?.stop();
  });

  it('register with digest, keepalive, catalog sync: stored in gb_device / gb_channel, served by the API', async () => {
    const run = await runDevice({ instance, deviceId: DEV, ooc: 'catalog-answer.xml', keys: { channel_prefix: CH_PREFIX } });
    const online = await waitOnline(instance, DEV);
    assert.equal(online.transport, 'UDP');
    assert.equal((await instance.api('POST', `/vms/device/catalog/sync?deviceId=${DEV}`)).success, true);
    await waitFor(async () => (await instance.api<{ state: string }>('GET', `/vms/device/catalog/sync?deviceId=${DEV}`)).data.state === 'done', {
      timeoutMs: 10_000,
      description: 'catalog sync done',
    });
    const channels = await instance.api<{ total: number; records: { channelId: string }[] }>('GET', `/vms/channels?deviceId=${DEV}`);
    assert.deepEqual(channels.data.records.map((c) => c.channelId), [`${CH_PREFIX}01`, `${CH_PREFIX}02`, `${CH_PREFIX}03`]);

    const ended = await Promise.race([run.done, sleep(15_000).then(() => null)]);
    const result = ended ?? (await run.stop());
    assert.ok(ended !== null && result.ok, result.errors);

    // Keepalives are written behind (batched every second, OWN-5): wait for the row to catch up.
    const pool = createMysqlPool(url);
    try {
      const device = await waitFor(
        async () => {
          const [rows] = await pool.query<RowDataPacket[]>(
            'SELECT online, transport, remote_ip, expires_sec, channel_count, keepalive_at > registered_at AS kept_alive FROM gb_device WHERE device_id = ?',
            [DEV],
          );
          return rows[0]?.['kept_alive'] === 1 ? { ...rows[0] } : null;
        },
        { timeoutMs: 5000, description: 'a keepalive written behind the REGISTER' },
      );
      assert.deepEqual(device, { online: 1, transport: 'UDP', remote_ip: '127.0.0.1', expires_sec: 3600, channel_count: 3, kept_alive: 1 });
      const [rows] = await pool.query<RowDataPacket[]>('SELECT channel_id, name, status FROM gb_channel WHERE device_id = ? ORDER BY channel_id', [DEV]);
      assert.deepEqual(
        rows.map((r) => [r['channel_id'], r['name'], r['status']]),
        [
          [`${CH_PREFIX}01`, 'Gate', 'ON'],
          [`${CH_PREFIX}02`, 'Hall', 'ON'],
          [`${CH_PREFIX}03`, 'Yard', 'OFF'],
        ],
      );
    } finally {
      await pool.end();
    }
  });
});
