// The ReportStore contract against a real MariaDB, schema from deploy/sql (V008) applied by the
// cluster migration runner, trimming on every write so the bounds are exact.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMysqlPool, migrate } from '@vms/cluster';
import { countStatements, startMariaDb, type MariaDbServer } from '@vms/harness';
import { createMysqlReportStore } from '../../src/reports/report-store.mysql.ts';
import { NO_SUBSCRIPTIONS } from '../../src/reports/report-store.port.ts';
import { SQL_DIR } from '../../src/storage/sql-dir.ts';
import { alarm, DEV, reportStoreContract } from '../reports/report-store.contract.ts';

describe('MySQL report store', () => {
  let db: MariaDbServer;
  before(async () => {
    db = await startMariaDb();
  });
  after(async () => {
    await db?.stop();
  });
  const fresh = async () => {
    const pool = createMysqlPool(await db.createDatabase(), { connectionLimit: 4 });
    await migrate(pool, SQL_DIR);
    return pool;
  };

  reportStoreContract('mysql (MariaDB)', async (bounds) => {
    const pool = await fresh();
    return { store: createMysqlReportStore({ pool, ...(bounds === undefined ? {} : { bounds }), totalTrimEvery: 1 }), dispose: () => pool.end() };
  });

  it('cuts a device’s oversized fields to their columns instead of losing the alarm', async () => {
    const pool = await fresh();
    try {
      const store = createMysqlReportStore({ pool });
      await store.addAlarm(alarm(DEV, 1, { description: 'x'.repeat(5000), type: '9'.repeat(40), sourceId: '1'.repeat(100) }));
      const [a] = (await store.listAlarms({ deviceId: DEV }, { page: 1, size: 1 })).items;
      assert.equal(a?.description?.length, 512);
      assert.equal(a?.type?.length, 16);
      assert.equal(a?.sourceId.length, 64);
    } finally {
      await pool.end();
    }
  });

  it('300 concurrent subscriptionSettings share a few statements and answer as 300 single ones (none stored: NO_SUBSCRIPTIONS)', async () => {
    const pool = await fresh();
    const counted = countStatements(pool);
    try {
      const store = createMysqlReportStore({ pool: counted.pool });
      const ids = Array.from({ length: 300 }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`);
      for (const [i, id] of ids.entries()) {
        if (i % 3 === 0) continue; // every third device never subscribed
        await store.saveSubscriptionSettings(id, { catalog: i % 2 === 0, alarm: i % 5 === 0, mobileposition: true, intervalS: 1 + (i % 7) });
      }
      const singles = [];
      for (const id of ids) singles.push(await store.subscriptionSettings(id));
      const before = counted.statements;
      const together = await Promise.all(ids.map((id) => store.subscriptionSettings(id)));
      const statements = counted.statements - before;
      assert.deepEqual(together, singles);
      assert.equal(together.filter((s) => s === NO_SUBSCRIPTIONS).length, 100);
      assert.deepEqual(together[4], { catalog: true, alarm: false, mobileposition: true, intervalS: 5 });
      assert.ok(statements <= 4, `300 lookups in ${statements} statements (one each before)`);
    } finally {
      await pool.end();
    }
  });

  it('holds a device to 1.1 × its bound when trimming every tenth of it', async () => {
    const pool = await fresh();
    try {
      const store = createMysqlReportStore({ pool, bounds: { alarmsPerDevice: 20 } });
      for (let i = 0; i < 100; i++) await store.addAlarm(alarm(DEV, i));
      const total = (await store.listAlarms({ deviceId: DEV }, { page: 1, size: 100 })).total;
      assert.ok(total >= 20 && total <= 22, `kept ${total}`);
    } finally {
      await pool.end();
    }
  });
});
