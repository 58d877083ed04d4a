// SPEC SEC-3 / FAIL-4 against a real MariaDB that stops answering (SIGSTOP: its sockets stay open,
// new connections are accepted by the kernel, nothing is answered). Every request must answer within
// 3 s with the storage error (HTTP 503, envelope code 503), and once the server resumes (SIGCONT) the
// pool must serve again at full width: connections whose statement timed out were destroyed, not
// returned holding a half-read answer, and no slot leaked to a caller that gave up waiting.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMysqlPool, POOL_QUEUE_FULL } from '@vms/cluster';
import { startMariaDb, waitFor, type MariaDbServer } from '@vms/harness';
import { pino } from 'pino';
import { createApp, type App } from '../../src/app.ts';
import { signToken } from '../../src/auth/jwt.ts';
import { loadConfig } from '../../src/config/load.ts';

const KEY = 'mysql-hang-test-key-0123456789abcdef';
/** The bound this test holds the instance to (README "Bounds": statement deadline 2 s: 1 s of margin for a loaded machine). */
const ANSWER_WITHIN_MS = 3000;

describe('MariaDB stops answering (SIGSTOP)', () => {
  let db: MariaDbServer;
  let url: string;
  before(async () => {
    db = await startMariaDb();
    url = await db.createDatabase();
  });
  after(async () => {
    db?.resume();
    await db?.stop();
  });

  it('a bounded pool: statements fail within the deadline, waiters beyond the queue limit at once; after SIGCONT every slot works', async () => {
    const pool = createMysqlPool(url, { connectionLimit: 2, statementTimeoutMs: 800, queueLimit: 3 });
    try {
      await pool.query('SELECT 1');
      db.pause();
      await db.paused();
      const started = performance.now();
      const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? pool.query('SELECT 1') : pool.execute('SELECT ?', [i]))));
      const took = performance.now() - started;
      assert.ok(took < 800 + 1500, `all settled after ${Math.round(took)} ms`);
      assert.ok(results.every((r) => r.status === 'rejected'));
      const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'ok'));
      assert.ok(codes.includes(POOL_QUEUE_FULL), codes.join());
      db.resume();
      // healed: as many statements as connections + queue, in parallel, several rounds (a leaked
      // slot or a connection still holding a timed-out statement would make these wait or fail)
      const full = (): Promise<unknown[]> => Promise.all(Array.from({ length: 5 }, (_, i) => pool.query('SELECT ? AS n', [i])));
      await waitFor(() => full().then(() => true, () => undefined), { timeoutMs: 10_000 });
      for (let round = 0; round < 3; round++) assert.equal((await full()).length, 5);
      const conn = await pool.getConnection(); // a borrowed connection is bounded too and still works
      await conn.beginTransaction();
      await conn.query('SELECT 1');
      await conn.commit();
      conn.release();
    } finally {
      db.resume();
      await pool.end();
    }
  });

  it('every connection busy: the waiters past the bound are refused with POOL_QUEUE_FULL, never by the driver\'s own queue limit', async () => {
    const pool = createMysqlPool(url, { connectionLimit: 2, statementTimeoutMs: 5000, queueLimit: 3 });
    try {
      const busy = [pool.query('SELECT SLEEP(0.6)'), pool.query('SELECT SLEEP(0.6)')];
      await new Promise((r) => setTimeout(r, 200)); // both connections hold a statement
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => pool.query('SELECT ? AS n', [i])));
      await Promise.all(busy);
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code?: string; message?: string }).code ?? String((r.reason as Error).message)] : []));
      // mysql2 with queueLimit 3 refused the 4th and 5th waiter with "Queue limit reached." (no code)
      assert.ok(refused.length > 0 && refused.every((c) => c === POOL_QUEUE_FULL), refused.join());
      assert.ok(results.filter((r) => r.status === 'fulfilled').length >= 3, 'queueLimit waiters served');
    } finally {
      await pool.end();
    }
  });

  it('an instance answers API requests within 3 s with the storage error, and serves again after SIGCONT', async () => {
    const env = { SERVER_PORT: '0', SERVER_ADDRESS: '127.0.0.1', VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', VMS_GB28181_SIP_INSTANCE_ID: 'node-h', VMS_AUTH_SIGNING_KEY: KEY, MYSQL_URL: url };
    const app: App = createApp(loadConfig([], env), { logger: pino({ level: 'silent' }) });
    try {
      const running = await app.start();
      const token = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 600 }, KEY, Date.now());
      const get = async (): Promise<{ status: number; code: number; ms: number }> => {
        const t0 = performance.now();
        const res = await fetch(`${running.httpUrl}/vms/devices`, { headers: { 'Blade-Auth': `bearer ${token}` }, signal: AbortSignal.timeout(30_000) });
        const body = (await res.json()) as { code: number };
        return { status: res.status, code: body.code, ms: performance.now() - t0 };
      };
      assert.equal((await get()).status, 200);

      db.pause();
      await db.paused();
      // more requests than the pool has connections (10), twice over
      const hung = await Promise.all(Array.from({ length: 25 }, () => get()));
      for (const r of hung) {
        assert.equal(r.status, 503);
        assert.equal(r.code, 503);
        assert.ok(r.ms < ANSWER_WITHIN_MS, `answered after ${Math.round(r.ms)} ms (all: ${hung.map((h) => Math.round(h.ms)).join()})`);
      }

      db.resume();
      await waitFor(async () => ((await get()).status === 200 ? true : undefined), { timeoutMs: 15_000 });
      // no leaked slot: 30 parallel requests over 10 connections, all served, promptly
      const healed = await Promise.all(Array.from({ length: 30 }, () => get()));
      assert.deepEqual(new Set(healed.map((r) => r.status)), new Set([200]));
      assert.ok(Math.max(...healed.map((r) => r.ms)) < ANSWER_WITHIN_MS);
    } finally {
      db.resume();
      await app.close();
    }
  });
});
