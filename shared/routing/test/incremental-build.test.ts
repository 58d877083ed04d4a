// Indexes built as the pages come (compile.ts TableBuilder, prefix-index.ts): an index sized before its
// share of the rules is known grows when more keys come than it was sized for, shrinks when frozen far too
// large, and the table is the same however the rules are paged.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PrefixIndex, PrefixIndexBuilder, encodePrefixAt } from '../src/prefix-index.ts';
import { TableBuilder, compileTable, type Rule, type TableSource } from '../src/index.ts';
import { dest, set, source } from './fixtures.ts';

const hi = new Float64Array(1);
const lo = new Float64Array(1);
function put(b: PrefixIndexBuilder, key: string, value: number): void {
  encodePrefixAt(key, hi, lo, 0);
  b.reserve();
  b.putKey(b.slotOfKey(hi[0]!, lo[0]!), hi[0]!, lo[0]!, value);
}
function lookup(ix: PrefixIndex, key: string): number {
  return PrefixIndex.prepare(key) === key.length ? ix.valueAt(key.length) : -2;
}
const key = (i: number): string => `34${String(i).padStart(10, '0')}`;

describe('prefix index built incrementally', () => {
  it('grows past its hint, keeping every key and value', () => {
    const b = new PrefixIndexBuilder(1);
    for (let i = 0; i < 10_000; i++) put(b, key(i), i);
    put(b, '', 99_999); // the default (length 0) is a key like any other
    const parts = b.freezeParts();
    assert.equal(parts.size, 10_001);
    assert.ok(parts.slots.length / 3 >= 2 * 10_001, 'load ≤ 0.5');
    const ix = PrefixIndex.fromParts(parts);
    for (let i = 0; i < 10_000; i++) assert.equal(lookup(ix, key(i)), i);
    assert.equal(lookup(ix, ''), 99_999);
    assert.equal(lookup(ix, key(10_000)), -1);
  });

  it('shrinks when frozen far larger than its keys, and only then', () => {
    const big = new PrefixIndexBuilder(100_000);
    for (let i = 0; i < 10; i++) put(big, key(i), i);
    const parts = big.freezeParts();
    assert.equal(parts.slots.length / 3, 32); // 10 keys at load ≤ 0.5
    const ix = PrefixIndex.fromParts(parts);
    for (let i = 0; i < 10; i++) assert.equal(lookup(ix, key(i)), i);
    const fair = new PrefixIndexBuilder(1000); // 2,048 slots
    for (let i = 0; i < 300; i++) put(fair, key(i), i);
    assert.equal(fair.freezeParts().slots.length / 3, 2048, 'a load of 1/7 is kept');
  });

  it('refuses a key put without room reserved', () => {
    const b = new PrefixIndexBuilder(1); // 16 slots: 8 keys
    for (let i = 0; i < 8; i++) put(b, key(i), i);
    encodePrefixAt(key(8), hi, lo, 0);
    assert.throws(() => b.putKey(b.slotOfKey(hi[0]!, lo[0]!), hi[0]!, lo[0]!, 8), RangeError);
  });
});

/** Rules over several groups and fields, interleaved, so that indexes are made past the sizing budget. */
function manyGroups(n: number): TableSource {
  const rules: Rule[] = [];
  const fields = ['device', 'caller', 'callee'] as const;
  for (let i = 0; i < n; i++) {
    rules.push({
      id: i * 3 + 1, // ids with gaps
      group: `g${i % 5}`,
      field: fields[i % 3]!,
      prefix: i % 97 === 0 ? key(i).slice(0, 6) : key(i),
      priority: i % 97 === 0 ? 10 + i : i % 7 === 0 ? 1 : 0,
      setId: i % 2 === 0 ? 's' : 't',
      ...(i % 50 === 0 ? { window: { start: '08:00', end: '20:00' } } : {}),
    });
  }
  return source({ destinations: [dest('a'), dest('b'), dest('c')], sets: [set('s', 'hash-device', [['a', 1], ['b', 1]]), set('t', 'swrr', [['b', 2], ['c', 1]])], rules });
}

function buildPaged(src: TableSource, pageRows: number, hint = src.rules.length) {
  const b = new TableBuilder(src, hint);
  for (let i = 0; i < src.rules.length; i += pageRows) b.addRules(src.rules.slice(i, i + pageRows));
  const steps = b.finishSteps();
  for (;;) {
    const s = steps.next();
    if (s.done === true) return s.value;
  }
}

describe('a table built as its pages come', () => {
  it('is the same table whatever the page size, and whatever the rule-count hint', () => {
    const src = manyGroups(6000);
    const whole = compileTable(src);
    assert.ok(whole.ok);
    for (const [pageRows, hint] of [
      [1, 6000],
      [777, 6000],
      [6000, 6000],
      [500, 10], // a hint far too low: the columns and the indexes grow
      [500, 60_000], // far too high: the indexes shrink when frozen
    ] as const) {
      const paged = buildPaged(src, pageRows, hint);
      assert.ok(paged.ok, `${pageRows}/${hint}`);
      assert.equal(paged.table.ruleCount, 6000);
      if (hint === 6000) assert.equal(paged.table.typedBytes, whole.table.typedBytes, `index sizes do not depend on paging (${pageRows})`);
      for (let i = 0; i < 6000; i += 7) {
        for (const g of ['g0', 'g1', 'g2', 'g3', 'g4']) {
          const k = `${key(i)}00000001`;
          const req = { group: g, device: k, caller: k, callee: k, now: Date.UTC(2026, 2, 4, i % 24) };
          assert.deepEqual(paged.table.decide(req, { random: () => 0.5 }), whole.table.decide(req, { random: () => 0.5 }), `${pageRows}/${hint} ${JSON.stringify(req)}`);
        }
      }
    }
  });

  it('indexes rules sharing a key in priority order across pages, and still finds clashes across pages', () => {
    const src = source({
      destinations: [dest('a'), dest('b')],
      sets: [set('s', 'swrr', [['a', 1]]), set('t', 'swrr', [['b', 1]])],
      rules: [
        { id: 1, group: 'g', field: 'device', prefix: '34', priority: 0, setId: 's' },
        { id: 2, group: 'g', field: 'device', prefix: '34', priority: 5, setId: 't' },
      ],
    });
    const r = buildPaged(src, 1);
    assert.ok(r.ok);
    assert.equal(r.table.decide({ group: 'g', device: '3400', now: 0 }).ruleId, 2);
    const clash = buildPaged(source({ ...src, rules: [...src.rules, { id: 3, group: 'g', field: 'device', prefix: '34', priority: 0, setId: 't' }] }), 1);
    assert.ok(!clash.ok);
    assert.match(clash.issues[0]!.path, /id 3/);
    assert.match(clash.issues[0]!.message, /same group, field, prefix, priority and window as rule id 1/);
  });
});
