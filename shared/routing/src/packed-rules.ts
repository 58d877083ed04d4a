/**
 * A page of rules packed into one string (docs/routing.md, build + swap: "pages packed by the server"): the
 * MySQL build thread has MariaDB concatenate a page's rows (GROUP_CONCAT, rule-pages.mysql.ts) instead of
 * sending them row by row, so the driver decodes one string per page instead of eight values per row (its
 * per-row parsing was most of a 1,000,000-rule read). Each row is its eight columns in RULE_COLUMNS order
 * joined by FIELD_SEP, ended by ROW_END; a JSON column is '' for NULL, else JSON_MARK and the JSON text, so a
 * NULL stays apart from any text. Pure: no I/O.
 *
 * The separators are control characters that valid JSON never holds raw, but a group or set id may (only
 * its length is checked), and a row written past the API's checks may hold anything: a page is taken only
 * when it holds exactly `count` ROW_ENDs and every row exactly seven FIELD_SEPs, which is so exactly when no
 * column holds either character (each one in a column adds to the counts). Otherwise `parsePackedRules`
 * answers undefined and the caller reads the page row by row: the rules and their checks are the same
 * either way.
 */
import type { GrayRelease, MatchField, Rule, TimeWindow } from './types.ts';

export const FIELD_SEP = '\x1f';
export const ROW_END = '\x1e';
/** Before a JSON column's text: '' alone is NULL. */
export const JSON_MARK = '=';
/** Columns of a packed row (RULE_COLUMNS). */
const FIELDS = 8;
/** Where a row's seven separators are (reused: nothing allocated per row for it). */
const at = new Int32Array(FIELDS - 1);

/** The column's value as ruleFromArray takes it: undefined for NULL, else the JSON text parsed. */
function jsonField(s: string, from: number, to: number): unknown {
  if (from === to) return undefined;
  // a JSON column's text always starts with the mark; a row without it was not packed by PACKED_RULE_EXPR
  if (s.charCodeAt(from) !== 0x3d) throw new SyntaxError('packed rule page: a JSON column without its mark');
  return JSON.parse(s.slice(from + 1, to));
}

/** A number column: digits (15 at most: exact) read in place, anything else as Number() reads its text. */
function numberAt(s: string, from: number, to: number): number {
  if (to - from > 15) return Number(s.slice(from, to));
  let v = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return Number(s.slice(from, to));
    v = v * 10 + d;
  }
  return to === from ? Number('') : v;
}

/** The text of s[from, to): `prev` itself when it is that text (a page's rows mostly share group and field). */
function textAt(s: string, from: number, to: number, prev: string): string {
  return to - from === prev.length && s.startsWith(prev, from) ? prev : s.slice(from, to);
}

/**
 * The `count` rules of a packed page, in the page's order; undefined when the page is not exactly `count`
 * rows of eight columns (a column holding a separator: read the page row by row instead). A JSON column that
 * does not parse throws, as the row-by-row read does.
 */
export function parsePackedRules(s: string, count: number): Rule[] | undefined {
  const rules: Rule[] = [];
  let p = 0;
  let group = '';
  let field = '';
  for (let n = 0; n < count; n++) {
    const end = s.indexOf(ROW_END, p);
    if (end < 0) return undefined;
    let q = p;
    for (let f = 0; f < FIELDS - 1; f++) {
      const sep = s.indexOf(FIELD_SEP, q);
      if (sep < 0 || sep > end) return undefined;
      at[f] = sep;
      q = sep + 1;
    }
    // an eighth separator in this row: a column holds one
    const more = s.indexOf(FIELD_SEP, q);
    if (more >= 0 && more < end) return undefined;
    const window = jsonField(s, at[5]! + 1, at[6]!) as TimeWindow | undefined;
    const release = jsonField(s, at[6]! + 1, end) as GrayRelease | undefined;
    group = textAt(s, at[0]! + 1, at[1]!, group);
    field = textAt(s, at[1]! + 1, at[2]!, field);
    const r: { -readonly [K in keyof Rule]: Rule[K] } = {
      id: numberAt(s, p, at[0]!),
      group,
      field: field as MatchField,
      prefix: s.slice(at[2]! + 1, at[3]),
      priority: numberAt(s, at[3]! + 1, at[4]!),
      setId: s.slice(at[4]! + 1, at[5]),
    };
    if (window !== undefined) r.window = window;
    if (release !== undefined) r.release = release;
    rules.push(r);
    p = end + 1;
  }
  // more than `count` rows, or a ROW_END in a column (the rows above were then cut at it)
  return p === s.length ? rules : undefined;
}

/** A value of RULE_COLUMNS order as the server packs it (tests and the build thread's warm-up). */
function packedField(v: unknown, json: boolean): string {
  if (json) return v === null || v === undefined ? '' : JSON_MARK + String(v);
  return String(v);
}

/** Rows as arrays in RULE_COLUMNS order (JSON columns as text or null), packed as the server packs them. */
export function packRuleRows(rows: Iterable<readonly unknown[]>): string {
  const out: string[] = [];
  for (const r of rows) out.push(r.map((v, i) => packedField(v, i >= 6)).join(FIELD_SEP) + ROW_END);
  return out.join('');
}
