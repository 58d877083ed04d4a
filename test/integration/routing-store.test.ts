// Routing tables in storage (SPEC §10): the RoutingStore contract on memory and on a real MariaDB migrated
// with deploy/sql (V007), then two reloaders ("two instances") that a Redis nudge brings to a new version at
// once, and a reload of a 100,000-rule version from MariaDB while decisions keep running.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { createPool, type Pool, type RowDataPacket } from 'mysql2/promise';
import { createMysqlPool, createRedisClient, migrate, systemClock, waitForRedisReady } from '@vms/cluster';
import {
  compileStoredVersion,
  createWorkerTableBuilder,
  mysqlVersionSource,
  createMemoryRoutingStore,
  createMysqlRoutingStore,
  publishRoutingNudge,
  RoutingReloader,
  subscribeRoutingNudges,
  compileTable,
  validateTable,
  type Decision,
  type Rule,
  type RoutingError,
  type RoutingStore,
  type TableData,
} from '@vms/routing';
import { FIELD_SEP, packPagesOn, PACKED_PAGE_MAX_BYTES, PACKED_ROW_SQL, packRuleRows, ROW_END } from '@vms/routing/testing';
import { createSqliteRoutingStore, openEmbeddedStore, type EmbeddedStore } from '@vms/signaling';
import { startMariaDb, startRedis, tmpDir, waitFor, type MariaDbServer, type RedisServer } from '@vms/harness';
import { DEPLOY_SQL } from './cluster-paths.ts';

const TZ = 'Asia/Shanghai';
const check = (d: TableData): ReturnType<typeof validateTable> => validateTable({ ...d, timeZone: TZ });
const quiet = { info: () => undefined, warn: () => undefined };
const defaults = {
  destinations: [{ id: 'builtin', kind: 'media' as const, address: 'x' }],
  sets: [{ id: 'builtin', algorithm: 'least-load' as const, members: [{ destinationId: 'builtin', weight: 1, priority: 0 }] }],
  rules: [{ id: 1, group: 'media', field: 'device' as const, prefix: '', priority: 0, setId: 'builtin' }],
};

let db: MariaDbServer;
let redis: RedisServer;
const pools: Pool[] = [];
async function freshPool(): Promise<Pool> {
  return (await freshDb()).pool;
}
async function freshDb(): Promise<{ pool: Pool; url: string }> {
  const url = await db.createDatabase();
  const pool = createMysqlPool(url);
  pools.push(pool);
  await migrate(pool, DEPLOY_SQL);
  return { pool, url };
}

before(async () => {
  [db, redis] = await Promise.all([startMariaDb(), startRedis()]);
});
after(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  await Promise.all([db.stop(), redis.stop()]);
});

function contract(name: string, make: () => Promise<RoutingStore>): void {
  describe(`RoutingStore contract: ${name}`, () => {
    it('edits the draft, publishes a validated version, keeps it immutable, rolls back in one call', async () => {
      const store = await make();
      assert.equal(await store.currentVersion(), undefined);
      await assert.rejects(store.rollback(), (e: RoutingError) => e.code === 'ROUTING_ERR_NOTHING_TO_ROLL_BACK');
      await store.putDestination({ id: 'zlm-a', kind: 'media', address: 'http://10.0.0.1', attrs: { zone: 'east' } });
      await store.putDestination({ id: 'zlm-b', kind: 'media', address: 'http://10.0.0.2' });
      await store.putSet({ id: 'media', algorithm: 'swrr', members: [{ destinationId: 'zlm-a', weight: 5, priority: 0 }, { destinationId: 'zlm-b', weight: 1, priority: 1 }] });
      const r1 = await store.addRule({
        group: 'media',
        field: 'device',
        prefix: '3402',
        priority: 2,
        setId: 'media',
        enabled: true,
        window: { start: '09:00', end: '18:00', days: [1, 2, 3, 4, 5] },
        release: { canarySetId: 'media', key: 'device', steps: [1, 10], step: 0, conditions: [{ field: 'source', op: 'cidr', value: '10.0.0.0/8' }] },
      });
      const off = await store.addRule({ group: 'media', field: 'device', prefix: '44', priority: 0, setId: 'media', enabled: false });

      // the release's canary set is the rule's own set: refused, nothing written
      const refused = await store.publish({ by: 'ops', comment: 'bad', check });
      assert.equal(refused.ok, false);
      assert.ok(!refused.ok && refused.issues.some((i) => /canary set is the rule's own set/.test(i.message)));
      assert.equal(await store.currentVersion(), undefined);
      assert.deepEqual(await store.versions(10), []);

      await store.putSet({ id: 'canary', algorithm: 'round-robin', members: [{ destinationId: 'zlm-b', weight: 1, priority: 0 }] });
      const rule = (await store.draft()).rules.find((r) => r.id === r1)!;
      assert.equal(await store.putRule({ ...rule, release: { ...rule.release!, canarySetId: 'canary' } }), true);
      assert.equal(await store.putRule({ ...rule, id: 999_999 }), false);
      const p1 = await store.publish({ by: 'ops', comment: 'first', check });
      assert.deepEqual(p1, { ok: true, version: 1, ruleCount: 1 });
      assert.equal(await store.currentVersion(), 1);

      const v1 = await store.loadVersion(1);
      assert.deepEqual(v1?.rules, [
        {
          id: r1,
          group: 'media',
          field: 'device',
          prefix: '3402',
          priority: 2,
          setId: 'media',
          window: { start: '09:00', end: '18:00', days: [1, 2, 3, 4, 5] },
          release: { canarySetId: 'canary', key: 'device', steps: [1, 10], step: 0, conditions: [{ field: 'source', op: 'cidr', value: '10.0.0.0/8' }] },
        },
      ]);
      assert.deepEqual(v1?.destinations.find((d) => d.id === 'zlm-a'), { id: 'zlm-a', kind: 'media', address: 'http://10.0.0.1', attrs: { zone: 'east' } });
      assert.deepEqual(v1?.sets.find((s) => s.id === 'media')?.members, [
        { destinationId: 'zlm-a', weight: 5, priority: 0 },
        { destinationId: 'zlm-b', weight: 1, priority: 1 },
      ]);

      // edit the draft and publish again; version 1 does not change
      assert.equal(await store.removeRule(r1), true);
      assert.equal(await store.removeRule(r1), false);
      await store.putRule({ id: off, group: 'media', field: 'device', prefix: '44', priority: 0, setId: 'media', enabled: true });
      const p2 = await store.publish({ by: 'ops', comment: 'second', check });
      assert.deepEqual(p2, { ok: true, version: 2, ruleCount: 1 });
      assert.deepEqual((await store.loadVersion(1))?.rules.map((r) => r.id), [r1]);
      assert.deepEqual((await store.loadVersion(2))?.rules.map((r) => r.id), [off]);
      assert.equal(await store.loadVersion(3), undefined);

      assert.deepEqual(await store.rollback(), { from: 2, to: 1 });
      assert.equal(await store.currentVersion(), 1);
      await assert.rejects(store.rollback(), (e: RoutingError) => e.code === 'ROUTING_ERR_NOTHING_TO_ROLL_BACK');
      const p3 = await store.publish({ by: 'ops', comment: 'third', check });
      assert.ok(p3.ok && p3.version === 3);
      const vs = await store.versions(10);
      assert.deepEqual(
        vs.map((v) => [v.version, v.parent, v.comment, v.publishedBy, v.ruleCount]),
        [
          [3, 1, 'third', 'ops', 1],
          [2, 1, 'second', 'ops', 1],
          [1, undefined, 'first', 'ops', 1],
        ],
      );
      assert.equal(await store.removeSet('canary'), true);
      assert.equal(await store.removeDestination('zlm-a'), true);
      assert.deepEqual((await store.draft()).sets.map((s) => s.id), ['media']);
      await store.close();
    });
  });
}

contract('memory', async () => createMemoryRoutingStore());
contract('mariadb', async () => createMysqlRoutingStore(await freshPool()));
const embedded: EmbeddedStore[] = [];
after(() => embedded.forEach((e) => e.close()));
contract('sqlite (embedded store)', async () => {
  const e = openEmbeddedStore(tmpDir('vms-routing-sqlite-').path);
  embedded.push(e);
  return createSqliteRoutingStore(e.db);
});

describe('routing tables in the embedded store', () => {
  it('survive a restart: the published version, its rules and the draft are there after reopening the file', async () => {
    const dir = tmpDir('vms-routing-restart-').path;
    const first = openEmbeddedStore(dir);
    const store = createSqliteRoutingStore(first.db);
    await store.putDestination({ id: 'up-1', kind: 'sip', address: 'sip:10.0.0.1:5060' });
    await store.putSet({ id: 's', algorithm: 'priority', members: [{ destinationId: 'up-1', weight: 1, priority: 0 }] });
    const ruleId = await store.addRule({ group: 'upstream', field: 'callee', prefix: '3401', priority: 0, setId: 's', enabled: true, window: { days: [1, 2, 3] } });
    const published = await store.publish({ by: 'op', comment: 'first', check });
    assert.ok(published.ok);
    first.close();

    const second = openEmbeddedStore(dir);
    try {
      const again = createSqliteRoutingStore(second.db);
      assert.equal(await again.currentVersion(), published.version);
      const reader = await again.readVersion(published.version);
      assert.ok(reader !== undefined);
      const rules = [];
      for await (const page of reader.pages()) rules.push(...page);
      assert.deepEqual(rules, [{ id: ruleId, group: 'upstream', field: 'callee', prefix: '3401', priority: 0, setId: 's', window: { days: [1, 2, 3] } }]);
      assert.deepEqual((await again.draft()).sets, [{ id: 's', algorithm: 'priority', members: [{ destinationId: 'up-1', weight: 1, priority: 0 }] }]);
      // built as the service builds it: pages read here from the EXCLUSIVE file, posted to a build thread
      const builder = createWorkerTableBuilder({ reader: again });
      const reloader = new RoutingReloader({ store: again, clock: systemClock, timeZone: TZ, defaults, log: quiet, build: (v, zone) => builder.build(v, zone) });
      try {
        await reloader.start();
        assert.equal(reloader.table.version, published.version);
        assert.equal(reloader.table.ruleCount, 1);
        assert.equal(builder.threads, 1, 'built on the thread');
      } finally {
        reloader.close();
        await builder.close();
      }
    } finally {
      second.close();
    }
  });
});

describe('reload from MariaDB with a Redis nudge', () => {
  it('two instances reach a new version at once on the nudge (poll period 60 s), and again after a rollback', async () => {
    const pool = await freshPool();
    const store = createMysqlRoutingStore(pool);
    const pub = createRedisClient(redis.url);
    const subs = [createRedisClient(redis.url), createRedisClient(redis.url)];
    const instances = subs.map(() => new RoutingReloader({ store: createMysqlRoutingStore(pool), clock: systemClock, timeZone: TZ, defaults, pollMs: 60_000, log: quiet }));
    await Promise.all([pub, ...subs].map((c) => waitForRedisReady(c, 5000)));
    const unsubscribe = await Promise.all(instances.map((r, i) => subscribeRoutingNudges(subs[i]!, () => r.nudge())));
    try {
      await Promise.all(instances.map((r) => r.start()));
      assert.deepEqual(instances.map((r) => r.table.version), [0, 0]);
      await store.putDestination({ id: 'up-1', kind: 'sip', address: 'sip:10.0.0.9:5060' });
      await store.putSet({ id: 'up', algorithm: 'priority', members: [{ destinationId: 'up-1', weight: 1, priority: 0 }] });
      await store.addRule({ group: 'upstream', field: 'callee', prefix: '', priority: 0, setId: 'up', enabled: true });
      const p = await store.publish({ by: 'ops', comment: '', check });
      assert.ok(p.ok);
      const t0 = Date.now();
      await publishRoutingNudge(pub, p.version);
      await waitFor(() => instances.every((r) => r.table.version === 1), { timeoutMs: 5000 });
      assert.ok(Date.now() - t0 < 5000);
      assert.deepEqual(instances.map((r) => r.table.decide({ group: 'upstream', callee: '1', now: 0 }).destination?.id), ['up-1', 'up-1']);

      await store.addRule({ group: 'upstream', field: 'callee', prefix: '9', priority: 0, setId: 'up', enabled: true });
      assert.ok((await store.publish({ by: 'ops', comment: '', check })).ok);
      await publishRoutingNudge(pub, 2);
      await waitFor(() => instances.every((r) => r.table.version === 2), { timeoutMs: 5000 });
      await store.rollback();
      await publishRoutingNudge(pub, 1);
      await waitFor(() => instances.every((r) => r.table.version === 1), { timeoutMs: 5000 });
    } finally {
      await Promise.all(unsubscribe.map((u) => u()));
      for (const r of instances) r.close();
      for (const c of [pub, ...subs]) c.disconnect();
    }
  });

  it('a 100,000-rule version loads and swaps while decisions keep running, none unanswered', async () => {
    const pool = await freshPool();
    const store = createMysqlRoutingStore(pool);
    await store.putDestination({ id: 'shard-a', kind: 'shard', address: 'sip:10.0.0.1:5060' });
    await store.putDestination({ id: 'shard-b', kind: 'shard', address: 'sip:10.0.0.2:5060' });
    await store.putSet({ id: 'shards', algorithm: 'hash-device', members: ['shard-a', 'shard-b'].map((d) => ({ destinationId: d, weight: 1, priority: 0 })) });
    await store.addRule({ group: 'placement', field: 'device', prefix: '', priority: 0, setId: 'shards', enabled: true });
    assert.ok((await store.publish({ by: 'ops', comment: 'small', check })).ok);
    const reloader = new RoutingReloader({ store, clock: systemClock, timeZone: TZ, defaults, pollMs: 60_000, log: quiet });
    await reloader.start();
    // closed whatever happens: its poll timer would hold the test process open until the file's timeout
    try {
      assert.equal(reloader.table.version, 1);

      const N = 100_000;
      for (let i = 0; i < N; i += 10_000) {
        const rows = Array.from({ length: 10_000 }, (_, k) => ['placement', 'device', `3402${String(i + k).padStart(8, '0')}`, 0, 'shards', 1]);
        await pool.query('INSERT INTO routing_rule (grp, field, prefix, priority, set_id, enabled) VALUES ?', [rows]);
      }
      const p = await store.publish({ by: 'ops', comment: 'big', check });
      assert.ok(p.ok && p.ruleCount === N + 1);

      let served = 0;
      let unanswered = 0;
      let stop = false;
      const h = monitorEventLoopDelay({ resolution: 5 });
      h.enable();
      const loop = (): void => {
        if (stop) return;
        for (let i = 0; i < 50; i++) {
          const d = reloader.table.decide({ group: 'placement', device: `3402${String(served % N).padStart(8, '0')}13200001`, now: Date.now() });
          if (d.destination === undefined) unanswered++;
          served++;
        }
        setImmediate(loop);
      };
      loop();
      const outcome = await reloader.check();
      stop = true;
      h.disable();
      assert.equal(outcome, 'swapped');
      assert.equal(reloader.table.version, 2);
      assert.equal(reloader.table.ruleCount, N + 1);
      assert.equal(unanswered, 0);
      assert.ok(served > 1000, `${served} decisions during the reload`);
      const d = reloader.table.decide({ group: 'placement', device: '34020000012313200001', now: 0 });
      assert.equal(d.matchedLength, 12);
      console.log(`reload of ${N} rules from MariaDB: ${served} decisions served meanwhile, event-loop delay max ${(h.max / 1e6).toFixed(1)} ms`);
    } finally {
      reloader.close();
    }
  });

  it('a version built on a worker thread from its own MariaDB connection decides as the one built here; a refused one leaves the old table', async () => {
    const { pool, url } = await freshDb();
    const store = createMysqlRoutingStore(pool);
    for (const id of ['a', 'b', 'c', 'd']) await store.putDestination({ id, kind: 'shard', address: `sip:10.0.0.${id.charCodeAt(0)}:5060` });
    await store.putSet({ id: 'rr', algorithm: 'round-robin', members: ['a', 'b'].map((d) => ({ destinationId: d, weight: 1, priority: 0 })) });
    await store.putSet({ id: 'hash', algorithm: 'hash-device', members: ['b', 'c', 'd'].map((d) => ({ destinationId: d, weight: 1, priority: 0 })) });
    await store.putSet({ id: 'canary', algorithm: 'priority', members: [{ destinationId: 'd', weight: 1, priority: 0 }] });
    await store.addRule({ group: 'placement', field: 'device', prefix: '', priority: 0, setId: 'rr', enabled: true });
    for (let p = 11; p < 31; p++) {
      await store.addRule({ group: 'placement', field: 'device', prefix: `${p}`, priority: 0, setId: 'hash', enabled: true });
      await store.addRule({ group: 'placement', field: 'device', prefix: `${p}01`, priority: 3, setId: 'rr', enabled: true, window: { start: '09:00', end: '18:00' } });
      await store.addRule({ group: 'placement', field: 'device', prefix: `${p}01`, priority: 0, setId: 'hash', enabled: true });
      await store.addRule({
        group: 'placement',
        field: 'device',
        prefix: `${p}0200`,
        priority: 0,
        setId: 'hash',
        enabled: true,
        release: { canarySetId: 'canary', key: 'device', steps: [10, 50], step: 1, conditions: [{ field: 'source', op: 'cidr', value: '10.0.0.0/8' }] },
      });
      await store.addRule({ group: 'upstream', field: 'callee', prefix: `${p}000`, priority: 0, setId: 'rr', enabled: true, window: { from: '2026-01-01' } });
    }
    const p1 = await store.publish({ by: 'ops', comment: 'varied', check });
    assert.ok(p1.ok);
    const builder = createWorkerTableBuilder({ source: mysqlVersionSource(url) });
    const reloader = new RoutingReloader({ store, clock: systemClock, timeZone: TZ, defaults, pollMs: 60_000, log: quiet, build: (v, tz) => builder.build(v, tz) });
    try {
      assert.equal(await reloader.check(), 'swapped');
      const here = await compileStoredVersion(store, p1.version, TZ);
      assert.ok(here?.ok === true);
      const viaWorker = reloader.table;
      assert.equal(viaWorker.ruleCount, here.table.ruleCount);
      let canary = 0;
      for (const now of [Date.UTC(2026, 2, 4, 2), Date.UTC(2026, 2, 4, 14), Date.UTC(2025, 5, 1, 2)]) {
        for (let i = 0; i < 2000; i++) {
          const device = `${10 + (i % 22)}0${i % 4}00${String(i).padStart(14, '0')}`;
          const req = { group: i % 5 === 0 ? 'upstream' : 'placement', device, callee: device, source: i % 2 === 0 ? '10.1.1.1' : '172.16.0.1', now };
          const want: Decision = here.table.decide(req, { random: () => 0.3 });
          if (want.side === 'canary') canary++;
          assert.deepEqual(viaWorker.decide(req, { random: () => 0.3 }), want, JSON.stringify(req));
        }
      }
      assert.ok(canary > 0);

      // a version that does not validate (a rule whose set is gone, written past the API's checks): refused
      // on the thread, the old table stays
      await pool.query("INSERT INTO routing_rule (grp, field, prefix, priority, set_id, enabled) VALUES ('placement', 'device', '99', 0, 'nope', 1)");
      const p2 = await store.publish({ by: 'ops', comment: 'bad', check: () => ({ issues: [], more: 0 }) });
      assert.ok(p2.ok);
      assert.equal(await reloader.check(), 'refused');
      assert.equal(reloader.table, viaWorker);
      assert.equal(reloader.stats.refusedVersion, p2.version);
    } finally {
      reloader.close();
      await builder.close();
    }
  });

  it('a version read from MariaDB in small pages (id ranges, two read at once) builds the table its rules build in memory; a bad row on a late page refuses it all, a page that cannot be read fails the build, the old table staying', async () => {
    const { pool, url } = await freshDb();
    const destinations = ['a', 'b', 'c', 'd'].map((id) => ({ id, kind: 'shard' as const, address: `sip:10.0.0.${id.charCodeAt(0)}:5060` }));
    const sets = [
      { id: 'hash', algorithm: 'hash-device' as const, members: ['a', 'b', 'c'].map((d) => ({ destinationId: d, weight: 1, priority: 0 })) },
      { id: 'swrr', algorithm: 'swrr' as const, members: ['b', 'd'].map((d, i) => ({ destinationId: d, weight: 1 + i, priority: 0 })) },
      { id: 'canary', algorithm: 'priority' as const, members: [{ destinationId: 'd', weight: 1, priority: 0 }] },
    ];
    // ids dense, then bunched far above, then sparse: ranges empty, ranges holding many pages
    const ids = [
      ...Array.from({ length: 2500 }, (_, i) => i + 1),
      ...Array.from({ length: 1500 }, (_, i) => 1_000_000 + i),
      ...Array.from({ length: 1000 }, (_, i) => 2_000_000 + i * 997),
    ];
    const fields = ['device', 'caller', 'callee'] as const;
    const rules: Rule[] = ids.map((id, i) => ({
      id,
      group: i % 4 === 0 ? 'upstream' : 'placement',
      field: fields[i % 3]!,
      prefix: i % 101 === 0 ? String(11 + (i % 30)) : `34${String(i).padStart(10, '0')}`,
      priority: i % 101 === 0 ? 100 + i : i % 11 === 0 ? 2 : 0,
      setId: i % 2 === 0 ? 'hash' : 'swrr',
      ...(i % 40 === 0 ? { window: { start: '09:00', end: '18:00', days: [1, 2, 3, 4, 5] } } : {}),
      ...(i % 250 === 0 ? { release: { canarySetId: 'canary', key: 'device' as const, steps: [10, 50], step: 1 } } : {}),
    }));
    const insertVersion = async (version: number, rs: readonly Rule[], extra: unknown[][] = [], prefix = ''): Promise<void> => {
      await pool.query('INSERT INTO routing_version (version, parent, rule_count, topology) VALUES (?, NULL, ?, ?)', [version, rs.length + extra.length, JSON.stringify({ destinations, sets })]);
      const rows: unknown[][] = rs.map((r) => [version, r.id, r.group, r.field, r.prefix, r.priority, r.setId, r.window === undefined ? null : JSON.stringify(r.window), r.release === undefined ? null : JSON.stringify(r.release)]);
      for (const row of extra) rows.push([version, ...row]);
      for (let i = 0; i < rows.length; i += 2000) {
        await pool.query(`${prefix}INSERT INTO routing_version_rule (version, id, grp, field, prefix, priority, set_id, time_window, gray_release) VALUES ?`, [rows.slice(i, i + 2000)]);
      }
      await pool.query('UPDATE routing_current SET version = ? WHERE id = 1', [version]);
    };
    await insertVersion(1, rules);
    const inMemory = compileTable({ version: 1, timeZone: TZ, destinations, sets, rules });
    assert.ok(inMemory.ok);

    const store = createMysqlRoutingStore(pool);
    const builder = createWorkerTableBuilder({ source: mysqlVersionSource(url, { pageRows: 300, readAhead: 2 }) });
    const reloader = new RoutingReloader({ store, clock: systemClock, timeZone: TZ, defaults, pollMs: 60_000, log: quiet, build: (v, tz) => builder.build(v, tz) });
    try {
      assert.equal(await reloader.check(), 'swapped');
      const fromDb = reloader.table;
      // and on this thread, one page at a time, in pages of another size
      const here = await compileStoredVersion(createMysqlRoutingStore(pool, { readPageRows: 333, readAhead: 1 }), 1, TZ);
      assert.ok(here?.ok === true);
      for (const t of [fromDb, here.table]) {
        assert.equal(t.ruleCount, rules.length);
        assert.equal(t.typedBytes, inMemory.table.typedBytes);
      }
      let matched = 0;
      for (let i = 0; i < ids.length; i += 3) {
        const k = `34${String(i).padStart(10, '0')}00000001`;
        for (const group of ['placement', 'upstream']) {
          for (const now of [Date.UTC(2026, 2, 4, 3), Date.UTC(2026, 2, 7, 3)]) {
            const req = { group, device: k, caller: k, callee: k, now };
            const want = inMemory.table.decide(req, { random: () => 0.3 });
            if (want.ruleId !== undefined) matched++;
            assert.deepEqual(fromDb.decide(req, { random: () => 0.3 }), want, JSON.stringify(req));
            assert.deepEqual(here.table.decide(req, { random: () => 0.3 }), want, JSON.stringify(req));
          }
        }
      }
      assert.ok(matched > 1000, `${matched} decisions made by a rule`);

      // pages packed by the server (the default of mysqlVersionSource), row by row, and packed within a limit
      // most pages exceed (cut: read row by row): the same table; and the packed text is what packRuleRows
      // makes of the rows (the format the unit tests parse)
      for (const o of [{ packed: false }, { packedMaxBytes: 4096 }, { pageRows: 20_000 }]) {
        const other = createWorkerTableBuilder({ source: mysqlVersionSource(url, { pageRows: 300, readAhead: 2, ...o }) });
        try {
          const r = await other.build(1, TZ);
          assert.ok(r?.ok === true, JSON.stringify(o));
          assert.equal(r.table.ruleCount, rules.length);
          // a reference of its own: round-robin and SWRR state advance with each decision
          const ref = compileTable({ version: 1, timeZone: TZ, destinations, sets, rules });
          assert.ok(ref.ok);
          for (let i = 0; i < ids.length; i += 7) {
            const k = `34${String(i).padStart(10, '0')}00000001`;
            const req = { group: i % 2 === 0 ? 'placement' : 'upstream', device: k, caller: k, callee: k, now: Date.UTC(2026, 2, 4, 3) };
            assert.deepEqual(r.table.decide(req, { random: () => 0.3 }), ref.table.decide(req, { random: () => 0.3 }), JSON.stringify(o));
          }
        } finally {
          await other.close();
        }
      }
      {
        const packedPool = createPool({ uri: url, connectionLimit: 1, supportBigNumbers: true });
        packPagesOn(packedPool);
        try {
          const [r] = await packedPool.execute<RowDataPacket[]>({ sql: `SELECT COUNT(*), @@SESSION.group_concat_max_len, CAST(GROUP_CONCAT(${PACKED_ROW_SQL} SEPARATOR '') AS BINARY) FROM routing_version_rule WHERE version = 1 AND id > 0 AND id <= 120`, rowsAsArray: true });
          const [count, maxBytes, bytes] = r[0] as unknown as [number, number, Buffer];
          assert.equal(count, 120);
          assert.equal(Number(maxBytes), PACKED_PAGE_MAX_BYTES);
          assert.equal(bytes.toString('utf8'), packRuleRows(rules.slice(0, 120).map((x) => [x.id, x.group, x.field, x.prefix, x.priority, x.setId, x.window === undefined ? null : JSON.stringify(x.window), x.release === undefined ? null : JSON.stringify(x.release)])));
        } finally {
          await packedPool.end();
        }
      }

      // version 2: the same rules and, on the last page, one whose prefix is not digits: refused whole
      await insertVersion(2, rules, [[3_000_000, 'placement', 'device', '12ab', 0, 'hash', null, null]]);
      assert.equal(await reloader.check(), 'refused');
      assert.equal(reloader.table, fromDb);
      const refused = await builder.build(2, TZ);
      assert.ok(refused?.ok === false);
      assert.match(refused.issues.map((i) => `${i.path}: ${i.message}`).join('\n'), /rules\[5000\] \(id 3000000\): prefix must be/);

      // version 3: a row the driver cannot decode (JSON written past the column's check) on a late page: the
      // page fails, the build fails, nothing of it is used
      await insertVersion(3, rules, [[3_000_001, 'placement', 'device', '99', 0, 'hash', '{"start": "09:', null]], 'SET STATEMENT check_constraint_checks = 0 FOR ');
      assert.equal(await reloader.check(), 'failed');
      assert.equal(reloader.table, fromDb);
      assert.equal(reloader.stats.failures, 1);
      await assert.rejects(builder.build(3, TZ));
      const pages: number[] = [];
      const reader = await createMysqlRoutingStore(pool, { readPageRows: 1000 }).readVersion(3);
      await assert.rejects(async () => {
        for await (const page of reader!.pages()) pages.push(page.length);
      });
      assert.ok(pages.length >= 4, `pages before the bad one: ${pages.join(', ')}`);

      // version 4: a group id holding both separators of a packed page (an id is any 1..128 characters): its
      // page is read row by row, the rule is there as written
      const odd: Rule = { id: 3_000_002, group: `up${FIELD_SEP}stream${ROW_END}`, field: 'callee', prefix: '7', priority: 0, setId: 'swrr' };
      await insertVersion(4, [...rules, odd]);
      const withOdd = await builder.build(4, TZ);
      assert.ok(withOdd?.ok === true);
      const oddInMemory = compileTable({ version: 4, timeZone: TZ, destinations, sets, rules: [...rules, odd] });
      assert.ok(oddInMemory.ok);
      const req = { group: odd.group, callee: '7123', now: 0 };
      const got = withOdd.table.decide(req, { random: () => 0.3 });
      assert.equal(got.ruleId, odd.id);
      assert.deepEqual(got, oddInMemory.table.decide(req, { random: () => 0.3 }));
    } finally {
      reloader.close();
      await builder.close();
    }
  });
});
