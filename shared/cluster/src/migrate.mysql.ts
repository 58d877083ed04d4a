/**
 * Minimal schema migration runner: applies `V<n>__<description>.sql` files from one directory in
 * version order, each once, recording them in `schema_version` (version, name, checksum). Safe to run
 * from every instance at start: a named lock (GET_LOCK) serialises concurrent runners and the second
 * one finds nothing left to do. A file changed after it was applied is refused (checksum), since the
 * database would silently differ from the repository.
 *
 * MySQL commits DDL implicitly, so a file that fails half-way is not rolled back: write migrations
 * re-runnable (CREATE TABLE IF NOT EXISTS …) so that fixing and re-running is enough.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pool, PoolConnection, RowDataPacket } from 'mysql2/promise';
import { ClusterError, MigrationError } from './errors.ts';
import { toNodeRegistryError } from './mysql-errors.ts';
import { orderMigrations, splitSqlStatements } from './sql-script.ts';

export interface MigrateOptions {
  /** Seconds to wait for another instance's run to finish. Default 60. */
  lockTimeoutS?: number;
}

export interface MigrationResult {
  /** Versions applied by this call, in order. */
  applied: Array<{ version: number; name: string }>;
  /** Highest version recorded after this call (0 when none). */
  current: number;
}

// Named locks are server-wide; scoping the name to the schema lets other databases on the same
// server migrate in parallel. GET_LOCK names are limited to 64 characters.
const LOCK_NAME_SQL = "CONCAT('vms_migrate:', LEFT(DATABASE(), 50))";

const CREATE_VERSION_TABLE = `
CREATE TABLE IF NOT EXISTS schema_version (
  version    INT          NOT NULL PRIMARY KEY,
  name       VARCHAR(255) NOT NULL,
  checksum   CHAR(64)     NOT NULL,
  applied_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB`;

interface VersionRecord extends RowDataPacket {
  version: number;
  checksum: string;
}

/**
 * Migration statements (DDL on big tables, waiting for the lock) may take long: they name their own
 * timeout, which the bounded pool (mysql-pool.ts) keeps instead of its short per-statement default.
 */
const MIGRATION_STATEMENT_TIMEOUT_MS = 10 * 60_000;
const slow = (sql: string): { sql: string; timeout: number } => ({ sql, timeout: MIGRATION_STATEMENT_TIMEOUT_MS });

export async function migrate(pool: Pool, dir: string, opts: MigrateOptions = {}): Promise<MigrationResult> {
  const names = await readdir(dir).catch((err: unknown) => {
    throw new MigrationError(`cannot read migrations directory ${dir}`, { cause: err });
  });
  const files = orderMigrations(names);
  const scripts = await Promise.all(
    files.map(async (f) => {
      // CRLF-normalised so a checkout with autocrlf does not look like an edited migration
      const text = (await readFile(join(dir, f.fileName), 'utf8')).replace(/\r\n/g, '\n');
      return { ...f, text, checksum: createHash('sha256').update(text).digest('hex') };
    }),
  );

  const conn = await pool.getConnection().catch((err: unknown) => {
    throw toNodeRegistryError(err, 'migrate');
  });
  let locked = false;
  try {
    const [lock] = await conn.query<RowDataPacket[]>(slow(`SELECT GET_LOCK(${LOCK_NAME_SQL}, ?) AS got`), [opts.lockTimeoutS ?? 60]);
    if (lock[0]?.got !== 1) throw new MigrationError('another instance holds the migration lock');
    locked = true;
    await conn.query(slow(CREATE_VERSION_TABLE));
    const [rows] = await conn.query<VersionRecord[]>(slow('SELECT version, checksum FROM schema_version'));
    const done = new Map(rows.map((r) => [r.version, r.checksum]));

    const applied: MigrationResult['applied'] = [];
    for (const s of scripts) {
      const recorded = done.get(s.version);
      if (recorded !== undefined) {
        if (recorded !== s.checksum) {
          throw new MigrationError(`${s.fileName} changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await applyScript(conn, s.fileName, s.text);
      await conn.query(slow('INSERT INTO schema_version (version, name, checksum) VALUES (?, ?, ?)'), [s.version, s.name, s.checksum]);
      applied.push({ version: s.version, name: s.name });
    }
    const current = Math.max(0, ...done.keys(), ...applied.map((a) => a.version));
    return { applied, current };
  } catch (err) {
    throw err instanceof ClusterError ? err : toNodeRegistryError(err, 'migrate');
  } finally {
    if (locked) await conn.query(`SELECT RELEASE_LOCK(${LOCK_NAME_SQL})`).catch(() => undefined);
    conn.release();
  }
}

async function applyScript(conn: PoolConnection, fileName: string, text: string): Promise<void> {
  for (const statement of splitSqlStatements(text)) {
    try {
      await conn.query(slow(statement));
    } catch (err) {
      const e = toNodeRegistryError(err, fileName);
      // a lost connection is worth retrying later; a bad statement is the file's fault
      throw e.transient ? e : new MigrationError(`${fileName} failed: ${statementHead(statement)}`, { cause: err });
    }
  }
}

function statementHead(statement: string): string {
  const oneLine = statement.replace(/\s+/g, ' ');
  return oneLine.length > 80 ? `${oneLine.slice(0, 77)}...` : oneLine;
}
