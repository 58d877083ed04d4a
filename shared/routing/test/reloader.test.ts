// Hot reload: poll + nudge, off-the-hot-path build, atomic swap, refusal of an invalid version.
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { describe, it } from 'node:test';
import { FakeClock } from '@vms/clock';
import {
  createMemoryRoutingStore,
  ROUTING_RELOAD_CHANNEL,
  RoutingReloader,
  tableDataReader,
  validateTable,
  type ReloadEvent,
  type RoutingStore,
  type Rule,
  type TableData,
} from '../src/index.ts';

const TZ = 'Asia/Shanghai';
const defaults = {
  destinations: [{ id: 'builtin', kind: 'media' as const, address: 'x' }],
  sets: [{ id: 'builtin', algorithm: 'least-load' as const, members: [{ destinationId: 'builtin', weight: 1, priority: 0 }] }],
  rules: [{ id: 1, group: 'media', field: 'device' as const, prefix: '', priority: 0, setId: 'builtin' }],
};
const check = (d: TableData): ReturnType<typeof validateTable> => validateTable({ ...d, timeZone: TZ });

function logger(): { lines: { level: string; msg: string; obj: object }[]; info: (o: object, m: string) => void; warn: (o: object, m: string) => void } {
  const lines: { level: string; msg: string; obj: object }[] = [];
  return { lines, info: (obj, msg) => lines.push({ level: 'info', msg, obj }), warn: (obj, msg) => lines.push({ level: 'warn', msg, obj }) };
}

async function seed(store: RoutingStore, prefix: string, rules = 1): Promise<number> {
  const draft = await store.draft();
  for (const r of draft.rules) await store.removeRule(r.id);
  for (const s of draft.sets) await store.removeSet(s.id);
  for (const d of draft.destinations) await store.removeDestination(d.id);
  await store.putDestination({ id: `${prefix}1`, kind: 'media', address: 'http://1' });
  await store.putDestination({ id: `${prefix}2`, kind: 'media', address: 'http://2' });
  await store.putSet({ id: 's', algorithm: 'round-robin', members: [{ destinationId: `${prefix}1`, weight: 1, priority: 0 }, { destinationId: `${prefix}2`, weight: 1, priority: 0 }] });
  for (let i = 0; i < rules; i++) await store.addRule({ group: 'media', field: 'device', prefix: i === 0 ? '' : String(100000 + i), priority: 0, setId: 's', enabled: true });
  const r = await store.publish({ by: 'test', comment: prefix, check });
  assert.ok(r.ok, JSON.stringify(r));
  return r.version;
}

const until = async (cond: () => boolean): Promise<void> => {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(cond(), 'condition not reached');
};

describe('routing reloader', () => {
  it('serves the built-in defaults until a version is published, then picks it up at the next poll', async () => {
    const clock = new FakeClock(0);
    const store = createMemoryRoutingStore();
    const reloader = new RoutingReloader({ store, clock, timeZone: TZ, defaults, pollMs: 5000, log: logger() });
    await reloader.start();
    assert.equal(reloader.table.version, 0);
    assert.equal(reloader.table.decide({ group: 'media', device: '1', now: 0 }).destination?.id, 'builtin');
    await seed(store, 'a');
    clock.advance(4999);
    await new Promise((r) => setImmediate(r));
    assert.equal(reloader.table.version, 0, 'not before the poll');
    clock.advance(1);
    await until(() => reloader.table.version === 1);
    assert.equal(reloader.table.decide({ group: 'media', device: '1', now: 0 }).destination?.id, 'a1');
    reloader.close();
  });

  it('a nudge checks at once; rollback is picked up the same way', async () => {
    const store = createMemoryRoutingStore();
    const reloader = new RoutingReloader({ store, clock: new FakeClock(0), timeZone: TZ, defaults, log: logger() });
    await reloader.start();
    await seed(store, 'a');
    await seed(store, 'b');
    assert.equal(await reloader.check(), 'swapped');
    assert.equal(reloader.table.version, 2);
    assert.deepEqual(await store.rollback(), { from: 2, to: 1 });
    reloader.nudge();
    await until(() => reloader.table.version === 1);
    assert.equal(reloader.table.decide({ group: 'media', device: '1', now: 0 }).destination?.id, 'a1');
    assert.equal(reloader.stats.swaps, 2);
    reloader.close();
  });

  it('refuses a version that does not validate: the old table stays, one warning, one refused event', async () => {
    const store = createMemoryRoutingStore();
    await seed(store, 'a');
    // a version written by something that skipped validation (another tool, a hand edit)
    const broken: TableData = { version: 2, destinations: [], sets: [], rules: [{ id: 9, group: 'media', field: 'device', prefix: '1x', priority: 0, setId: 'nope' } as Rule] };
    let current = 1;
    const wrapped = { currentVersion: async () => current, readVersion: async (v: number) => (v === 2 ? tableDataReader(broken) : store.readVersion(v)) };
    const log = logger();
    const events: ReloadEvent[] = [];
    const onEvent = (e: unknown): void => {
      events.push(e as ReloadEvent);
    };
    diagnostics.subscribe(ROUTING_RELOAD_CHANNEL, onEvent);
    try {
      const reloader = new RoutingReloader({ store: wrapped, clock: new FakeClock(0), timeZone: TZ, defaults, log });
      await reloader.start();
      assert.equal(reloader.table.version, 1);
      current = 2;
      assert.equal(await reloader.check(), 'refused');
      assert.equal(await reloader.check(), 'unchanged', 'the same refused version is not rebuilt at every poll');
      assert.equal(reloader.table.version, 1);
      assert.equal(reloader.table.decide({ group: 'media', device: '1', now: 0 }).destination?.id.startsWith('a'), true);
      assert.deepEqual(reloader.stats, { version: 1, swaps: 1, refused: 1, failures: 0, refusedVersion: 2 });
      const warns = log.lines.filter((l) => l.level === 'warn');
      assert.equal(warns.length, 1);
      assert.match(warns[0]!.msg, /refused/);
      assert.deepEqual(
        events.map((e) => [e.outcome, e.version, e.issues]),
        [
          ['swapped', 1, undefined],
          ['refused', 2, 2],
        ],
      );
      reloader.close();
    } finally {
      diagnostics.unsubscribe(ROUTING_RELOAD_CHANNEL, onEvent);
    }
  });

  it('a store that is down leaves the table in force and counts a failure', async () => {
    const store = createMemoryRoutingStore();
    await seed(store, 'a');
    let down = false;
    const wrapped = {
      currentVersion: async () => {
        if (down) throw new Error('ECONNREFUSED');
        return store.currentVersion();
      },
      readVersion: (v: number) => store.readVersion(v),
    };
    const reloader = new RoutingReloader({ store: wrapped, clock: new FakeClock(0), timeZone: TZ, defaults, log: logger() });
    await reloader.start();
    down = true;
    assert.equal(await reloader.check(), 'failed');
    assert.equal(reloader.table.version, 1);
    assert.equal(reloader.stats.failures, 1);
    reloader.close();
  });

  it('decisions keep being served during a sliced rebuild, each on one whole table (never a mix)', async () => {
    const RULES = 50_000;
    const data = (version: number, prefix: string): TableData => ({
      version,
      destinations: [1, 2].map((i) => ({ id: `${prefix}${i}`, kind: 'media' as const, address: `http://${i}` })),
      sets: [{ id: 's', algorithm: 'round-robin', members: [1, 2].map((i) => ({ destinationId: `${prefix}${i}`, weight: 1, priority: 0 })) }],
      rules: Array.from({ length: RULES }, (_, i): Rule => ({ id: i + 1, group: 'media', field: 'device', prefix: i === 0 ? '' : String(100000 + i), priority: 0, setId: 's' })),
    });
    const versions = new Map([
      [1, data(1, 'a')],
      [2, data(2, 'b')],
    ]);
    let current = 1;
    const store = { currentVersion: async () => current, readVersion: async (v: number) => tableDataReader(versions.get(v)!) };
    const reloader = new RoutingReloader({ store, clock: new FakeClock(0), timeZone: TZ, defaults, log: logger(), sliceMs: 1 });
    await reloader.start();
    current = 2;
    let served = 0;
    let mixed = 0;
    let stop = false;
    const loop = (): void => {
      if (stop) return;
      for (let i = 0; i < 20; i++) {
        const t = reloader.table; // one read per decision
        const d = t.decide({ group: 'media', device: `${100000 + (served % RULES)}77`, now: 0 });
        const want = t.version === 1 ? 'a' : 'b';
        if (d.destination?.id[0] !== want) mixed++;
        served++;
      }
      setImmediate(loop);
    };
    loop();
    const outcome = await reloader.check();
    stop = true;
    assert.equal(outcome, 'swapped');
    assert.equal(reloader.table.version, 2);
    assert.equal(mixed, 0);
    assert.ok(served > 100, `only ${served} decisions were served during the rebuild`);
    reloader.close();
  });
});
