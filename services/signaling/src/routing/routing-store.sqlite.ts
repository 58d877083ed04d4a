// RoutingStore on the embedded SQLite store (storage/embedded-store.sqlite.ts, schema version 3 = V007):
// the zero-configuration single instance keeps its routing tables across restarts, with the MySQL store's
// semantics (the contract in test/integration/routing-store.test.ts runs on both). better-sqlite3 is
// synchronous: each verb is one statement or one transaction, and publishing validates the draft inside
// its transaction (nothing can change it meanwhile) before copying the enabled rules server-side.
import { destinationFromRow, ruleFromRow, RoutingError, type DraftRule, type RoutingDestinationRow, type RoutingRuleRow, type PublishResult, type RoutingStore, type Rule, type TableData, type VersionInfo } from '@vms/routing';
import type { Destination, DestinationSet, GrayRelease, TimeWindow } from '@vms/routing';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';

type RuleRow = RoutingRuleRow;
type DestinationRow = RoutingDestinationRow;
interface SetRow {
  id: string;
  algorithm: DestinationSet['algorithm'];
  members: string;
}

const RULE_COLUMNS = 'id, grp, field, prefix, priority, set_id, time_window, gray_release';
/** Rules per page when a version is read for compiling. */
const READ_PAGE_ROWS = 2000;
const jsonOrNull = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const parse = <T>(v: string | null): T | undefined => (v === null ? undefined : (JSON.parse(v) as T));

function toSet(r: SetRow): DestinationSet {
  return { id: r.id, algorithm: r.algorithm, members: parse<DestinationSet['members']>(r.members) ?? [] };
}

export function createSqliteRoutingStore(db: EmbeddedDb, clock: { now(): number } = Date): RoutingStore {
  let closed = false;
  const run = async <T>(what: string, fn: () => T): Promise<T> => {
    if (closed) throw new RoutingError('ROUTING_ERR_CLOSED', 'routing store is closed');
    try {
      return fn();
    } catch (err) {
      if (err instanceof RoutingError) throw err;
      throw new RoutingError('ROUTING_ERR_STORE_QUERY', `routing store: ${what} failed`, { cause: err });
    }
  };
  const q = {
    destinations: db.prepare<[], DestinationRow>('SELECT id, kind, address, attrs FROM routing_destination ORDER BY id'),
    sets: db.prepare<[], SetRow>('SELECT id, algorithm, members FROM routing_set ORDER BY id'),
    draftRules: db.prepare<[], RuleRow>(`SELECT ${RULE_COLUMNS}, enabled FROM routing_rule ORDER BY id`),
    enabledRules: db.prepare<[], RuleRow>(`SELECT ${RULE_COLUMNS} FROM routing_rule WHERE enabled = 1 ORDER BY id`),
    putDestination: db.prepare(
      'INSERT INTO routing_destination (id, kind, address, attrs) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, address = excluded.address, attrs = excluded.attrs',
    ),
    removeDestination: db.prepare('DELETE FROM routing_destination WHERE id = ?'),
    putSet: db.prepare('INSERT INTO routing_set (id, algorithm, members) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET algorithm = excluded.algorithm, members = excluded.members'),
    removeSet: db.prepare('DELETE FROM routing_set WHERE id = ?'),
    addRule: db.prepare('INSERT INTO routing_rule (grp, field, prefix, priority, set_id, time_window, gray_release, enabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    putRule: db.prepare('UPDATE routing_rule SET grp = ?, field = ?, prefix = ?, priority = ?, set_id = ?, time_window = ?, gray_release = ?, enabled = ? WHERE id = ?'),
    removeRule: db.prepare('DELETE FROM routing_rule WHERE id = ?'),
    current: db.prepare<[], { version: number | null }>('SELECT version FROM routing_current WHERE id = 1'),
    setCurrent: db.prepare('UPDATE routing_current SET version = ? WHERE id = 1'),
    nextVersion: db.prepare<[], { next: number }>('SELECT COALESCE(MAX(version), 0) + 1 AS next FROM routing_version'),
    insertVersion: db.prepare('INSERT INTO routing_version (version, parent, published_at, published_by, comment, rule_count, topology) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    copyRules: db.prepare(`INSERT INTO routing_version_rule (version, ${RULE_COLUMNS}) SELECT ?, ${RULE_COLUMNS} FROM routing_rule WHERE enabled = 1`),
    version: db.prepare<[number], { version: number; parent: number | null; published_at: number; published_by: string; comment: string; rule_count: number; topology: string }>(
      'SELECT version, parent, published_at, published_by, comment, rule_count, topology FROM routing_version WHERE version = ?',
    ),
    versions: db.prepare<[number], { version: number; parent: number | null; published_at: number; published_by: string; comment: string; rule_count: number }>(
      'SELECT version, parent, published_at, published_by, comment, rule_count FROM routing_version ORDER BY version DESC LIMIT ?',
    ),
    versionRules: db.prepare<[number], RuleRow>(`SELECT ${RULE_COLUMNS} FROM routing_version_rule WHERE version = ? ORDER BY id`),
    versionPage: db.prepare<[number, number, number], RuleRow>(`SELECT ${RULE_COLUMNS} FROM routing_version_rule WHERE version = ? AND id > ? ORDER BY id LIMIT ?`),
  };

  const publish = db.transaction((check: Parameters<RoutingStore['publish']>[0]): PublishResult => {
    const parent = q.current.get()?.version ?? null;
    const version = q.nextVersion.get()!.next;
    const data: TableData = { version, destinations: q.destinations.all().map(destinationFromRow), sets: q.sets.all().map(toSet), rules: q.enabledRules.all().map(ruleFromRow) };
    const checked = check.check(data);
    if (checked.issues.length > 0) return { ok: false, issues: checked.issues, more: checked.more };
    q.insertVersion.run(version, parent, clock.now(), check.by.slice(0, 128), check.comment.slice(0, 512), data.rules.length, JSON.stringify({ destinations: data.destinations, sets: data.sets }));
    q.copyRules.run(version);
    q.setCurrent.run(version);
    return { ok: true, version, ruleCount: data.rules.length };
  });
  const rollback = db.transaction(() => {
    const current = q.current.get()?.version ?? null;
    const parent = current === null ? null : (q.version.get(current)?.parent ?? null);
    if (current === null || parent === null) throw new RoutingError('ROUTING_ERR_NOTHING_TO_ROLL_BACK', 'no earlier version to roll back to');
    q.setCurrent.run(parent);
    return { from: current, to: parent };
  });
  const topologyOf = (version: number): { row: NonNullable<ReturnType<typeof q.version.get>>; destinations: Destination[]; sets: DestinationSet[] } | undefined => {
    const row = q.version.get(version);
    if (row === undefined) return undefined;
    const t = JSON.parse(row.topology) as { destinations: Destination[]; sets: DestinationSet[] };
    return { row, destinations: t.destinations, sets: t.sets };
  };

  return {
    draft: () =>
      run('draft', () => ({
        destinations: q.destinations.all().map(destinationFromRow),
        sets: q.sets.all().map(toSet),
        rules: q.draftRules.all().map((r): DraftRule => ({ ...ruleFromRow(r), enabled: r.enabled === 1 })),
      })),
    putDestination: (d) => run('putDestination', () => void q.putDestination.run(d.id, d.kind, d.address, jsonOrNull(d.attrs))),
    removeDestination: (id) => run('removeDestination', () => q.removeDestination.run(id).changes > 0),
    putSet: (s) => run('putSet', () => void q.putSet.run(s.id, s.algorithm, JSON.stringify(s.members))),
    removeSet: (id) => run('removeSet', () => q.removeSet.run(id).changes > 0),
    addRule: (r) =>
      run('addRule', () => Number(q.addRule.run(r.group, r.field, r.prefix, r.priority, r.setId, jsonOrNull(r.window), jsonOrNull(r.release), r.enabled ? 1 : 0).lastInsertRowid)),
    putRule: (r) =>
      run('putRule', () => q.putRule.run(r.group, r.field, r.prefix, r.priority, r.setId, jsonOrNull(r.window), jsonOrNull(r.release), r.enabled ? 1 : 0, r.id).changes > 0),
    removeRule: (id) => run('removeRule', () => q.removeRule.run(id).changes > 0),
    publish: (req) => run('publish', () => publish(req)),
    rollback: () => run('rollback', () => rollback()),
    currentVersion: () => run('currentVersion', () => q.current.get()?.version ?? undefined),
    loadVersion: (version) =>
      run('loadVersion', () => {
        const t = topologyOf(version);
        return t === undefined ? undefined : { version, destinations: t.destinations, sets: t.sets, rules: q.versionRules.all(version).map(ruleFromRow) };
      }),
    readVersion: (version) =>
      run('readVersion', () => {
        const t = topologyOf(version);
        if (t === undefined) return undefined;
        return {
          version,
          destinations: t.destinations,
          sets: t.sets,
          ruleCount: t.row.rule_count,
          // keyset pages, one per turn of the event loop (a synchronous read of a million rows would stall it)
          async *pages() {
            for (let after = 0; ; ) {
              const page = await run('readVersion', () => q.versionPage.all(version, after, READ_PAGE_ROWS));
              if (page.length > 0) yield page.map(ruleFromRow);
              if (page.length < READ_PAGE_ROWS) return;
              after = Number(page[page.length - 1]!.id);
              await new Promise<void>((resolve) => setImmediate(resolve));
            }
          },
        };
      }),
    versions: (limit) =>
      run('versions', () =>
        q.versions.all(Math.max(1, Math.min(1000, Math.floor(limit)))).map(
          (v): VersionInfo => ({
            version: v.version,
            parent: v.parent ?? undefined,
            publishedAt: v.published_at,
            publishedBy: v.published_by,
            comment: v.comment,
            ruleCount: v.rule_count,
          }),
        ),
      ),
    async close() {
      closed = true; // the handle is the embedded store's: closed with it
    },
  } satisfies RoutingStore;
}
