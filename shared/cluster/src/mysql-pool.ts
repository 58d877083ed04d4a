/**
 * Builds the mysql2 pool from MYSQL_URL (`mysql://user:pass@host:port/db`, SPEC §12), tuned for
 * SPEC FAIL-4: a short connect timeout so a dead server fails fast instead of hanging a heartbeat,
 * and every session on UTC (`time_zone = '+00:00'` plus the driver's `timezone: 'Z'`), so DATETIME
 * values written with NOW(3) read back as the right instant whatever the server's or host's zone.
 */
import { createPool, type Pool, type PoolOptions } from 'mysql2/promise';
import { InvalidStoreUrlError } from './errors.ts';
import { instrumentMysqlPool } from './store-diagnostics.ts';

export interface MysqlPoolOptions {
  /** Default 10. */
  connectionLimit?: number;
  /** Default 2000 ms. */
  connectTimeoutMs?: number;
}

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
  const pool = createPool({
    ...parseMysqlUrl(url),
    connectionLimit: opts.connectionLimit ?? 10,
    connectTimeout: opts.connectTimeoutMs ?? 2000,
    waitForConnections: true,
    enableKeepAlive: true,
    timezone: 'Z',
    dateStrings: false,
    supportBigNumbers: true,
  });
  // Runs before the connection serves its first query (same command queue).
  pool.pool.on('connection', (conn) => {
    conn.query("SET time_zone = '+00:00'", () => undefined);
  });
  instrumentMysqlPool(pool); // vms.store.command events (store-diagnostics.ts)
  return pool;
}
