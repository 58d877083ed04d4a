/**
 * The MySQL store opened by a table build thread (table-build.worker.ts): a pool of its own connections
 * (one per page read at once), closed when the build ends. Named in a VersionSourceSpec as
 * `{ module: MYSQL_VERSION_SOURCE, export: 'openMysqlVersionSource', options: { url } }`.
 */
import { createPool } from 'mysql2/promise';
import { createMysqlRoutingStore } from './routing-store.mysql.ts';
import { packPagesOn, PACKED_PAGE_MAX_BYTES } from './rule-pages.mysql.ts';
import type { VersionSource } from './table-build.worker.ts';
import type { VersionSourceSpec } from './table-build.protocol.ts';

export const MYSQL_VERSION_SOURCE = new URL('./version-source.mysql.ts', import.meta.url).href;

/**
 * Rules per page on the build thread: no event loop to keep short there, and fewer round trips; two pages
 * being read while one is packed (docs/routing.md: the figures behind both).
 */
export const BUILD_PAGE_ROWS = 20_000;
export const BUILD_READ_AHEAD = 2;

export interface MysqlVersionSourceOptions {
  readonly url: string;
  /** Default BUILD_PAGE_ROWS (tests read small versions in many pages). */
  readonly pageRows?: number;
  /** Default BUILD_READ_AHEAD. */
  readonly readAhead?: number;
  /**
   * Pages packed by the server into one string each (rule-pages.mysql.ts: the driver's per-row parsing was
   * most of a read). Default true.
   */
  readonly packed?: boolean;
  /** Longest packed page, bytes (a longer one is read row by row). Default PACKED_PAGE_MAX_BYTES. */
  readonly packedMaxBytes?: number;
}

export function mysqlVersionSource(url: string, o: Omit<MysqlVersionSourceOptions, 'url'> = {}): VersionSourceSpec {
  return { module: MYSQL_VERSION_SOURCE, export: 'openMysqlVersionSource', options: { ...o, url } satisfies MysqlVersionSourceOptions };
}

export function openMysqlVersionSource(options: MysqlVersionSourceOptions): VersionSource {
  const readAhead = Math.max(1, Math.min(4, Math.floor(options.readAhead ?? BUILD_READ_AHEAD)));
  // the settings of the service's pool (@vms/cluster createMysqlPool) that matter for reading rows
  const pool = createPool({ uri: options.url, connectionLimit: readAhead, connectTimeout: 1500, timezone: 'Z', supportBigNumbers: true });
  const packed = options.packed ?? true;
  if (packed) packPagesOn(pool, options.packedMaxBytes ?? PACKED_PAGE_MAX_BYTES);
  const store = createMysqlRoutingStore(pool, { readPageRows: options.pageRows ?? BUILD_PAGE_ROWS, readAhead, packedPages: packed });
  return {
    readVersion: (v) => store.readVersion(v),
    async close() {
      await store.close();
      await pool.end();
    },
  };
}
