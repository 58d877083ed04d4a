/**
 * NodeRegistry on the MySQL/MariaDB `signal_node` table (deploy/sql/V002__signal_node.sql).
 * SPEC NODE-1: the heartbeat writes NOW(3) and the online flag is computed in SQL against NOW(3),
 * so only the database clock matters. Driver errors become typed errors (FAIL-4); retrying is the
 * caller's choice (see retryTransient).
 */
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { compareCodes } from './election.ts';
import { StoreClosedError } from './errors.ts';
import { toNodeRegistryError } from './mysql-errors.ts';
import { MAX_DRAIN_PERIOD_MS, type NodeRegistry, type NodeRow } from './node-table.port.ts';

const DEFAULT_GROUP = 'default';

const UPSERT = `
INSERT INTO signal_node
  (node_code, sip_host, sip_port, internal_base_url, cascade_node, started_at, last_heartbeat, online_device_count, version, placement_group)
VALUES (?, ?, ?, ?, ?, ?, NOW(3), ?, ?, ?)
ON DUPLICATE KEY UPDATE
  sip_host = VALUES(sip_host),
  sip_port = VALUES(sip_port),
  internal_base_url = VALUES(internal_base_url),
  cascade_node = VALUES(cascade_node),
  started_at = VALUES(started_at),
  last_heartbeat = NOW(3),
  online_device_count = VALUES(online_device_count),
  version = VALUES(version),
  placement_group = VALUES(placement_group)`;

// The window arrives in microseconds so sub-second windows work; the comparison happens in SQL.
const SELECT = `
SELECT node_code, sip_host, sip_port, internal_base_url, cascade_node, started_at, last_heartbeat,
       online_device_count, version, placement_group,
       draining <> 0 OR (left_at IS NOT NULL AND left_at >= last_heartbeat) AS draining,
       CASE WHEN left_at IS NOT NULL AND left_at >= last_heartbeat THEN 1
            WHEN draining = 0 THEN 0
            WHEN drain_started_at IS NULL OR drain_period_ms IS NULL OR drain_period_ms = 0 THEN 1
            ELSE LEAST(1, GREATEST(0, TIMESTAMPDIFF(MICROSECOND, drain_started_at, NOW(3)) / (drain_period_ms * 1000))) END AS drained_share,
       CASE WHEN draining <> 0 OR join_started_at IS NULL OR join_period_ms IS NULL OR join_period_ms = 0 THEN 1
            ELSE LEAST(1, GREATEST(0, TIMESTAMPDIFF(MICROSECOND, join_started_at, NOW(3)) / (join_period_ms * 1000))) END AS joined_share,
       CASE WHEN draining <> 0 OR join_started_at IS NULL THEN 1 ELSE COALESCE(join_from, 1) END AS join_from,
       last_heartbeat >= NOW(3) - INTERVAL ? MICROSECOND AND (left_at IS NULL OR left_at < last_heartbeat) AS online,
       TIMESTAMPDIFF(MICROSECOND, NOW(3), last_heartbeat + INTERVAL ? MICROSECOND) AS offline_in_us
FROM signal_node`;

// A drain already under way keeps its start (asking again must not bring released devices back); a new
// period applies from that start. Undraining clears both.
const DRAIN = `UPDATE signal_node SET
  drain_started_at = IF(draining <> 0 AND drain_started_at IS NOT NULL, drain_started_at, NOW(3)),
  drain_period_ms = ?,
  draining = 1,
  join_started_at = NULL, join_period_ms = NULL, join_from = NULL
WHERE node_code = ?`;
// Undraining a draining node starts its paced return from where its drain had got (join_from); a node not
// draining keeps what it has (a return under way keeps its start). Assignments run left to right (MySQL,
// MariaDB), so join_from reads the drain columns before they are cleared.
const UNDRAIN = `UPDATE signal_node SET
  join_from = IF(draining <> 0, CASE WHEN drain_started_at IS NULL OR drain_period_ms IS NULL OR drain_period_ms = 0 THEN 1
      ELSE LEAST(1, GREATEST(0, TIMESTAMPDIFF(MICROSECOND, drain_started_at, NOW(3)) / (drain_period_ms * 1000))) END, join_from),
  join_started_at = IF(draining <> 0, NOW(3), join_started_at),
  join_period_ms = IF(draining <> 0, ?, join_period_ms),
  draining = 0, drain_started_at = NULL, drain_period_ms = NULL
WHERE node_code = ?`;

// Never before the last heartbeat (online needs left_at < last_heartbeat): offline at once, whatever the clocks.
const LEAVE = 'UPDATE signal_node SET left_at = GREATEST(NOW(3), last_heartbeat) WHERE node_code = ?';

interface NodeRecord extends RowDataPacket {
  node_code: string;
  sip_host: string;
  sip_port: number;
  internal_base_url: string;
  cascade_node: number;
  started_at: Date;
  last_heartbeat: Date;
  online_device_count: number;
  version: string;
  placement_group: string;
  draining: number | null;
  drained_share: number | string | null;
  joined_share: number | string | null;
  join_from: number | string | null;
  online: number | null;
  offline_in_us: number | string | null;
}

export function createMysqlNodeRegistry(pool: Pool): NodeRegistry {
  let closed = false;
  const run = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    if (closed) throw new StoreClosedError('node registry is closed');
    try {
      return await fn();
    } catch (err) {
      throw toNodeRegistryError(err, what);
    }
  };
  const select = async (windowMs: number, where: string, params: unknown[]): Promise<NodeRow[]> => {
    const us = windowUs(windowMs);
    const [rows] = await pool.query<NodeRecord[]>(`${SELECT} ${where}`, [us, us, ...params]);
    return rows.map(toRow).sort((a, b) => compareCodes(a.code, b.code));
  };
  return {
    heartbeat: (self, onlineDeviceCount) =>
      run('heartbeat', async () => {
        await pool.query(UPSERT, [
          self.code,
          self.sipHost,
          self.sipPort,
          self.internalBaseUrl,
          self.cascadeNode ? 1 : 0,
          self.startedAt,
          onlineDeviceCount,
          self.version,
          self.placementGroup ?? DEFAULT_GROUP,
        ]);
      }),
    listNodes: (onlineWindowMs) => run('listNodes', () => select(onlineWindowMs, '', [])),
    getNode: (code, onlineWindowMs) =>
      run('getNode', async () => (await select(onlineWindowMs, 'WHERE node_code = ?', [code]))[0] ?? null),
    leave: (code) =>
      run('leave', async () => {
        await pool.query(LEAVE, [code]);
      }),
    setDraining: (code, draining, periodMs = 0) => {
      const period = drainPeriod(periodMs);
      return run('setDraining', async () => {
        const [res] = await pool.query<ResultSetHeader>(draining ? DRAIN : UNDRAIN, [period, code]);
        return res.affectedRows > 0;
      });
    },
    async close() {
      closed = true;
    },
  } satisfies NodeRegistry;
}

function windowUs(windowMs: number): number {
  if (!Number.isFinite(windowMs) || windowMs < 0) throw new RangeError(`online window must be >= 0 ms, got ${windowMs}`);
  return Math.round(windowMs * 1000);
}

function drainPeriod(periodMs: number): number {
  if (!Number.isInteger(periodMs) || periodMs < 0 || periodMs > MAX_DRAIN_PERIOD_MS) throw new RangeError(`drain period must be 0..${MAX_DRAIN_PERIOD_MS} ms, got ${periodMs}`);
  return periodMs;
}

/** A 0..1 share from SQL (1 when absent). */
const share = (v: number | string | null): number => Math.min(1, Math.max(0, Number(v ?? 1)));

function toRow(r: NodeRecord): NodeRow {
  return {
    code: r.node_code,
    sipHost: r.sip_host,
    sipPort: r.sip_port,
    internalBaseUrl: r.internal_base_url,
    cascadeNode: r.cascade_node === 1,
    startedAt: r.started_at,
    version: r.version,
    lastHeartbeat: r.last_heartbeat,
    onlineDeviceCount: r.online_device_count,
    online: r.online === 1,
    draining: r.draining === 1,
    drainedShare: r.draining === 1 ? Math.min(1, Math.max(0, Number(r.drained_share ?? 1))) : 0,
    joinedShare: r.draining === 1 ? 1 : share(r.joined_share),
    joinFrom: r.draining === 1 ? 1 : share(r.join_from),
    placementGroup: r.placement_group,
    offlineInMs: r.online === 1 ? Math.max(0, Number(r.offline_in_us ?? 0) / 1000) : 0,
  };
}
