import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_CSV_ROWS, parseDeviceCsv, splitCsvLine } from './device-csv.ts';

const A = '34020000001320000001';
const B = '34020000001320000002';

describe('device CSV of the bulk import', () => {
  it('splits RFC 4180 lines: quotes, doubled quotes, commas inside quotes, empty fields', () => {
    assert.deepEqual(splitCsvLine('a,b,c'), ['a', 'b', 'c']);
    assert.deepEqual(splitCsvLine('"gate, north","say ""hi""",'), ['gate, north', 'say "hi"', '']);
    assert.deepEqual(splitCsvLine(' a , b '), ['a', 'b']);
    assert.equal(splitCsvLine('"open'), null);
  });

  it('reads rows in the default column order, skipping blanks and comments', () => {
    const csv = parseDeviceCsv(`# cameras\n${A},gate 1,pw\n\n${B}\r\n`);
    assert.deepEqual(csv.problems, []);
    assert.deepEqual(csv.rows, [
      { line: 2, body: { deviceId: A, name: 'gate 1', password: 'pw' } },
      { line: 4, body: { deviceId: B } },
    ]);
  });

  it('reads a header in any order and case; refuses an unknown column', () => {
    const csv = parseDeviceCsv(`TenantId,deviceid,name\nt1,${A},"lobby, east"\n`);
    assert.deepEqual(csv.rows, [{ line: 2, body: { tenantId: 't1', deviceId: A, name: 'lobby, east' } }]);
    const bad = parseDeviceCsv(`deviceId,colour\n${A},red\n`);
    assert.deepEqual([bad.rows.length, bad.problems[0]?.problem], [0, 'unknown column colour (columns: deviceId, name, password, tenantId, charset)']);
  });

  it('names the line of each bad row and keeps the good ones', () => {
    const csv = parseDeviceCsv(`${A}\n3402,short\n"${B}\n${B},a,b,c,d,e\n${B}\n`);
    assert.deepEqual(csv.rows.map((r) => r.line), [1, 5]);
    assert.deepEqual(csv.problems, [
      { line: 2, problem: 'deviceId must be a 20-digit code' },
      { line: 3, problem: 'a quote is not closed' },
      { line: 4, problem: '6 fields, at most 5' },
    ]);
  });

  it('bounds the rows read', () => {
    assert.equal(MAX_CSV_ROWS, 1_000_000);
    const csv = parseDeviceCsv(`${A}\n`.repeat(12), 10);
    assert.equal(csv.rows.length, 10);
    assert.deepEqual(csv.problems, [{ line: 11, problem: 'more than 10 devices: the rest is not read' }]);
  });
});
