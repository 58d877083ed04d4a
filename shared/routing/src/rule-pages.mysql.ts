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
 *
 * `packed` (the build thread's source): each page comes as one string the server packs (GROUP_CONCAT of the
 * rows, packed-rules.ts), so the driver decodes one value per page instead of eight per row; split and
 * checked here. A range is then read whole (no LIMIT in the aggregate): one found to hold more than a page
 * is narrowed (its width scaled by pageRows / count, kept for the rest of it) and read again, so a page
 * still holds at most `pageRows` rules. A packed page that cannot be taken — cut at the session's
 * group_concat_max_len (PACKED_PAGE_MAX_BYTES: the bound on a page's bytes), NULL (over the server's
 * max_allowed_packet), a column holding a separator — or a packed query the server refuses, is read row by
 * row as above: the same rules, the same checks after.
 */
import { isAscii } from 'node:buffer';
import type { Pool, PoolConnection, RowDataPacket } from 'mysql2/promise';
import { FIELD_SEP, JSON_MARK, parsePackedRules, ROW_END } from './packed-rules.ts';
import { ruleFromArray } from './routing-rows.ts';
import type { Rule } from './types.ts';

/** The columns read, in the order ruleFromArray takes them. */
export const RULE_COLUMNS = 'id, grp, field, prefix, priority, set_id, time_window, gray_release';

/** One row of RULE_COLUMNS packed (packed-rules.ts): NULL JSON as '', other JSON as JSON_MARK + its text. */
const sepSql = (c: string): string => `CHAR(${c.charCodeAt(0)} USING utf8mb4)`;
const jsonSql = (col: string): string => `IFNULL(CONCAT('${JSON_MARK}', ${col}), '')`;
export const PACKED_ROW_SQL = `CONCAT(CONCAT_WS(${sepSql(FIELD_SEP)}, id, grp, field, prefix, priority, set_id, ${jsonSql('time_window')}, ${jsonSql('gray_release')}), ${sepSql(ROW_END)})`;

/**
 * Longest packed page, bytes (group_concat_max_len of the build thread's connections): a page of 20,000
 * rules is about 1.2 MB; one longer (large JSON windows or releases) is read row by row.
 */
export const PACKED_PAGE_MAX_BYTES = 8 * 1024 * 1024;

/** Sets the session's group_concat_max_len on each new connection of `pool` (before any query of it). */
export function packPagesOn(pool: Pool, maxBytes = PACKED_PAGE_MAX_BYTES): void {
  const bytes = Math.max(1024, Math.min(64 * 1024 * 1024, Math.floor(maxBytes)));
  // a connection's commands run in order: this comes before any page query on it. If it fails, the
  // server's own limit applies and a page cut there is read row by row.
  pool.on('connection', (c: PoolConnection) => {
    (c as unknown as { query(sql: string, cb: (err: unknown) => void): void }).query(`SET SESSION group_concat_max_len = ${bytes}`, () => undefined);
  });
}

export interface RulePagesOptions {
  readonly version: number;
  /** Rules the version holds (routing_version.rule_count): sizes the ranges. */
  readonly ruleCount: number;
  /** Rows per page, 1..100,000. */
  readonly pageRows: number;
  /** Pages read at once (connections of the pool in use), 1..4. */
  readonly readAhead: number;
  /** Pages packed by the server into one string each (above; the pool set up by packPagesOn). Default false. */
  readonly packed?: boolean;
  /** Wraps every query (error mapping, closed store). */
  readonly run: <T>(fn: () => Promise<T>) => Promise<T>;
}

interface Range {
  /** Ids above this … */
  readonly after: number;
  /** … up to this one, inclusive. */
  readonly last: number;
  /** Packed reads: ids asked for at once (narrowed where the range was found dense). Default: all of it. */
  readonly width?: number;
}

/** A page read: its rules, and the rest of its range when the page did not cover it (read before the next range). */
interface Fetched {
  readonly rules: readonly Rule[];
  readonly rest: Range | undefined;
}

/** Ranges of about `pageRows` ids' worth of rules each, covering (min - 1, max]. */
export function* idRanges(min: number, max: number, ruleCount: number, pageRows: number): Generator<Range> {
  const span = max - min + 1;
  // ids too large for exact doubles, or nothing to split: one range, read by keyset alone
  const width = !Number.isSafeInteger(max) || ruleCount <= pageRows ? span : Math.max(1, Math.floor((span * pageRows) / ruleCount));
  for (let after = min - 1; after < max; after += width) yield { after, last: Math.min(max, after + width) };
}

/**
 * The page's text. It comes as bytes (the statement casts it to BINARY: the driver would decode a megabyte of
 * UTF-8 per page, at ~10 ns a byte in Node 20), and is mostly ASCII (digits, ids): then one byte is one
 * character and latin1 copies it as is (about twenty times cheaper, docs/routing.md); else UTF-8.
 */
function textOf(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/** A server's refusal of a statement (an error packet: errno and SQL state), not a lost connection. */
function refusedByServer(err: unknown): boolean {
  const e = err as { errno?: unknown; sqlState?: unknown; fatal?: unknown } | null;
  return typeof e === 'object' && e !== null && typeof e.errno === 'number' && typeof e.sqlState === 'string' && e.fatal !== true;
}

export async function* readRulePages(pool: Pool, o: RulePagesOptions): AsyncGenerator<readonly Rule[]> {
  const [b] = await o.run(() => pool.execute<RowDataPacket[]>({ sql: 'SELECT MIN(id), MAX(id) FROM routing_version_rule WHERE version = ?', rowsAsArray: true }, [o.version]));
  const bounds = b[0] as unknown as [unknown, unknown] | undefined;
  if (bounds === undefined || bounds[0] === null || bounds[1] === null) return;
  const pageRows = Math.max(1, Math.min(100_000, Math.floor(o.pageRows)));
  const readAhead = Math.max(1, Math.min(4, Math.floor(o.readAhead)));
  // packed ranges are cut by id arithmetic: exact doubles only (else keyset pages alone)
  let packed = o.packed === true && Number.isSafeInteger(Number(bounds[1]));
  // the page size is part of the statement's text (LIMIT takes no double): one prepared statement per size
  const sql = `SELECT ${RULE_COLUMNS} FROM routing_version_rule WHERE version = ? AND id > ? AND id <= ? ORDER BY id LIMIT ${pageRows}`;
  const packedSql = `SELECT COUNT(*), @@SESSION.group_concat_max_len, CAST(GROUP_CONCAT(${PACKED_ROW_SQL} SEPARATOR '') AS BINARY) FROM routing_version_rule WHERE version = ? AND id > ? AND id <= ?`;
  const rowsOf = async (after: number, last: number): Promise<unknown[][]> => {
    const [rows] = await pool.execute<RowDataPacket[]>({ sql, rowsAsArray: true }, [o.version, after, last]);
    return rows as unknown as unknown[][];
  };
  const fetchRows = async (range: Range): Promise<Fetched> => {
    const rows = await rowsOf(range.after, range.last);
    // a full page may not be the whole range: the rest of it comes before the next range
    return { rules: rows.map(ruleFromArray), rest: rows.length === pageRows ? { after: Number(rows[rows.length - 1]![0]), last: range.last } : undefined };
  };
  const fetchPacked = async (range: Range): Promise<Fetched> => {
    let width = range.width ?? range.last - range.after;
    for (;;) {
      const upTo = Math.min(range.last, range.after + width);
      let r: RowDataPacket[];
      try {
        [r] = await pool.execute<RowDataPacket[]>({ sql: packedSql, rowsAsArray: true }, [o.version, range.after, upTo]);
      } catch (err) {
        if (!refusedByServer(err)) throw err;
        packed = false; // a server without this SQL: row by row from here on
        return fetchRows(range);
      }
      const [count, maxBytes, bytes] = r[0] as unknown as [unknown, unknown, unknown];
      const n = Number(count);
      // too dense for a page (ids bunched): narrowed and read again (a range of width 1 holds one rule at most)
      // (scaled from the span asked for, which a range's end may have made shorter than the width)
      if (n > pageRows && upTo - range.after > 1) {
        width = Math.max(1, Math.floor(((upTo - range.after) * pageRows) / n));
        continue;
      }
      const rest = upTo < range.last ? { after: upTo, last: range.last, width } : undefined;
      // whole (shorter than the limit by more than a character: not cut) and exactly n rows of eight columns
      const whole = Buffer.isBuffer(bytes) && bytes.length + 4 <= Number(maxBytes);
      const rules = n === 0 ? [] : whole ? parsePackedRules(textOf(bytes), n) : undefined;
      // else the same rows one by one (n ≤ pageRows: one query)
      return { rules: rules ?? (await rowsOf(range.after, upTo)).map(ruleFromArray), rest };
    }
  };
  const fetch = (range: Range): Promise<Fetched> => {
    const page = o.run(() => (packed ? fetchPacked(range) : fetchRows(range)));
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
      const { rules, rest } = await queue.shift()!;
      if (rest !== undefined) queue.unshift(fetch(rest));
      fill();
      if (rules.length > 0) yield rules;
    }
  } finally {
    // a consumer that stopped early (or a failed page): the pages still in flight are dropped
    for (const p of queue) p.catch(() => undefined);
  }
}
