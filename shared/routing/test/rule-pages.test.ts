// readRulePages reads pages ahead while its consumer packs the current one: a page read ahead that fails
// meanwhile must surface to the consumer at its turn, and never as an unhandled rejection (which would end
// the process by default). A fake pool stands in for mysql2's: the paging logic is what is tested here; the
// real server is in test/integration/routing-store.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pool } from 'mysql2/promise';
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
