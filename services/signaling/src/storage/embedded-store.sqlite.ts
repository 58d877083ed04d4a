// The embedded store of a single instance without MySQL: one SQLite file in the data directory
// (`vms.data-dir`), shared by the device, platform and media node stores (each a `*.sqlite.ts`
// adapter given this handle, as the MySQL adapters are given a pool).
//  - WAL journal, synchronous=NORMAL: a commit survives the process being killed (kill -9); only an
//    OS crash or power loss may lose the last commits (https://sqlite.org/pragma.html#pragma_synchronous).
//  - EXCLUSIVE locking, taken at open: a second instance pointed at the same directory is refused
//    with a clear error instead of sharing devices it does not own. The OS drops the lock when the
//    process dies, so a restart after kill -9 opens at once.
//  - Schema versions in `PRAGMA user_version`, applied in one transaction each.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { StorageError } from '../errors/catalog.ts';
import { EMBEDDED_MIGRATIONS } from './embedded-schema.sqlite.ts';

export type EmbeddedDb = Database.Database;

export const EMBEDDED_DB_FILE = 'vms.sqlite';

export interface EmbeddedStore {
  readonly db: EmbeddedDb;
  /** Absolute path of the database file. */
  readonly file: string;
  /** Schema versions applied by this open (empty when the file was current). */
  readonly applied: readonly number[];
  /** Closes the handle (and releases the lock). Idempotent. */
  close(): void;
}

/** The data directory is in use: another instance holds the lock. */
export class DataDirInUseError extends StorageError {
  constructor(
    readonly file: string,
    options?: { cause?: unknown },
  ) {
    super(`open ${file}: the data directory is in use by another instance`, options);
  }
}

export function openEmbeddedStore(dataDir: string): EmbeddedStore {
  const dir = resolve(dataDir);
  const file = join(dir, EMBEDDED_DB_FILE);
  let db: EmbeddedDb;
  try {
    mkdirSync(dir, { recursive: true });
    db = new Database(file, { timeout: 0 });
  } catch (err) {
    throw new StorageError(`open ${file}`, { cause: err });
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE'); // before the first access: no shared-memory WAL index
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.exec('BEGIN IMMEDIATE; COMMIT'); // takes the exclusive lock now, not at the first write
    const applied = migrate(db);
    let closed = false;
    return {
      db,
      file,
      applied,
      close() {
        if (closed) return;
        closed = true;
        db.close();
      },
    };
  } catch (err) {
    db.close();
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') throw new DataDirInUseError(file, { cause: err });
    if (err instanceof StorageError) throw err;
    throw new StorageError(`open ${file}`, { cause: err });
  }
}

function migrate(db: EmbeddedDb): number[] {
  const current = db.pragma('user_version', { simple: true }) as number;
  const newest = EMBEDDED_MIGRATIONS.at(-1)?.version ?? 0;
  if (current > newest) throw new StorageError(`schema version ${current} is newer than this build knows (${newest})`);
  const applied: number[] = [];
  for (const m of EMBEDDED_MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
    applied.push(m.version);
  }
  return applied;
}
