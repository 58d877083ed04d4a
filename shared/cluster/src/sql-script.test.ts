import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MigrationError } from './errors.ts';
import { orderMigrations, parseMigrationFileName, splitSqlStatements } from './sql-script.ts';

describe('migration file names', () => {
  it('parses V<n>__<name>.sql and ignores other files', () => {
    assert.deepEqual(parseMigrationFileName('V002__signal_node.sql'), {
      version: 2,
      name: 'signal_node',
      fileName: 'V002__signal_node.sql',
    });
    for (const other of ['README.md', 'V1_single.sql', 'v1__lower.sql', 'V1__x.sql.bak', 'U1__undo.sql']) {
      assert.equal(parseMigrationFileName(other), null, other);
    }
  });

  it('orders numerically, not lexically', () => {
    const order = orderMigrations(['V10__c.sql', 'V2__b.sql', 'notes.txt', 'V001__a.sql']).map((f) => f.version);
    assert.deepEqual(order, [1, 2, 10]);
  });

  it('refuses two files with one version', () => {
    assert.throws(() => orderMigrations(['V1__a.sql', 'V001__b.sql']), MigrationError);
  });
});

describe('splitSqlStatements', () => {
  it('splits on semicolons and drops comments and empty pieces', () => {
    const sql = `-- header comment
CREATE TABLE a (id INT); # trailing
/* block; with semicolon */
INSERT INTO a VALUES (1);;
`;
    assert.deepEqual(splitSqlStatements(sql), ['CREATE TABLE a (id INT)', 'INSERT INTO a VALUES (1)']);
  });

  it('keeps semicolons and comment markers inside quotes', () => {
    const sql = `INSERT INTO t VALUES ('a;b', "c -- d", 'it''s', 'x\\';y');
CREATE TABLE \`we;ird\` (c VARCHAR(3) COMMENT 'has # hash')`;
    assert.deepEqual(splitSqlStatements(sql), [
      `INSERT INTO t VALUES ('a;b', "c -- d", 'it''s', 'x\\';y')`,
      "CREATE TABLE `we;ird` (c VARCHAR(3) COMMENT 'has # hash')",
    ]);
  });

  it('treats "--" without a following space as an operator, like MySQL', () => {
    assert.deepEqual(splitSqlStatements('SELECT 5--1; SELECT 2'), ['SELECT 5--1', 'SELECT 2']);
  });

  it('reports an unterminated string', () => {
    assert.throws(() => splitSqlStatements("SELECT 'oops"), MigrationError);
  });
});
