/**
 * A published version's rules read from MySQL/MariaDB in pages, in id order, with the next pages already
 * being read while the consumer packs the current one (docs/routing.md, build + swap).
 *
 * Keyset pagination on the primary key (version, id), never OFFSET: each page is one index range scan. The
 * id span of the version (MIN and MAX on the key: two index dives) is cut into ranges expected to hold a page
 * each (from the rule count), and up to `readAhead` ranges are read at once, on as many connections of the
 * pool: the server reads and sends the next pages while this thread parses and packs, instead of query,
 * wait, pack, query … A range holding more than a page (ids bunched) is read on by keyset from its last id
 * before the next range is handed on; an empty one costs a query. Bounded: at most `readAhead` pages in
 * flight or waiting, each at most `pageRows` rows. Rows come over the binary protocol (a prepared
 * statement) as arrays: numbers arrive as numbers and NULLs as a bitmap, no text to parse per column, and
 * no object with named properties per row.
 */
import type { Pool, RowDataPacket } from 'mysql2/promise';

/** The columns read, in the order ruleFromArray takes them. */
export const RULE_COLUMNS = 'id, grp, field, prefix, priority, set_id, time_window, gray_release';

export interface RulePagesOptions {
  readonly version: number;
  /** Rules the version holds (routing_version.rule_count): sizes the ranges. */
  readonly ruleCount: number;
  /** Rows per page, 1..100,000. */
  readonly pageRows: number;
  /** Pages read at once (connections of the pool in use), 1..4. */
  readonly readAhead: number;
  /** Wraps every query (error mapping, closed store). */
  readonly run: <T>(fn: () => Promise<T>) => Promise<T>;
}

interface Range {
  /** Ids above this … */
  readonly after: number;
  /** … up to this one, inclusive. */
  readonly last: number;
}

/** The rows of one range read: rows as arrays in RULE_COLUMNS order. */
interface Fetched {
  readonly range: Range;
  readonly rows: unknown[][];
}

/** Ranges of about `pageRows` ids' worth of rules each, covering (min - 1, max]. */
export function* idRanges(min: number, max: number, ruleCount: number, pageRows: number): Generator<Range> {
  const span = max - min + 1;
  // ids too large for exact doubles, or nothing to split: one range, read by keyset alone
  const width = !Number.isSafeInteger(max) || ruleCount <= pageRows ? span : Math.max(1, Math.floor((span * pageRows) / ruleCount));
  for (let after = min - 1; after < max; after += width) yield { after, last: Math.min(max, after + width) };
}

export async function* readRulePages(pool: Pool, o: RulePagesOptions): AsyncGenerator<unknown[][]> {
  const [b] = await o.run(() => pool.execute<RowDataPacket[]>({ sql: 'SELECT MIN(id), MAX(id) FROM routing_version_rule WHERE version = ?', rowsAsArray: true }, [o.version]));
  const bounds = b[0] as unknown as [unknown, unknown] | undefined;
  if (bounds === undefined || bounds[0] === null || bounds[1] === null) return;
  const pageRows = Math.max(1, Math.min(100_000, Math.floor(o.pageRows)));
  const readAhead = Math.max(1, Math.min(4, Math.floor(o.readAhead)));
  // the page size is part of the statement's text (LIMIT takes no double): one prepared statement per size
  const sql = `SELECT ${RULE_COLUMNS} FROM routing_version_rule WHERE version = ? AND id > ? AND id <= ? ORDER BY id LIMIT ${pageRows}`;
  const fetch = (range: Range): Promise<Fetched> => {
    const page = o.run(async () => {
      const [rows] = await pool.execute<RowDataPacket[]>({ sql, rowsAsArray: true }, [o.version, range.after, range.last]);
      return { range, rows: rows as unknown as unknown[][] };
    });
    // A page read ahead may fail while the consumer packs an earlier one: without a handler at once that is an
    // unhandled rejection (fatal to the process by default). Its failure still reaches the consumer when the
    // page's turn comes (`await queue.shift()`).
    page.catch(() => undefined);
    return page;
  };
  const ranges = idRanges(Number(bounds[0]), Number(bounds[1]), o.ruleCount, pageRows);
  // in id order: the head is the page handed on next
  const queue: Promise<Fetched>[] = [];
  const fill = (): void => {
    while (queue.length < readAhead) {
      const r = ranges.next();
      if (r.done === true) return;
      queue.push(fetch(r.value));
    }
  };
  try {
    fill();
    while (queue.length > 0) {
      const { range, rows } = await queue.shift()!;
      // a full page may not be the whole range: the rest of it comes before the next range
      if (rows.length === pageRows) queue.unshift(fetch({ after: Number(rows[rows.length - 1]![0]), last: range.last }));
      fill();
      if (rows.length > 0) yield rows;
    }
  } finally {
    // a consumer that stopped early (or a failed page): the pages still in flight are dropped
    for (const p of queue) p.catch(() => undefined);
  }
}
