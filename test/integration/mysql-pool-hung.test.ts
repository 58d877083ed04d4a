// The bounded pool against a real MariaDB that stops answering (SIGSTOP): every statement ends within its
// deadline, `execute` included. mysql2 starts a statement's own timeout only when the command starts, and
// `execute` on a connection that has not prepared the text first sends a PREPARE with no timeout: before
// the pool bounded the whole call, that PREPARE waited for as long as the server was stopped (a control
// request of the MariaDB SIGSTOP chaos scenario never got an answer).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool } from 'mysql2/promise';
import { createMysqlPool, isTransientMysqlError } from '@vms/cluster';
import { startMariaDb, timed, waitFor, type MariaDbServer } from '@vms/harness';

const STATEMENT_TIMEOUT_MS = 800;

let db: MariaDbServer;
let pool: Pool;

before(async () => {
  db = await startMariaDb();
  pool = createMysqlPool(await db.createDatabase(), { connectionLimit: 2, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  // Two connections open and idle, neither has prepared the statements below.
  await Promise.all([pool.query('SELECT SLEEP(0.05)'), pool.query('SELECT SLEEP(0.05)')]);
});
after(async () => {
  db?.resume();
  await pool?.end().catch(() => undefined);
  await db?.stop();
});

/** `SELECT 41 + 1` through `pool.execute` or `pool.query`, each with its own statement text. */
function select42(method: 'execute' | 'query'): Promise<unknown> {
  const sql = `SELECT ? + 1 AS n /* ${method} */`;
  return method === 'execute' ? pool.execute(sql, [41]) : pool.query(sql, [41]);
}

describe('bounded MySQL pool, server SIGSTOPped', () => {
  for (const method of ['execute', 'query'] as const) {
    it(`${method}: a statement on an open connection fails within its deadline, typed as unavailable`, async () => {
      db.pause();
      await db.paused(); // a statement sent before every thread stopped could still be answered
      try {
        const { ms, error } = await timed(select42(method));
        assert.ok(error !== undefined, 'the statement failed');
        assert.ok(isTransientMysqlError(error), `typed unavailable, got ${String(error)}`);
        assert.ok(ms < STATEMENT_TIMEOUT_MS + 400, `bounded by the statement deadline: ${ms.toFixed(0)} ms`);
      } finally {
        db.resume();
      }
      // The pool heals: the destroyed connection is replaced and the same statement answers.
      const rows = await waitFor(
        async () => {
          try {
            const [r] = (await select42(method)) as [{ n: number }[]];
            return r;
          } catch {
            return null;
          }
        },
        { timeoutMs: 10_000, description: 'pool answers again' },
      );
      assert.equal(Number(rows[0]?.n), 42);
    });
  }
});
