/**
 * RoutingStore on MySQL/MariaDB (deploy/sql/V007__routing_tables.sql). The pool is the caller's. Publishing
 * is one transaction: lock the pointer row, read the draft with shared locks (edits wait until the version
 * is written), validate, copy the rules server-side (INSERT … SELECT: a million rows never cross the wire
 * twice), move the pointer. Driver errors become ROUTING_ERR_STORE_*.
 */
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { classifyMysqlError, codeSuffix } from '@vms/mysql-errors';
import { RoutingError } from './errors.ts';
import { destinationFromRow, jsonColumn, ruleFromRow, type RoutingDestinationRow, type RoutingRuleRow } from './routing-rows.ts';
import { readRulePages, RULE_COLUMNS } from './rule-pages.mysql.ts';
import type { DraftRule, PublishResult, RoutingDraft, RoutingStore, TableData, VersionInfo } from './routing-store.port.ts';
import type { Algorithm, Destination, DestinationSet, GrayRelease, MatchField, Rule, TimeWindow } from './types.ts';

interface DestinationRow extends RowDataPacket, RoutingDestinationRow {}
interface SetRow extends RowDataPacket {
  id: string;
  algorithm: string;
}
interface MemberRow extends RowDataPacket {
  set_id: string;
  destination_id: string;
  weight: number;
  priority: number;
}
interface RuleRow extends RowDataPacket, RoutingRuleRow {}
interface VersionRow extends RowDataPacket {
  version: number | string;
  parent: number | string | null;
  published_at: Date;
  published_by: string;
  comment: string;
  rule_count: number;
  topology?: unknown;
}

function toSets(sets: SetRow[], members: MemberRow[]): DestinationSet[] {
  const bySet = new Map<string, MemberRow[]>();
  for (const m of members) {
    let l = bySet.get(m.set_id);
    if (l === undefined) bySet.set(m.set_id, (l = []));
    l.push(m);
  }
  return sets.map((s) => ({
    id: s.id,
    algorithm: s.algorithm as Algorithm,
    members: (bySet.get(s.id) ?? []).map((m) => ({ destinationId: m.destination_id, weight: m.weight, priority: m.priority })),
  }));
}

/** Rules per page when loading a version on the event loop that serves requests. */
const LOAD_PAGE_ROWS = 2000;

export interface MysqlRoutingStoreOptions {
  /**
   * Rules per keyset page of readVersion. Default LOAD_PAGE_ROWS (the page is parsed in one turn of the
   * loop); a table build thread, with no requests to serve, reads larger pages (fewer round trips).
   */
  readonly readPageRows?: number;
  /** Pages of readVersion read at once, on as many connections of the pool (1..4). Default 2. */
  readonly readAhead?: number;
  /**
   * readVersion's pages packed by the server into one string each (rule-pages.mysql.ts; the pool set up by
   * packPagesOn). Default false: a page parsed on the event loop that serves requests stays a page of rows.
   */
  readonly packedPages?: boolean;
}
const jsonOrNull = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

export function createMysqlRoutingStore(pool: Pool, options: MysqlRoutingStoreOptions = {}): RoutingStore {
  const readPageRows = Math.max(1, Math.min(100_000, Math.floor(options.readPageRows ?? LOAD_PAGE_ROWS)));
  const readAhead = Math.max(1, Math.min(4, Math.floor(options.readAhead ?? 2)));
  let closed = false;
  const run = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    if (closed) throw new RoutingError('ROUTING_ERR_CLOSED', 'routing store is closed');
    try {
      return await fn();
    } catch (err) {
      if (err instanceof RoutingError) throw err;
      const kind = classifyMysqlError(err);
      throw new RoutingError(kind === 'unavailable' ? 'ROUTING_ERR_STORE_UNAVAILABLE' : 'ROUTING_ERR_STORE_QUERY', `routing store: ${what} failed${codeSuffix(err)}`, { cause: err });
    }
  };
  const inTransaction = async <T>(fn: (c: PoolConnection) => Promise<T>): Promise<T> => {
    const c = await pool.getConnection();
    try {
      await c.beginTransaction();
      const out = await fn(c);
      await c.commit();
      return out;
    } catch (err) {
      await c.rollback().catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  };
  const changed = (r: ResultSetHeader): boolean => r.affectedRows > 0;

  return {
    draft: () =>
      run('draft', async (): Promise<RoutingDraft> => {
        const [d] = await pool.query<DestinationRow[]>('SELECT id, kind, address, attrs FROM routing_destination ORDER BY id');
        const [s] = await pool.query<SetRow[]>('SELECT id, algorithm FROM routing_set ORDER BY id');
        const [m] = await pool.query<MemberRow[]>('SELECT set_id, destination_id, weight, priority FROM routing_set_member ORDER BY set_id, destination_id');
        const [r] = await pool.query<RuleRow[]>(`SELECT ${RULE_COLUMNS}, enabled FROM routing_rule ORDER BY id`);
        return { destinations: d.map(destinationFromRow), sets: toSets(s, m), rules: r.map((x): DraftRule => ({ ...ruleFromRow(x), enabled: x.enabled === 1 })) };
      }),
    putDestination: (d) =>
      run('putDestination', async () => {
        await pool.query(
          'INSERT INTO routing_destination (id, kind, address, attrs) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE kind = VALUES(kind), address = VALUES(address), attrs = VALUES(attrs)',
          [d.id, d.kind, d.address, jsonOrNull(d.attrs)],
        );
      }),
    removeDestination: (id) => run('removeDestination', async () => changed((await pool.query<ResultSetHeader>('DELETE FROM routing_destination WHERE id = ?', [id]))[0])),
    putSet: (s) =>
      run('putSet', () =>
        inTransaction(async (c) => {
          await c.query('INSERT INTO routing_set (id, algorithm) VALUES (?, ?) ON DUPLICATE KEY UPDATE algorithm = VALUES(algorithm)', [s.id, s.algorithm]);
          await c.query('DELETE FROM routing_set_member WHERE set_id = ?', [s.id]);
          if (s.members.length > 0) {
            await c.query('INSERT INTO routing_set_member (set_id, destination_id, weight, priority) VALUES ?', [
              s.members.map((m) => [s.id, m.destinationId, m.weight, m.priority]),
            ]);
          }
        }),
      ),
    removeSet: (id) => run('removeSet', async () => changed((await pool.query<ResultSetHeader>('DELETE FROM routing_set WHERE id = ?', [id]))[0])),
    addRule: (r) =>
      run('addRule', async () => {
        const [res] = await pool.query<ResultSetHeader>(
          'INSERT INTO routing_rule (grp, field, prefix, priority, set_id, time_window, gray_release, enabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          [r.group, r.field, r.prefix, r.priority, r.setId, jsonOrNull(r.window), jsonOrNull(r.release), r.enabled ? 1 : 0],
        );
        return res.insertId;
      }),
    putRule: (r) =>
      run('putRule', async () => {
        const [res] = await pool.query<ResultSetHeader>(
          'UPDATE routing_rule SET grp = ?, field = ?, prefix = ?, priority = ?, set_id = ?, time_window = ?, gray_release = ?, enabled = ? WHERE id = ?',
          [r.group, r.field, r.prefix, r.priority, r.setId, jsonOrNull(r.window), jsonOrNull(r.release), r.enabled ? 1 : 0, r.id],
        );
        // affectedRows counts matched rows only with CLIENT_FOUND_ROWS; check existence when nothing changed
        if (res.affectedRows > 0) return true;
        const [rows] = await pool.query<RowDataPacket[]>('SELECT 1 FROM routing_rule WHERE id = ?', [r.id]);
        return rows.length > 0;
      }),
    removeRule: (id) => run('removeRule', async () => changed((await pool.query<ResultSetHeader>('DELETE FROM routing_rule WHERE id = ?', [id]))[0])),

    publish: (req) =>
      run('publish', () =>
        inTransaction(async (c): Promise<PublishResult> => {
          const [cur] = await c.query<RowDataPacket[]>('SELECT version FROM routing_current WHERE id = 1 FOR UPDATE');
          const parent = cur[0]?.version === null || cur[0] === undefined ? null : Number(cur[0].version);
          const [max] = await c.query<RowDataPacket[]>('SELECT COALESCE(MAX(version), 0) + 1 AS next FROM routing_version');
          const version = Number(max[0]!.next);
          const [d] = await c.query<DestinationRow[]>('SELECT id, kind, address, attrs FROM routing_destination ORDER BY id LOCK IN SHARE MODE');
          const [s] = await c.query<SetRow[]>('SELECT id, algorithm FROM routing_set ORDER BY id LOCK IN SHARE MODE');
          const [m] = await c.query<MemberRow[]>('SELECT set_id, destination_id, weight, priority FROM routing_set_member ORDER BY set_id, destination_id LOCK IN SHARE MODE');
          const [r] = await c.query<RuleRow[]>(`SELECT ${RULE_COLUMNS} FROM routing_rule WHERE enabled = 1 ORDER BY id LOCK IN SHARE MODE`);
          const data: TableData = { version, destinations: d.map(destinationFromRow), sets: toSets(s, m), rules: r.map(ruleFromRow) };
          const checked = req.check(data);
          if (checked.issues.length > 0) return { ok: false, issues: checked.issues, more: checked.more };
          await c.query('INSERT INTO routing_version (version, parent, published_by, comment, rule_count, topology) VALUES (?, ?, ?, ?, ?, ?)', [
            version,
            parent,
            req.by.slice(0, 128),
            req.comment.slice(0, 512),
            data.rules.length,
            JSON.stringify({ destinations: data.destinations, sets: data.sets }),
          ]);
          await c.query(
            `INSERT INTO routing_version_rule (version, ${RULE_COLUMNS}) SELECT ?, ${RULE_COLUMNS} FROM routing_rule WHERE enabled = 1`,
            [version],
          );
          await c.query('UPDATE routing_current SET version = ? WHERE id = 1', [version]);
          return { ok: true, version, ruleCount: data.rules.length };
        }),
      ),
    rollback: () =>
      run('rollback', () =>
        inTransaction(async (c) => {
          const [rows] = await c.query<RowDataPacket[]>(
            'SELECT c.version AS version, v.parent AS parent FROM routing_current c LEFT JOIN routing_version v ON v.version = c.version WHERE c.id = 1 FOR UPDATE',
          );
          const row = rows[0];
          if (row === undefined || row.version === null || row.parent === null) {
            throw new RoutingError('ROUTING_ERR_NOTHING_TO_ROLL_BACK', 'no earlier version to roll back to');
          }
          await c.query('UPDATE routing_current SET version = ? WHERE id = 1', [row.parent]);
          return { from: Number(row.version), to: Number(row.parent) };
        }),
      ),
    currentVersion: () =>
      run('currentVersion', async () => {
        const [rows] = await pool.query<RowDataPacket[]>('SELECT version FROM routing_current WHERE id = 1');
        const v = rows[0]?.version as number | string | null | undefined;
        return v === null || v === undefined ? undefined : Number(v);
      }),
    loadVersion: (version) =>
      run('loadVersion', async () => {
        const [vs] = await pool.query<VersionRow[]>('SELECT topology FROM routing_version WHERE version = ?', [version]);
        if (vs[0] === undefined) return undefined;
        const topology = jsonColumn<{ destinations: Destination[]; sets: DestinationSet[] }>(vs[0].topology)!;
        // Keyset pages: a million rows arrive as bounded result sets, and the event loop runs between them
        // (one result of a million rows would be parsed and converted in one go: a stall of seconds).
        const rules: Rule[] = [];
        for (let after = 0; ; ) {
          const [page] = await pool.query<RuleRow[]>(`SELECT ${RULE_COLUMNS} FROM routing_version_rule WHERE version = ? AND id > ? ORDER BY id LIMIT ?`, [
            version,
            after,
            LOAD_PAGE_ROWS,
          ]);
          for (const row of page) rules.push(ruleFromRow(row));
          if (page.length < LOAD_PAGE_ROWS) break;
          after = Number(page[page.length - 1]!.id);
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        return { version, destinations: topology.destinations, sets: topology.sets, rules };
      }),
    readVersion: (version) =>
      run('readVersion', async () => {
        const [vs] = await pool.query<VersionRow[]>('SELECT topology, rule_count FROM routing_version WHERE version = ?', [version]);
        if (vs[0] === undefined) return undefined;
        const topology = jsonColumn<{ destinations: Destination[]; sets: DestinationSet[] }>(vs[0].topology)!;
        return {
          version,
          destinations: topology.destinations,
          sets: topology.sets,
          ruleCount: vs[0].rule_count,
          // Keyset pages, each converted and handed on before the next is read: the rows of one page die
          // young, and no million-object array is ever live; the next pages are read meanwhile
          // (rule-pages.mysql.ts; docs/routing.md, build + swap).
          pages: () => readRulePages(pool, { version, ruleCount: vs[0]!.rule_count, pageRows: readPageRows, readAhead, packed: options.packedPages === true, run: (fn) => run('readVersion', fn) }),
        };
      }),
    versions: (limit) =>
      run('versions', async () => {
        const [rows] = await pool.query<VersionRow[]>(
          'SELECT version, parent, published_at, published_by, comment, rule_count FROM routing_version ORDER BY version DESC LIMIT ?',
          [Math.max(1, Math.min(1000, Math.floor(limit)))],
        );
        return rows.map(
          (v): VersionInfo => ({
            version: Number(v.version),
            parent: v.parent === null ? undefined : Number(v.parent),
            publishedAt: v.published_at.getTime(),
            publishedBy: v.published_by,
            comment: v.comment,
            ruleCount: v.rule_count,
          }),
        );
      }),
    async close() {
      closed = true;
    },
  } satisfies RoutingStore;
}
