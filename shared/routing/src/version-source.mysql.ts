/**
 * The MySQL store opened by a table build thread (table-build.worker.ts): a pool of one connection of the
 * thread's own, closed when the build ends. Named in a VersionSourceSpec as
 * `{ module: MYSQL_VERSION_SOURCE, export: 'openMysqlVersionSource', options: { url } }`.
 */
import { createPool } from 'mysql2/promise';
import { createMysqlRoutingStore } from './routing-store.mysql.ts';
import type { VersionSource } from './table-build.worker.ts';
import type { VersionSourceSpec } from './table-build.protocol.ts';

export const MYSQL_VERSION_SOURCE = new URL('./version-source.mysql.ts', import.meta.url).href;

export function mysqlVersionSource(url: string): VersionSourceSpec {
  return { module: MYSQL_VERSION_SOURCE, export: 'openMysqlVersionSource', options: { url } };
}

export function openMysqlVersionSource(options: { url: string }): VersionSource {
  // the settings of the service's pool (@vms/cluster createMysqlPool) that matter for reading rows
  const pool = createPool({ uri: options.url, connectionLimit: 1, connectTimeout: 1500, timezone: 'Z', supportBigNumbers: true });
  // pages of 20,000 rows: no event loop to keep short here, and fewer round trips (docs/routing.md)
  const store = createMysqlRoutingStore(pool, { readPageRows: 20_000 });
  return {
    readVersion: (v) => store.readVersion(v),
    async close() {
      await store.close();
      await pool.end();
    },
  };
}
