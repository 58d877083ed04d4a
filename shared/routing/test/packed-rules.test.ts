// A page packed by the server into one string (packed-rules.ts) gives the rules its rows give one by one
// (ruleFromArray), or nothing at all when a column holds a separator or the page is not whole: then the
// caller reads the rows themselves. The packed strings here are written by hand or by packRuleRows, which
// the real server's output is checked against in test/integration/routing-store.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIELD_SEP, packRuleRows, parsePackedRules, ROW_END } from '../src/packed-rules.ts';
import { ruleFromArray } from '../src/routing-rows.ts';
import { warmupRows } from '../src/warmup-table.ts';

const WINDOW = '{"start": "09:00", "end": "18:00", "days": [1, 2]}';
const rows: unknown[][] = [
  [1, 'placement', 'device', '', 0, 'rr', null, null],
  [2, '媒体', 'caller', '3402', -5, 'set ü', WINDOW, null],
  [9007199254740991, 'upstream', 'callee', '34020000001320000001', 1_000_000, 'hash', null, '{"canarySetId": "c", "key": "device", "steps": [10], "step": 1}'],
  [4, 'placement', 'device', '11', 3, 'rr', 'null', null],
];

describe('packed rule pages', () => {
  it('a page gives the rules its rows give one by one: NULL apart from JSON text, numbers, any text in ids', () => {
    const text = packRuleRows(rows);
    assert.equal(text, `1${FIELD_SEP}placement${FIELD_SEP}device${FIELD_SEP}${FIELD_SEP}0${FIELD_SEP}rr${FIELD_SEP}${FIELD_SEP}${ROW_END}` + text.slice(text.indexOf(ROW_END) + 1));
    assert.deepEqual(parsePackedRules(text, rows.length), rows.map(ruleFromArray));
    // a JSON column holding the text 'null' is not a NULL column (as row by row)
    assert.equal(parsePackedRules(text, rows.length)![3]!.window, null);
    assert.ok(!('window' in parsePackedRules(text, rows.length)![0]!));
    const many = [...warmupRows(5000)];
    assert.deepEqual(parsePackedRules(packRuleRows(many), many.length), many.map(ruleFromArray));
    assert.deepEqual(parsePackedRules('', 0), []);
  });

  it('a column holding a separator gives nothing (the page is read row by row), however the rest lines up', () => {
    const withSep = (i: number, col: number, v: string): unknown[][] => rows.map((r, k) => (k === i ? r.map((x, c) => (c === col ? v : x)) : r));
    // a field separator in a group id: nine columns in that row
    assert.equal(parsePackedRules(packRuleRows(withSep(1, 1, `a${FIELD_SEP}b`)), rows.length), undefined);
    // a row end in a set id: the row cut in two short ones
    assert.equal(parsePackedRules(packRuleRows(withSep(1, 5, `s${ROW_END}t`)), rows.length), undefined);
    // in a release (JSON written past the column's check), forged to read as one more well-formed row:
    // 2 + 1 rows of eight columns each, but one row end more than the page's rows
    const forged = `null${ROW_END}77${FIELD_SEP}placement${FIELD_SEP}device${FIELD_SEP}99${FIELD_SEP}0${FIELD_SEP}rr${FIELD_SEP}`;
    const two = [rows[0]!, rows[1]!.map((x, c) => (c === 6 ? forged : x))];
    const text = packRuleRows(two);
    assert.equal(text.split(ROW_END).length - 1, 3, 'three rows end');
    assert.equal(parsePackedRules(text, 2), undefined);
    assert.equal(parsePackedRules(text, 3), undefined, 'nor when the count matches the row ends: a row holds nine separators');
  });

  it('a page that is not exactly `count` rows gives nothing: cut short, more rows, fewer', () => {
    const text = packRuleRows(rows);
    assert.equal(parsePackedRules(text.slice(0, -1), rows.length), undefined);
    assert.equal(parsePackedRules(text.slice(0, text.length - 10), rows.length), undefined);
    assert.equal(parsePackedRules(text, rows.length - 1), undefined);
    assert.equal(parsePackedRules(text, rows.length + 1), undefined);
  });

  it('a JSON column that does not parse throws, as row by row', () => {
    const bad = [[5, 'placement', 'device', '99', 0, 'rr', '{"start": "09:', null]];
    assert.throws(() => ruleFromArray(bad[0]!), SyntaxError);
    assert.throws(() => parsePackedRules(packRuleRows(bad), 1), SyntaxError);
    // and a JSON column without its mark (not packed the server's way)
    assert.throws(() => parsePackedRules(`5${FIELD_SEP}p${FIELD_SEP}device${FIELD_SEP}9${FIELD_SEP}0${FIELD_SEP}rr${FIELD_SEP}{}${FIELD_SEP}${ROW_END}`, 1), SyntaxError);
  });
});
