// MySQL/MariaDB device store (mysql2/promise pool). Schema: deploy/sql/V001__devices.sql.
// Keepalives go through a write-behind buffer flushed every `keepaliveFlushMs` (OWN-5); reads and
// scans overlay or flush it, so callers never see a stale keepalive. Registrations arriving together
// are written in one batch, each still waiting for its own write (registration-batches.ts).
import type { Pool, PoolConnection, ResultSetHeader } from 'mysql2/promise';
import type { Clock } from '../core/clock.ts';
import { DeviceNotFoundError, StorageError, VmsError } from '../errors/catalog.ts';
import { DEFAULT_MAX_CHANNELS_PER_DEVICE, type DeviceRepository, type DeviceRepositoryLimits } from './device-repository.port.ts';
import { writeKeepalives, writeRegistrations } from './device-batches.mysql.ts';
import { createRegistrationBatches } from './registration-batches.ts';
import { removeChannelRows, replaceChannelRows, upsertChannelRows } from './channel-writes.mysql.ts';
import { CHANNEL_COLUMNS, channelFromRow, DEVICE_COLUMNS, deviceFromRow } from './device-rows.ts';
import type { ChannelRow, CountRow, DeviceRow } from './device-rows.mysql.ts';
import { DEFAULT_TENANT, type Device, type DeviceFilter, type DeviceId } from './device.types.ts';
import { createKeepaliveBuffer } from './keepalive-buffer.ts';
import { normalizePage, offsetOf } from './paging.ts';
import { batchableDeviceId } from '@vms/batch';
import { createMysqlLookups } from '../storage/batched-lookups.mysql.ts';

export interface MysqlDeviceRepositoryOptions extends DeviceRepositoryLimits {
  readonly pool: Pool;
  /** Keepalive write-behind period; default 1000 ms. */
  readonly keepaliveFlushMs?: number;
  /** Timers of the keepalive buffer; default system clock. */
  readonly clock?: Clock;
  /** Called when a batched keepalive write fails (it is retried). */
  readonly onKeepaliveFlushError?: (err: unknown, size: number) => void;
}

export function createMysqlDeviceRepository(options: MysqlDeviceRepositoryOptions): DeviceRepository {
  const { pool } = options;
  const maxChannels = options.maxChannelsPerDevice ?? DEFAULT_MAX_CHANNELS_PER_DEVICE;

  const guard = async <T>(operation: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof VmsError) throw err;
      throw new StorageError(operation, { cause: err });
    }
  };

  const inTransaction = async <T>(fn: (conn: PoolConnection) => Promise<T>): Promise<T> => {
    const conn = await pool.getConnection();
    try {
      await conn.beginTransaction();
      const result = await fn(conn);
      await conn.commit();
      return result;
    } catch (err) {
      await conn.rollback().catch(() => {});
      throw err;
    } finally {
      conn.release();
    }
  };

  const keepalives = createKeepaliveBuffer({
    flushIntervalMs: options.keepaliveFlushMs ?? 1000,
    write: (batch) => writeKeepalives(pool, batch),
    onError: options.onKeepaliveFlushError ?? (() => {}),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  keepalives.start();

  const withPending = (d: Device): Device => {
    const pending = keepalives.pending(d.deviceId);
    return pending !== undefined && (d.keepaliveAt === null || pending > d.keepaliveAt) ? Object.freeze({ ...d, keepaliveAt: pending }) : d;
  };

  // The lookups every control request makes go through prepared statements (`execute`, fixed SQL
  // text only: each distinct text is prepared once per connection). mysql2's text-protocol `query`
  // leaves most of each result alive across young-generation GCs (measured: 5-11 ms scavenges every
  // few hundred ms under load, the owner's p99 latency tail); `execute` leaves none.
  const selectDevice = async (conn: Pool | PoolConnection, deviceId: DeviceId, lock = false): Promise<Device | null> => {
    const [rows] = await conn.execute<DeviceRow[]>(`SELECT ${DEVICE_COLUMNS} FROM gb_device WHERE device_id = ?${lock ? ' FOR UPDATE' : ''}`, [deviceId]);
    const row = rows[0];
    return row === undefined ? null : withPending(deviceFromRow(row));
  };

  // getDevice, once per REGISTER, is read in batches (issue 11: the survivors of a dead shard take
  // 50,000-100,000 registrations within minutes): a lone read goes at once by the prepared statement
  // above, those arriving while reads are in flight go together as one `IN (...)` (text protocol: a
  // prepared statement per list length would fill the server's prepared-statement cache).
  const deviceLookups = createMysqlLookups<DeviceId, Device | null>({
    absent: () => null,
    fetch: async (ids) => {
      if (ids.length === 1) {
        const device = await selectDevice(pool, ids[0] as DeviceId);
        return new Map(device === null ? [] : [[device.deviceId, device]]);
      }
      const [rows] = await pool.query<DeviceRow[]>(`SELECT ${DEVICE_COLUMNS} FROM gb_device WHERE device_id IN (?)`, [[...ids]]);
      return new Map(rows.map((r) => [r.device_id, deviceFromRow(r)]));
    },
  });

  const requireDevice = async (conn: PoolConnection, deviceId: DeviceId): Promise<void> => {
    if ((await selectDevice(conn, deviceId, true)) === null) throw new DeviceNotFoundError(deviceId);
  };

  // Registrations arriving together share one upsert and one read-back (registration-batches.ts).
  const registrations = createRegistrationBatches({ write: (batch) => writeRegistrations(pool, batch) });

  let closed: Promise<void> | null = null;

  return {
    registerDevice: (r) =>
      guard('registerDevice', async () => withPending(await registrations.register(r))),

    provisionDevice: (p, atMs) =>
      guard('provisionDevice', async () => {
        const at = new Date(atMs);
        const sets: string[] = ['updated_at = VALUES(updated_at)'];
        const cols = ['device_id', 'created_at', 'updated_at'];
        const vals: unknown[] = [p.deviceId, at, at];
        const field = (col: string, value: unknown): void => {
          if (value === undefined) return;
          cols.push(col);
          vals.push(value);
          sets.push(`${col} = VALUES(${col})`);
        };
        field('tenant_id', p.tenantId);
        field('name', p.name);
        field('password', p.password);
        field('charset', p.charset);
        field('transport', p.transport);
        await pool.query(`INSERT INTO gb_device (${cols.join(', ')}) VALUES (?) ON DUPLICATE KEY UPDATE ${sets.join(', ')}`, [vals]);
        const device = await selectDevice(pool, p.deviceId);
        if (device === null) throw new DeviceNotFoundError(p.deviceId);
        return device;
      }),

    updateDeviceInfo: (deviceId, info, atMs) =>
      guard('updateDeviceInfo', async () => {
        const sets: string[] = ['updated_at = ?'];
        const vals: unknown[] = [new Date(atMs)];
        for (const [col, value] of [['name', info.name], ['manufacturer', info.manufacturer], ['model', info.model], ['firmware', info.firmware]] as const) {
          if (value === undefined) continue;
          sets.push(`${col} = ?`);
          vals.push(value);
        }
        const [res] = await pool.query<ResultSetHeader>(`UPDATE gb_device SET ${sets.join(', ')} WHERE device_id = ?`, [...vals, deviceId]);
        if (res.affectedRows === 0) throw new DeviceNotFoundError(deviceId);
      }),

    getDevice: (deviceId) =>
      guard('getDevice', async () => {
        if (!batchableDeviceId(deviceId)) return selectDevice(pool, deviceId);
        const device = await deviceLookups.load(deviceId);
        // the keepalive buffer as it is now, not as it was when the batch was read
        return device === null ? null : withPending(device);
      }),

    listDevices: (filter: DeviceFilter) =>
      guard('listDevices', async () => {
        const p = normalizePage(filter);
        const where: string[] = [];
        const vals: unknown[] = [];
        if (filter.tenantId !== undefined) {
          where.push('tenant_id = ?');
          vals.push(filter.tenantId);
        }
        if (filter.online !== undefined) {
          where.push('online = ?');
          vals.push(filter.online ? 1 : 0);
        }
        if (filter.idPrefix !== undefined) {
          // digits only (checked by the API), so no LIKE wildcard can be in it; a constant prefix uses the key
          where.push('device_id LIKE ?');
          vals.push(`${filter.idPrefix}%`);
        }
        const clause = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
        const [[count]] = await pool.query<CountRow[]>(`SELECT COUNT(*) AS n FROM gb_device${clause}`, vals);
        const [rows] = await pool.query<DeviceRow[]>(
          `SELECT ${DEVICE_COLUMNS} FROM gb_device${clause} ORDER BY device_id LIMIT ? OFFSET ?`,
          [...vals, p.size, offsetOf(p)],
        );
        return { items: rows.map((r) => withPending(deviceFromRow(r))), total: Number(count?.n ?? 0), page: p.page, size: p.size };
      }),

    countOnlineDevices: () =>
      guard('countOnlineDevices', async () => {
        const [[row]] = await pool.query<CountRow[]>('SELECT COUNT(*) AS n FROM gb_device WHERE online = 1');
        return Number(row?.n ?? 0);
      }),

    touchKeepalive(deviceId, at) {
      keepalives.record(deviceId, at);
    },

    markOnline: (deviceIds, atMs) =>
      guard('markOnline', async () => {
        if (deviceIds.length === 0) return [];
        const at = new Date(atMs);
        return inTransaction(async (conn) => {
          const [rows] = await conn.query<DeviceRow[]>('SELECT device_id FROM gb_device WHERE device_id IN (?) AND online = 0 ORDER BY device_id FOR UPDATE', [[...deviceIds]]);
          const changed = rows.map((r) => r.device_id);
          // Only the rows that flip: the owner re-asserts all its devices every scan, which must stay cheap.
          if (changed.length > 0) {
            await conn.query(
              'UPDATE gb_device SET online = 1, keepalive_at = GREATEST(COALESCE(keepalive_at, ?), ?), updated_at = ? WHERE device_id IN (?)',
              [at, at, at, changed],
            );
          }
          return changed;
        });
      }),

    markOffline: (deviceIds, opts) =>
      guard('markOffline', async () => {
        if (deviceIds.length === 0) return [];
        await keepalives.flush();
        const before = opts?.onlyIfKeepaliveBefore;
        const cond = before === undefined ? '' : ' AND (keepalive_at IS NULL OR keepalive_at < ?)';
        const condVals = before === undefined ? [] : [new Date(before)];
        return inTransaction(async (conn) => {
          const [rows] = await conn.query<DeviceRow[]>(
            `SELECT device_id FROM gb_device WHERE device_id IN (?) AND online = 1${cond} ORDER BY device_id FOR UPDATE`,
            [[...deviceIds], ...condVals],
          );
          const ids = rows.map((r) => r.device_id);
          if (ids.length > 0) await conn.query('UPDATE gb_device SET online = 0 WHERE device_id IN (?)', [ids]);
          return ids;
        });
      }),

    findSilentDevices: (keepaliveBefore, limit) =>
      guard('findSilentDevices', async () => {
        await keepalives.flush();
        const [rows] = await pool.query<DeviceRow[]>(
          'SELECT device_id FROM gb_device WHERE online = 1 AND (keepalive_at IS NULL OR keepalive_at < ?) ORDER BY keepalive_at, device_id LIMIT ?',
          [new Date(keepaliveBefore), Math.max(0, limit)],
        );
        return rows.map((r) => r.device_id);
      }),

    replaceChannels: (deviceId, inputs, atMs) =>
      guard('replaceChannels', () => inTransaction((conn) => replaceChannelRows(conn, deviceId, inputs, new Date(atMs), maxChannels))),

    upsertChannels: (deviceId, inputs, atMs) =>
      guard('upsertChannels', () => inTransaction((conn) => upsertChannelRows(conn, deviceId, inputs, new Date(atMs), maxChannels))),

    removeChannels: (deviceId, channelIds, atMs) =>
      guard('removeChannels', async () => {
        if (channelIds.length === 0) return;
        await inTransaction((conn) => removeChannelRows(conn, deviceId, channelIds, new Date(atMs)));
      }),

    // Numbered pages for the operator API: the total is the kept count (no COUNT(*)); OFFSET walks at
    // most the channel cap of primary-key entries. Whole-catalog reads use listChannelsAfter.
    listChannels: (deviceId, request) =>
      guard('listChannels', async () => {
        const p = normalizePage(request);
        const [[count]] = await pool.execute<CountRow[]>('SELECT channel_count AS n FROM gb_device WHERE device_id = ?', [deviceId]);
        const [rows] = await pool.query<ChannelRow[]>(
          `SELECT ${CHANNEL_COLUMNS} FROM gb_channel WHERE device_id = ? ORDER BY channel_id LIMIT ? OFFSET ?`,
          [deviceId, p.size, offsetOf(p)],
        );
        return { items: rows.map(channelFromRow), total: Number(count?.n ?? 0), page: p.page, size: p.size };
      }),

    // Keyset: the primary key (device_id, channel_id) range from `after`, no OFFSET.
    listChannelsAfter: (deviceId, after, limit) =>
      guard('listChannelsAfter', async () => {
        if (limit <= 0) return [];
        const [rows] = await pool.query<ChannelRow[]>(
          `SELECT ${CHANNEL_COLUMNS} FROM gb_channel WHERE device_id = ?${after === null ? '' : ' AND channel_id > ?'} ORDER BY channel_id LIMIT ?`,
          after === null ? [deviceId, limit] : [deviceId, after, limit],
        );
        return rows.map(channelFromRow);
      }),

    getChannels: (deviceId, channelIds) =>
      guard('getChannels', async () => {
        const ids = [...new Set(channelIds)];
        const out = [];
        for (let i = 0; i < ids.length; i += 1000) {
          const [rows] = await pool.query<ChannelRow[]>(`SELECT ${CHANNEL_COLUMNS} FROM gb_channel WHERE device_id = ? AND channel_id IN (?)`, [deviceId, ids.slice(i, i + 1000)]);
          out.push(...rows.map(channelFromRow));
        }
        return out;
      }),

    getChannel: (deviceId, channelId) =>
      guard('getChannel', async () => {
        const [rows] = await pool.execute<ChannelRow[]>(`SELECT ${CHANNEL_COLUMNS} FROM gb_channel WHERE device_id = ? AND channel_id = ?`, [deviceId, channelId]);
        const row = rows[0];
        return row === undefined ? null : channelFromRow(row);
      }),

    findChannelDevice: (channelId) =>
      guard('findChannelDevice', async () => {
        const [rows] = await pool.execute<ChannelRow[]>(
          'SELECT device_id FROM gb_channel WHERE channel_id = ? ORDER BY updated_at DESC, device_id LIMIT 1',
          [channelId],
        );
        return rows[0]?.device_id ?? null;
      }),

    close() {
      closed ??= registrations.drained().then(() => keepalives.close());
      return closed;
    },
  } satisfies DeviceRepository;
}
