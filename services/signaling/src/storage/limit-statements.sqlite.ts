// A statement per LIMIT value instead of `LIMIT ?`. SQLite (3.53, as better-sqlite3 builds it) lets the
// query planner read a LIMIT parameter's value, and a statement whose plan read a bound value is
// re-prepared at every run after that parameter is bound again (sqlite3_bind → expired → sqlite3Reprepare):
// ~56k instructions per run, more than Kamailio spends on a whole registration (issue 11,
// register-callgrind), for the query a device coming online runs (PlatformRepository.sharesOfDevice).
// The limits callers pass are a handful of constants, so a few statements cover them.
import type { Statement } from 'better-sqlite3';
import type { EmbeddedDb } from './embedded-store.sqlite.ts';

/** Distinct limits kept prepared; another limit prepares its statement for the one run (still correct). */
const MAX_PREPARED = 8;

/**
 * `sql(limit)` prepared once per limit. The limit is written into the SQL text, hence checked to be a
 * non-negative safe integer (never text from a request: the callers' constants or validated page sizes).
 */
export function limitStatements<P extends unknown[], R>(db: EmbeddedDb, sql: (limit: number) => string): (limit: number) => Statement<P, R> {
  const prepared = new Map<number, Statement<P, R>>();
  return (limit) => {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
    let s = prepared.get(limit);
    if (s === undefined) {
      s = db.prepare<P, R>(sql(limit));
      if (prepared.size < MAX_PREPARED) prepared.set(limit, s);
    }
    return s;
  };
}
