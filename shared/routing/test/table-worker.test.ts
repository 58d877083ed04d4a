// A table built on a worker thread (table-worker.ts) decides exactly as the same table compiled on this
// thread; a version that does not validate there is refused and the old table stays; builds are bounded
// (one at a time, a deadline).
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { FakeClock } from '@vms/clock';
import {
  compileTable,
  createWorkerTableBuilder,
  memoryVersionSource,
  tableDataReader,
  ROUTING_RELOAD_CHANNEL,
  RoutingReloader,
  TableBuildAbortedError,
  type DecideRequest,
  type ReloadEvent,
  type Rule,
  type TableData,
} from '../src/index.ts';
import { dest, set } from './fixtures.ts';

const TZ = 'Asia/Shanghai';
const destinations = ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => dest(id));
const sets = [
  set('rr', 'round-robin', [['a'], ['b'], ['c']]),
  set('sw', 'swrr', [['a', 5], ['b', 1], ['c', 1]]),
  set('hash', 'hash-device', [['c'], ['d'], ['e'], ['f']]),
  set('prio', 'priority', [['d', 1, 2], ['e', 1, 1]]),
  set('canary', 'hash-callid', [['e'], ['f']]),
];

/** Prefixes of every length class on three fields and two groups, windows, releases, priorities. */
function variedRules(): Rule[] {
  const rules: Rule[] = [];
  let id = 1;
  const add = (r: Omit<Rule, 'id'>): void => void rules.push({ id: id++, ...r });
  add({ group: 'media', field: 'device', prefix: '', priority: 0, setId: 'rr' });
  add({ group: 'media', field: 'callee', prefix: '', priority: 0, setId: 'sw' });
  for (let p = 11; p < 20; p++) {
    add({ group: 'media', field: 'device', prefix: String(p), priority: 0, setId: 'hash' });
    for (let c = 1; c <= 5; c++) {
      const city = `${p}${String(c).padStart(2, '0')}`;
      add({ group: 'media', field: 'device', prefix: city, priority: 0, setId: c % 2 === 0 ? 'sw' : 'prio' });
      // office hours beside an always-valid rule of lower priority: outside the window the lower one applies
      add({ group: 'media', field: 'device', prefix: `${city}01`, priority: 5, setId: 'prio', window: { start: '09:00', end: '18:00', days: [1, 2, 3, 4, 5] } });
      add({ group: 'media', field: 'device', prefix: `${city}01`, priority: 0, setId: 'rr' });
      add({ group: 'media', field: 'device', prefix: `${city}020000`, priority: 0, setId: 'hash', window: { from: '2026-01-01', until: '2026-06-30' } });
      add({
        group: 'media',
        field: 'device',
        prefix: `${city}0300001320000001`,
        priority: 0,
        setId: 'hash',
        release: { canarySetId: 'canary', key: 'device', steps: [1, 10, 50, 100], step: 2 },
      });
      add({
        group: 'media',
        field: 'device',
        prefix: `${city}04`,
        priority: 0,
        setId: 'rr',
        release: {
          canarySetId: 'canary',
          key: 'callid',
          steps: [10, 100],
          step: 1,
          conditions: [
            { field: 'source', op: 'cidr', value: '10.0.0.0/8' },
            { field: 'caller', op: 'regex', value: '^3402' },
          ],
          window: { start: '20:00', end: '08:00' },
        },
      });
    }
    add({ group: 'upstream', field: 'callee', prefix: `${p}0000`, priority: 0, setId: 'prio' });
    add({ group: 'upstream', field: 'caller', prefix: `${p}000000`, priority: 1, setId: 'sw' });
  }
  return rules;
}

function requests(): DecideRequest[] {
  const out: DecideRequest[] = [];
  // a Wednesday at 10:00 and at 22:00 in Shanghai, and a Sunday in 2025
  const times = [Date.UTC(2026, 2, 4, 2, 0), Date.UTC(2026, 2, 4, 14, 0), Date.UTC(2025, 10, 2, 3, 30)];
  let n = 0;
  for (const now of times) {
    for (let p = 10; p < 21; p++) {
      for (let c = 0; c <= 6; c++) {
        for (const unit of ['01', '02', '03', '04', '99']) {
          const device = `${p}${String(c).padStart(2, '0')}${unit}00001320000001`.slice(0, 20);
          const callId = `call-${n++}`;
          out.push({ group: 'media', device, now, callId, caller: n % 2 === 0 ? '34020000002000000001' : '11000000002000000001', source: n % 3 === 0 ? '10.1.2.3' : '192.168.1.1' });
          out.push({ group: 'media', callee: `${p}0000`, now });
          out.push({ group: 'upstream', callee: `${p}00001234`, caller: `${p}00000099`, now, callId });
        }
      }
    }
  }
  return out;
}

const data = (version: number, rules: Rule[]): TableData => ({ version, destinations, sets, rules });
const fixed = { random: () => 0.42 };

describe('routing table built on a worker thread', () => {
  it('decides exactly as the table compiled on this thread (prefixes, windows, releases, priorities, counters)', async () => {
    const rules = variedRules();
    const local = compileTable({ ...data(7, rules), timeZone: TZ });
    assert.ok(local.ok);
    const builder = createWorkerTableBuilder({ source: memoryVersionSource(data(7, rules)) });
    const r = await builder.build(7, TZ);
    assert.ok(r?.ok === true, JSON.stringify(r));
    assert.equal(builder.running, 0);
    assert.equal(r.table.version, 7);
    assert.equal(r.table.ruleCount, local.table.ruleCount);
    assert.equal(r.table.typedBytes, local.table.typedBytes);
    const reqs = requests();
    const reasons = new Set<string>();
    let canary = 0;
    for (const req of reqs) {
      const want = local.table.decide(req, fixed);
      assert.deepEqual(r.table.decide(req, fixed), want, JSON.stringify(req));
      reasons.add(want.reason);
      if (want.side === 'canary') canary++;
    }
    // the comparison covered the cases it claims to
    assert.ok(reasons.has('chosen') && reasons.has('no-rule'), [...reasons].join());
    assert.ok(canary > 0, 'some requests went to a canary');
    await builder.close();
  });

  it('a version that does not validate is refused on the thread: the old table stays, a warning, a refused event', async () => {
    const good = data(1, variedRules());
    const bad = data(2, [...variedRules(), { id: 9999, group: 'media', field: 'device', prefix: '12a', priority: 0, setId: 'nope' }]);
    let current = 1;
    const byVersion = new Map([
      [1, good],
      [2, bad],
    ]);
    const warns: string[] = [];
    const events: ReloadEvent[] = [];
    const onEvent = (e: unknown): void => void events.push(e as ReloadEvent);
    diagnostics.subscribe(ROUTING_RELOAD_CHANNEL, onEvent);
    try {
      const reloader = new RoutingReloader({
        store: { currentVersion: async () => current, readVersion: async () => assert.fail('the main thread must not read the version') },
        clock: new FakeClock(0),
        timeZone: TZ,
        defaults: { destinations: [], sets: [], rules: [] },
        log: { info: () => undefined, warn: (_o, m) => void warns.push(m) },
        build: async (v, tz) => {
          const b = createWorkerTableBuilder({ source: memoryVersionSource(byVersion.get(v)!) });
          try {
            return await b.build(v, tz);
          } finally {
            await b.close();
          }
        },
      });
      assert.equal(await reloader.check(), 'swapped');
      const before = reloader.table;
      current = 2;
      assert.equal(await reloader.check(), 'refused');
      assert.equal(reloader.table, before, 'the old table stays');
      assert.deepEqual(reloader.stats, { version: 1, swaps: 1, refused: 1, failures: 0, refusedVersion: 2 });
      assert.equal(warns.length, 1);
      assert.match(warns[0]!, /refused/);
      const refused = events.find((e) => e.outcome === 'refused');
      assert.equal(refused?.version, 2);
      assert.equal(refused?.issues, 2, 'bad prefix and unknown set');
    } finally {
      diagnostics.unsubscribe(ROUTING_RELOAD_CHANNEL, onEvent);
    }
  });

  it('one build at a time: a newer request gives the running build up; a build past its deadline is given up', async () => {
    const clock = new FakeClock(0);
    const builder = createWorkerTableBuilder({ source: memoryVersionSource(data(3, variedRules())), idleMs: 300, clock });
    const first = builder.build(3, TZ);
    const second = builder.build(3, TZ);
    await assert.rejects(first, TableBuildAbortedError);
    const r = await second;
    assert.ok(r?.ok === true);
    assert.equal(builder.running, 0);
    assert.equal(builder.threads, 1, 'the thread that answered is kept for the next build');
    assert.ok(builder.last!.threadStartMs > 0);
    assert.ok((await builder.build(3, TZ))?.ok === true);
    assert.equal(builder.last!.threadStartMs, 0, 'the second build ran on the same thread');
    clock.advance(300);
    assert.equal(builder.threads, 0, 'an idle thread is terminated after idleMs');

    const slow = createWorkerTableBuilder({ source: memoryVersionSource(data(3, variedRules())), deadlineMs: 1 });
    await assert.rejects(slow.build(3, TZ), /exceeded 1 ms/);
    assert.equal(slow.running, 0);

    const missing = await builder.build(4, TZ);
    assert.equal(missing, undefined, 'a version the store does not have');
    await builder.close();
    await assert.rejects(builder.build(3, TZ), TableBuildAbortedError);
  });

  it('pages read on this thread and posted (the embedded SQLite and memory stores): the same table; a missing version; a refused one', async () => {
    const rules = variedRules();
    const local = compileTable({ ...data(7, rules), timeZone: TZ });
    assert.ok(local.ok);
    let pagesRead = 0;
    const reader = {
      readVersion: async (v: number) => {
        if (v === 8) return tableDataReader(data(8, [...rules, { id: 99_999, group: 'media', field: 'device', prefix: '12a', priority: 0, setId: 'nope' }]));
        if (v !== 7) return undefined;
        const r = tableDataReader(data(7, rules));
        return {
          ...r,
          async *pages() {
            // pages of 10 rules: many messages, each acked by the thread
            for await (const page of r.pages()) for (let i = 0; i < page.length; i += 10) {
              pagesRead++;
              yield page.slice(i, i + 10);
            }
          },
        };
      },
    };
    const builder = createWorkerTableBuilder({ reader });
    const r = await builder.build(7, TZ);
    assert.ok(r?.ok === true, JSON.stringify(r));
    assert.equal(pagesRead, Math.ceil(rules.length / 10));
    assert.equal(r.table.ruleCount, local.table.ruleCount);
    for (const req of requests()) assert.deepEqual(r.table.decide(req, fixed), local.table.decide(req, fixed), JSON.stringify(req));
    assert.equal(await builder.build(3, TZ), undefined, 'no such version');
    const refused = await builder.build(8, TZ);
    assert.ok(refused !== undefined && !refused.ok);
    assert.deepEqual(refused.issues.map((i) => i.path), [`rules[${rules.length}] (id 99999)`, `rules[${rules.length}] (id 99999)`]);
    assert.equal(builder.threads, 1, 'the thread is kept for the next build');
    await builder.close();
    assert.throws(() => createWorkerTableBuilder({}), TypeError);
  });
});
