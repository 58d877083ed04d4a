/**
 * Builds the mysql2 pool from MYSQL_URL (`mysql://user:pass@host:port/db`, SPEC §12), tuned for
 * SPEC FAIL-4: a short connect timeout so a dead server fails fast instead of hanging a heartbeat,
 * and every session on UTC (`time_zone = '+00:00'` plus the driver's `timezone: 'Z'`), so DATETIME
 * values written with NOW(3) read back as the right instant whatever the server's or host's zone.
 *
 * Every wait is bounded (SPEC SEC-3), so a server that stops answering (stopped, partitioned) costs
 * each caller at most `statementTimeoutMs`, not a hang, and the pool heals when it answers again:
 *  - each statement (`query`, `execute`, and on a borrowed connection also `beginTransaction`,
 *    `commit`, `rollback`) gets mysql2's per-command `timeout` unless it names its own, and its
 *    deadline also covers waiting for a connection and an `execute`'s PREPARE (mysql2 times neither);
 *  - a connection whose statement timed out is destroyed, never returned to the pool (its answer may
 *    still arrive and would be read as the next statement's);
 *  - at most `queueLimit` callers wait for a connection (plus up to `connectionLimit` being connected);
 *    more are refused at once (POOL_QUEUE_FULL), by this bound and never by mysql2's own queue limit,
 *    whose refusal carries no code ("Queue limit reached.": read as a query error, not 'unavailable');
 *  - after a timeout, statements are refused at once but for one probe at a time until the server
 *    answers (mysql-gate.ts), so a request reading twice waits one statement timeout, not two.
 * The errors carry codes that @vms/mysql-errors classifies as 'unavailable' (retry later).
 */
import { POOL_ACQUIRE_TIMEOUT, POOL_QUEUE_FULL, mysqlErrorCode } from '@vms/mysql-errors';
import { createPool, type Pool, type PoolConnection, type PoolOptions } from 'mysql2/promise';
import { InvalidStoreUrlError } from './errors.ts';
import { StatementGate, type GateAdmission } from './mysql-gate.ts';
import { instrumentMysqlPool } from './store-diagnostics.ts';

export interface MysqlPoolOptions {
  /** Default 10. */
  connectionLimit?: number;
  /** Default 1500 ms. */
  connectTimeoutMs?: number;
  /** Deadline of one statement, from asking for a connection to its result. Default 2000 ms: with the wait for a connection and the answer, the request stays within 3 s. */
  statementTimeoutMs?: number;
  /** Callers waiting for a connection at most; default 100. */
  queueLimit?: number;
}

export { POOL_ACQUIRE_TIMEOUT, POOL_QUEUE_FULL };
export const DEFAULT_MYSQL_STATEMENT_TIMEOUT_MS = 2000;
export const DEFAULT_MYSQL_QUEUE_LIMIT = 100;

export function parseMysqlUrl(url: string): Pick<PoolOptions, 'host' | 'port' | 'user' | 'password' | 'database'> {
  let u: URL;
  try {
    u = new URL(url);
  } catch (err) {
    throw new InvalidStoreUrlError('MySQL URL is not a URL', { cause: err });
  }
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') throw new InvalidStoreUrlError('MySQL URL must start with mysql://');
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (u.hostname === '' || database === '') throw new InvalidStoreUrlError('MySQL URL needs a host and a database');
  const port = u.port === '' ? 3306 : Number(u.port);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port,
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database,
  };
}

export function createMysqlPool(url: string, opts: MysqlPoolOptions = {}): Pool {
  const queueLimit = opts.queueLimit ?? DEFAULT_MYSQL_QUEUE_LIMIT;
  const connectionLimit = opts.connectionLimit ?? 10;
  const pool = createPool({
    ...parseMysqlUrl(url),
    connectionLimit,
    connectTimeout: opts.connectTimeoutMs ?? 1500,
    waitForConnections: true,
    // boundPool refuses past queueLimit + connectionLimit acquisitions in progress, all of which can sit in
    // the driver's queue while every connection is busy: its limit must not be the lower one (a fleet-kill
    // storm had 114 cascade lookups refused by it with "Queue limit reached.", uncoded; issue 11)
    queueLimit: queueLimit + connectionLimit,
    enableKeepAlive: true,
    timezone: 'Z',
    dateStrings: false,
    supportBigNumbers: true,
  });
  // Runs before the connection serves its first query (same command queue).
  pool.pool.on('connection', (conn) => {
    conn.query("SET time_zone = '+00:00'", () => undefined);
  });
  const bounded = boundPool(pool, { statementTimeoutMs: opts.statementTimeoutMs ?? DEFAULT_MYSQL_STATEMENT_TIMEOUT_MS, queueLimit, connectionLimit });
  return instrumentMysqlPool(bounded); // vms.store.command events (store-diagnostics.ts)
}

class PoolWaitError extends Error {
  constructor(
    readonly code: typeof POOL_ACQUIRE_TIMEOUT | typeof POOL_QUEUE_FULL,
    message: string,
  ) {
    super(message);
    this.name = 'PoolWaitError';
  }
}

type Sql = string | { sql: string; timeout?: number; [k: string]: unknown };
type Runner = (sql: Sql, values?: unknown) => Promise<unknown>;

/** The statement with a timeout: its own when it names one, else what is left of the deadline. */
const timed = (sql: Sql, deadline: number): Sql => {
  const timeout = Math.max(1, deadline - performance.now());
  return typeof sql === 'string' ? { sql, timeout } : { ...sql, timeout: sql.timeout ?? timeout };
};

const isTimeout = (err: unknown): boolean => mysqlErrorCode(err) === 'PROTOCOL_SEQUENCE_TIMEOUT';

/** The error of a statement still unanswered at its deadline, with the code mysql2 gives its own timeouts. */
function statementOverdue(): Error {
  const err = new Error('MySQL statement unanswered at its deadline') as Error & { code: string };
  err.code = 'PROTOCOL_SEQUENCE_TIMEOUT';
  return err;
}

/** `pool` with every statement and every wait for a connection bounded (see the header). */
export function boundPool(pool: Pool, o: { statementTimeoutMs: number; queueLimit: number; connectionLimit: number }): Pool {
  /**
   * getConnection calls not settled yet, abandoned ones included: those being connected (at most
   * connectionLimit) and those queued, so the driver's queue never exceeds queueLimit.
   */
  let acquiring = 0;

  const acquire = (deadline: number): Promise<PoolConnection> => {
    if (acquiring >= o.queueLimit + o.connectionLimit) {
      return Promise.reject(new PoolWaitError(POOL_QUEUE_FULL, `${acquiring} statements already wait for a MySQL connection`));
    }
    acquiring++;
    const got = pool.getConnection();
    void got.then(
      () => acquiring--,
      () => acquiring--,
    );
    return new Promise((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new PoolWaitError(POOL_ACQUIRE_TIMEOUT, `no MySQL connection within ${o.statementTimeoutMs} ms`));
      }, Math.max(1, deadline - performance.now()));
      got.then(
        (conn) => {
          clearTimeout(timer);
          if (late) conn.release(); // the caller gave up: the slot goes back at once
          else resolve(conn);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  };

  /**
   * One statement on `conn`; a timed-out connection is destroyed (the pool opens a fresh one).
   * mysql2's own `timeout` starts only when its command starts: `execute` first sends a PREPARE (on a
   * connection that has not prepared this text yet) with no timeout at all, so against a hung server
   * (SIGSTOP) it waited forever. The deadline here covers the whole call, PREPARE included.
   */
  const run = async (conn: PoolConnection, method: 'query' | 'execute', sql: Sql, values: unknown, deadline: number): Promise<unknown> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const fn = conn[method].bind(conn) as unknown as Runner;
      const call = values === undefined ? fn(timed(sql, deadline)) : fn(timed(sql, deadline), values);
      call.catch(() => undefined); // settles after the deadline when the overdue timer wins
      const overdue = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(statementOverdue()), Math.max(1, deadline - performance.now()));
      });
      return await Promise.race([call, overdue]);
    } catch (err) {
      if (isTimeout(err)) conn.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };

  const gate = new StatementGate(o.statementTimeoutMs);
  const outOfTime = (err: unknown): boolean => isTimeout(err) || (err instanceof PoolWaitError && err.code === POOL_ACQUIRE_TIMEOUT);
  const guarded = async <T>(fn: () => Promise<T>): Promise<T> => {
    const admission: GateAdmission = gate.admit(performance.now());
    if (admission === 'refuse') throw new PoolWaitError(POOL_ACQUIRE_TIMEOUT, 'MySQL did not answer a statement in time: refused at once until one gets through');
    try {
      const r = await fn();
      gate.answered(admission);
      return r;
    } catch (err) {
      if (outOfTime(err)) gate.timedOut(performance.now(), admission);
      else gate.answered(admission);
      throw err;
    }
  };

  const onPool = (method: 'query' | 'execute') => (sql: Sql, values?: unknown) => guarded(() => onPoolUnguarded(method, sql, values));
  const onPoolUnguarded = async (method: 'query' | 'execute', sql: Sql, values?: unknown) => {
    const deadline = performance.now() + o.statementTimeoutMs;
    const conn = await acquire(deadline);
    let destroyed = false;
    try {
      return await run(conn, method, sql, values, deadline);
    } catch (err) {
      destroyed = isTimeout(err);
      throw err;
    } finally {
      if (!destroyed) conn.release();
    }
  };

  const borrowed = (conn: PoolConnection): PoolConnection => {
    const statement = (method: 'query' | 'execute') => (sql: Sql, values?: unknown) => guarded(() => run(conn, method, sql, values, performance.now() + o.statementTimeoutMs));
    // ROLLBACK is never refused by the gate: a connection must not go back to the pool inside a transaction.
    const plain = (sql: string) => async () => {
      const once = () => run(conn, 'query', sql, undefined, performance.now() + o.statementTimeoutMs);
      await (sql === 'ROLLBACK' ? once() : guarded(once));
    };
    const overrides: Record<string, unknown> = {
      query: statement('query'),
      execute: statement('execute'),
      beginTransaction: plain('START TRANSACTION'),
      commit: plain('COMMIT'),
      rollback: plain('ROLLBACK'),
    };
    return new Proxy(conn, {
      get(target, prop) {
        if (typeof prop === 'string' && prop in overrides) return overrides[prop];
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };

  const overrides: Record<string, unknown> = {
    query: onPool('query'),
    execute: onPool('execute'),
    getConnection: async () => borrowed(await guarded(() => acquire(performance.now() + o.statementTimeoutMs))),
  };
  return new Proxy(pool, {
    get(target, prop) {
      if (typeof prop === 'string' && prop in overrides) return overrides[prop];
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
