// limitStatements (storage/limit-statements.sqlite.ts): one prepared statement per LIMIT value, the value
// written into the SQL (a bound LIMIT parameter makes SQLite re-prepare the statement at every run),
// only integers accepted, the cache bounded and still correct past its bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { limitStatements } from '../../src/storage/limit-statements.sqlite.ts';

describe('limitStatements', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (k TEXT, n INTEGER); CREATE INDEX t_k ON t (k, n);');
  const insert = db.prepare('INSERT INTO t (k, n) VALUES (?, ?)');
  for (let n = 0; n < 20; n++) insert.run('a', n);
  const page = limitStatements<[string], { n: number }>(db, (limit) => `SELECT n FROM t WHERE k = ? ORDER BY n LIMIT ${limit}`);

  it('prepares a statement once per limit, the limit in its text, no LIMIT parameter', () => {
    const s = page(3);
    assert.equal(page(3), s);
    assert.equal(s.source, 'SELECT n FROM t WHERE k = ? ORDER BY n LIMIT 3');
    assert.deepEqual(s.all('a').map((r) => r.n), [0, 1, 2]);
    assert.deepEqual(page(0).all('a'), []);
    assert.notEqual(page(4), s);
  });

  it('refuses a limit that is not a non-negative integer (it is written into SQL)', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) assert.throws(() => page(bad), RangeError, String(bad));
  });

  it('keeps at most 8 limits prepared; another limit still runs correctly', () => {
    for (let l = 1; l <= 12; l++) assert.equal(page(l).all('a').length, l);
    assert.equal(page(12).all('a').length, 12);
    assert.notEqual(page(12), page(12), 'past the bound: prepared for the one run');
  });
});
