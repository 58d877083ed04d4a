// readRulePages reads pages ahead while its consumer packs the current one: a page read ahead that fails
// meanwhile must surface to the consumer at its turn, and never as an unhandled rejection (which would end
// the process by default). A fake pool stands in for mysql2's: the paging logic is what is tested here; the
// real server is in test/integration/routing-store.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pool } from 'mysql2/promise';
import { packRuleRows, ROW_END } from '../src/packed-rules.ts';
import { ruleFromArray } from '../src/routing-rows.ts';
import { idRanges, readRulePages } from '../src/rule-pages.mysql.ts';

const row = (id: number): unknown[] => [id, 'media', 'device', '34', 0, 1, null, null];

/** A pool answering the bounds query, then pages of the ids asked for; the range holding `badId` fails at once. */
function fakePool(ids: number[], badId: number): Pool {
  return {
    execute: async (q: { sql: string }, values: number[]) => {
      if (q.sql.startsWith('SELECT MIN(id)')) return [[[Math.min(...ids), Math.max(...ids)]], []];
      const [, after, last] = values as [number, number, number];
      if (badId > after && badId <= last) throw new SyntaxError('Unterminated string in JSON at position 14');
      return [ids.filter((id) => id > after && id <= last).map(row), []];
    },
  } as unknown as Pool;
}

describe('readRulePages', () => {
  it('cuts the id span into ranges of about a page each', () => {
    assert.deepEqual([...idRanges(1, 10, 10, 5)], [{ after: 0, last: 5 }, { after: 5, last: 10 }]);
    assert.deepEqual([...idRanges(1, 10, 10, 20)], [{ after: 0, last: 10 }]);
  });

  it('a page read ahead that fails while the consumer packs is no unhandled rejection, and fails the read at its turn', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const ids = Array.from({ length: 40 }, (_, i) => i + 1);
      const pages = readRulePages(fakePool(ids, 25), { version: 1, ruleCount: 40, pageRows: 10, readAhead: 2, run: (fn) => fn() });
      const got: number[] = [];
      await assert.rejects(async () => {
        for await (const page of pages) {
          got.push(page.length);
          await new Promise((r) => setTimeout(r, 20)); // packing: the pages read ahead settle meanwhile
        }
      }, /Unterminated string/);
      assert.deepEqual(got, [10, 10], 'the pages before the bad one were handed on');
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

/**
 * A pool answering as MariaDB would with pages packed (packPagesOn): COUNT(*), the session's
 * group_concat_max_len and the packed rows of a range (packRuleRows: the server's format), or the rows
 * themselves; `refusePacked` answers the packed statement with an error packet, as a server without it would.
 */
function packingPool(rows: unknown[][], maxBytes: number, refusePacked = false): { pool: Pool; asked: { packed: [number, number][]; rows: [number, number][] } } {
  const asked = { packed: [] as [number, number][], rows: [] as [number, number][] };
  const pool = {
    execute: async (q: { sql: string }, values: number[]) => {
      const ids = rows.map((r) => r[0] as number);
      if (q.sql.startsWith('SELECT MIN(id)')) return [[[Math.min(...ids), Math.max(...ids)]], []];
      const [, after, last] = values as [number, number, number];
      const inRange = rows.filter((r) => (r[0] as number) > after && (r[0] as number) <= last);
      if (q.sql.startsWith('SELECT COUNT(*)')) {
        asked.packed.push([after, last]);
        if (refusePacked) throw Object.assign(new Error("Illegal mix of collations for operation 'concat_ws'"), { errno: 1271, sqlState: 'HY000' });
        const text = packRuleRows(inRange);
        // cut at the limit, as GROUP_CONCAT does
        return [[[inRange.length, maxBytes, inRange.length === 0 ? null : Buffer.from(text).subarray(0, maxBytes)]], []];
      }
      asked.rows.push([after, last]);
      const limit = Number(/LIMIT (\d+)/.exec(q.sql)![1]);
      return [inRange.slice(0, limit), []];
    },
  } as unknown as Pool;
  return { pool, asked };
}

describe('readRulePages, pages packed by the server', () => {
  // a few ids and a window not ASCII: those pages decoded as UTF-8
  const rowOf = (id: number): unknown[] => [id, id % 50 === 0 ? '媒体' : 'media', 'device', String(id), 0, 's', id % 7 === 0 ? '{"start": "09:00", "end": "18:00", "note": "é"}' : null, null];
  // dense, then bunched far above, then sparse: ranges holding many pages are narrowed
  const ids = [...Array.from({ length: 250 }, (_, i) => i + 1), ...Array.from({ length: 150 }, (_, i) => 100_000 + i), ...Array.from({ length: 100 }, (_, i) => 200_000 + i * 997)];
  const rows = ids.map(rowOf);
  const read = async (pool: Pool, packed: boolean): Promise<{ pages: number[]; rules: unknown[] }> => {
    const pages: number[] = [];
    const rules: unknown[] = [];
    for await (const page of readRulePages(pool, { version: 1, ruleCount: ids.length, pageRows: 30, readAhead: 2, packed, run: (fn) => fn() })) {
      pages.push(page.length);
      rules.push(...page);
    }
    return { pages, rules };
  };

  it('gives the rules, in order, in pages of at most pageRows: a range holding more is narrowed, not read whole into one page', async () => {
    const { pool, asked } = packingPool(rows, 1 << 20);
    const { pages, rules } = await read(pool, true);
    assert.deepEqual(rules, rows.map(ruleFromArray));
    assert.ok(Math.max(...pages) <= 30, `pages ${pages.join(', ')}`);
    assert.deepEqual(asked.rows, [], 'no page read row by row');
    // the bunched ids (150 in a range sized for 30) were asked for again in narrower ranges
    assert.ok(asked.packed.some(([a, l]) => a >= 99_000 && l - a < 1000), JSON.stringify(asked.packed.slice(0, 20)));
  });

  it('a page cut at group_concat_max_len, or holding a separator in a column, is read row by row: the same rules', async () => {
    const { pool, asked } = packingPool(rows, 300);
    const { pages, rules } = await read(pool, true);
    assert.deepEqual(rules, rows.map(ruleFromArray));
    assert.ok(Math.max(...pages) <= 30);
    assert.ok(asked.rows.length > 0 && asked.packed.length > asked.rows.length, 'pages short enough stayed packed');

    const odd = rows.map((r, i) => (i === 260 ? r.map((x, c) => (c === 5 ? `s${ROW_END}t` : x)) : r));
    const sep = packingPool(odd, 1 << 20);
    assert.deepEqual((await read(sep.pool, true)).rules, odd.map(ruleFromArray));
    assert.equal(sep.asked.rows.length, 1, 'only the page holding it');
  });

  it('a server refusing the packed statement: read row by row from there on', async () => {
    const { pool, asked } = packingPool(rows, 1 << 20, true);
    const { pages, rules } = await read(pool, true);
    assert.deepEqual(rules, rows.map(ruleFromArray));
    assert.ok(Math.max(...pages) <= 30);
    assert.ok(asked.packed.length <= 2, 'refused once per page in flight at most');
  });
});
