// ReportStore on MySQL (cluster: every instance reads what the owners wrote), tables of V008. Bounds
// (SPEC SEC-3) are kept by trimming: a device's oldest rows once it wrote a tenth of its bound since
// the last trim (so a device holds at most 1.1 × its bound), the oldest rows overall every
// `totalTrimEvery` writes of this instance. Strings longer than their column are cut, never refused:
// a device's oversized field loses its tail, not the alarm.
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import type { DeviceId, PageRequest } from '../devices/device.types.ts';
import { normalizePage, offsetOf } from '../devices/paging.ts';
import { batchableDeviceId } from '@vms/batch';
import { createMysqlLookups } from '../storage/batched-lookups.mysql.ts';
import {
  DEFAULT_REPORT_BOUNDS,
  NO_SUBSCRIPTIONS,
  type AlarmQuery,
  type AlarmRecord,
  type PositionRecord,
  type ReportBounds,
  type ReportStore,
  type SubscriptionSettings,
  type TrackQuery,
} from './report-store.port.ts';

export interface MysqlReportStoreOptions {
  readonly pool: Pool;
  readonly bounds?: Partial<ReportBounds>;
  /** Whole-table trims happen every this many writes of this instance (per table). */
  readonly totalTrimEvery?: number;
}

const cut = (v: string | null, max: number): string | null => (v === null ? null : v.slice(0, max));
const ms = (d: unknown): number => (d instanceof Date ? d.getTime() : new Date(String(d)).getTime());

function where(deviceId: string, from: number | undefined, to: number | undefined): { sql: string; params: unknown[] } {
  let sql = 'device_id = ?';
  const params: unknown[] = [deviceId];
  if (from !== undefined) {
    sql += ' AND received_at >= ?';
    params.push(new Date(from));
  }
  if (to !== undefined) {
    sql += ' AND received_at <= ?';
    params.push(new Date(to));
  }
  return { sql, params };
}

/** Per-device and total trimming of one table (rows ordered by id = arrival). */
class Trimmer {
  readonly #sinceTrim = new Map<string, number>();
  #writes = 0;

  constructor(
    private readonly pool: Pool,
    private readonly table: 'device_alarm' | 'device_position',
    private readonly perDevice: number,
    private readonly total: number,
    private readonly totalEvery: number,
  ) {}

  async wrote(deviceId: string): Promise<void> {
    const n = (this.#sinceTrim.get(deviceId) ?? 0) + 1;
    if (n >= Math.max(1, Math.floor(this.perDevice / 10))) {
      this.#sinceTrim.delete(deviceId);
      await this.pool.query(
        `DELETE FROM ${this.table} WHERE device_id = ? AND id < (SELECT id FROM (SELECT id FROM ${this.table} WHERE device_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?) AS keep)`,
        [deviceId, deviceId, this.perDevice - 1],
      );
    } else {
      this.#sinceTrim.set(deviceId, n);
      // the counters themselves are bounded: forgotten devices just trim a little later
      if (this.#sinceTrim.size > 100_000) this.#sinceTrim.clear();
    }
    if (++this.#writes % this.totalEvery === 0) {
      await this.pool.query(`DELETE FROM ${this.table} WHERE id < (SELECT id FROM (SELECT id FROM ${this.table} ORDER BY id DESC LIMIT 1 OFFSET ?) AS keep)`, [this.total - 1]);
    }
  }
}

export function createMysqlReportStore(o: MysqlReportStoreOptions): ReportStore {
  const { pool } = o;
  const b = { ...DEFAULT_REPORT_BOUNDS, ...o.bounds };
  const every = o.totalTrimEvery ?? 1000;
  const alarmTrim = new Trimmer(pool, 'device_alarm', b.alarmsPerDevice, b.alarmsTotal, every);
  const positionTrim = new Trimmer(pool, 'device_position', b.positionsPerDevice, b.positionsTotal, every);

  const alarmOf = (r: RowDataPacket): AlarmRecord => ({
    id: Number(r['id']),
    deviceId: String(r['device_id']),
    sourceId: String(r['source_id']),
    receivedAt: ms(r['received_at']),
    priority: String(r['priority']),
    method: String(r['method']),
    type: (r['type'] as string | null) ?? null,
    alarmTime: (r['alarm_time'] as string | null) ?? null,
    description: (r['description'] as string | null) ?? null,
    longitude: (r['longitude'] as string | null) ?? null,
    latitude: (r['latitude'] as string | null) ?? null,
    via: r['via'] === 'notify' ? 'notify' : 'message',
  });
  const positionOf = (r: RowDataPacket): PositionRecord => ({
    deviceId: String(r['device_id']),
    sourceId: String(r['source_id']),
    receivedAt: ms(r['received_at']),
    time: String(r['time']),
    longitude: String(r['longitude']),
    latitude: String(r['latitude']),
    speed: (r['speed'] as string | null) ?? null,
    direction: (r['direction'] as string | null) ?? null,
    altitude: (r['altitude'] as string | null) ?? null,
  });

  const page = async <T>(table: string, cond: { sql: string; params: unknown[] }, order: 'ASC' | 'DESC', req: PageRequest, map: (r: RowDataPacket) => T) => {
    const p = normalizePage(req);
    const [count] = await pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${cond.sql}`, cond.params);
    const [rows] = await pool.query<RowDataPacket[]>(`SELECT * FROM ${table} WHERE ${cond.sql} ORDER BY id ${order} LIMIT ? OFFSET ?`, [...cond.params, p.size, offsetOf(p)]);
    return { items: rows.map(map), total: Number(count[0]?.['n'] ?? 0), page: p.page, size: p.size };
  };

  const settingsOf = (r: RowDataPacket): SubscriptionSettings => ({
    catalog: Number(r['catalog']) === 1,
    alarm: Number(r['alarm']) === 1,
    mobileposition: Number(r['mobile_position']) === 1,
    intervalS: Number(r['interval_s']),
  });
  const selectSubscriptions = async (deviceIds: readonly DeviceId[]): Promise<Map<DeviceId, SubscriptionSettings>> => {
    const [rows] =
      deviceIds.length === 1
        ? await pool.query<RowDataPacket[]>('SELECT device_id, catalog, alarm, mobile_position, interval_s FROM device_subscription WHERE device_id = ?', [deviceIds[0]])
        : await pool.query<RowDataPacket[]>('SELECT device_id, catalog, alarm, mobile_position, interval_s FROM device_subscription WHERE device_id IN (?)', [[...deviceIds]]);
    return new Map(rows.map((r) => [String(r['device_id']), settingsOf(r)]));
  };
  // Read once per device coming online (issue 11: a storm of them on the survivors of a dead shard): a
  // lone read goes at once, those arriving while reads are in flight go together (@vms/batch).
  const subscriptionLookups = createMysqlLookups<DeviceId, SubscriptionSettings>({ fetch: selectSubscriptions, absent: () => NO_SUBSCRIPTIONS });

  return {
    async addAlarm(a) {
      const [res] = await pool.query<ResultSetHeader>(
        'INSERT INTO device_alarm (device_id, source_id, received_at, priority, method, type, alarm_time, description, longitude, latitude, via) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [a.deviceId, cut(a.sourceId, 64), new Date(a.receivedAt), cut(a.priority, 8), cut(a.method, 8), cut(a.type, 16), cut(a.alarmTime, 32), cut(a.description, 512), cut(a.longitude, 32), cut(a.latitude, 32), a.via],
      );
      await alarmTrim.wrote(a.deviceId);
      return { ...a, id: res.insertId };
    },
    listAlarms(q: AlarmQuery, req) {
      const cond = where(q.deviceId, q.from, q.to);
      for (const [col, v] of [['method', q.method], ['type', q.type], ['priority', q.priority]] as const) {
        if (v === undefined) continue;
        cond.sql += ` AND ${col} = ?`;
        cond.params.push(v);
      }
      return page('device_alarm', cond, 'DESC', req, alarmOf);
    },
    async addPosition(p) {
      await pool.query(
        'INSERT INTO device_position (device_id, source_id, received_at, time, longitude, latitude, speed, direction, altitude) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [p.deviceId, cut(p.sourceId, 64), new Date(p.receivedAt), cut(p.time, 32), cut(p.longitude, 32), cut(p.latitude, 32), cut(p.speed, 16), cut(p.direction, 16), cut(p.altitude, 16)],
      );
      await positionTrim.wrote(p.deviceId);
    },
    async latestPosition(deviceId) {
      const [rows] = await pool.query<RowDataPacket[]>('SELECT * FROM device_position WHERE device_id = ? ORDER BY id DESC LIMIT 1', [deviceId]);
      return rows[0] === undefined ? null : positionOf(rows[0]);
    },
    track(q: TrackQuery, req) {
      return page('device_position', where(q.deviceId, q.from, q.to), 'ASC', req, positionOf);
    },
    async subscriptionSettings(deviceId) {
      if (!batchableDeviceId(deviceId)) {
        const [alone] = (await selectSubscriptions([deviceId])).values(); // the row the collation matched
        return alone ?? NO_SUBSCRIPTIONS;
      }
      const settings = await subscriptionLookups.load(deviceId);
      return settings === NO_SUBSCRIPTIONS ? settings : { ...settings }; // a caller's own copy, as before
    },
    async saveSubscriptionSettings(deviceId, s) {
      await pool.query(
        'INSERT INTO device_subscription (device_id, catalog, alarm, mobile_position, interval_s) VALUES (?, ?, ?, ?, ?) ' +
          'ON DUPLICATE KEY UPDATE catalog = VALUES(catalog), alarm = VALUES(alarm), mobile_position = VALUES(mobile_position), interval_s = VALUES(interval_s)',
        [deviceId, s.catalog ? 1 : 0, s.alarm ? 1 : 0, s.mobileposition ? 1 : 0, s.intervalS],
      );
    },
    async close() {},
  } satisfies ReportStore;
}
