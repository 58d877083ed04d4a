/**
 * PlatformRepository on MySQL/MariaDB (deploy/sql/V004__upstream_platform.sql, tenant_id from V006). The pool is the
 * caller's (one per process, shared with the other stores); driver errors become CASCADE_ERR_STORE_*
 * (or PLATFORM_NOT_FOUND for a share naming an unknown platform), never raw driver errors.
 */
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { CascadeError } from '../errors.ts';
import type { ChannelShare, SharedChannel, UpstreamPlatform } from './platform.ts';
import type { PlatformRepository } from './platform-repository.port.ts';
import { platformFromRow, platformRowValues, PLATFORM_COLUMNS, sharedChannelFromRow, type PlatformRow, type SharedChannelRow } from './platform-row.ts';
import { validateSharedChannel, validateUpstreamPlatform } from './platform.validate.ts';
import { toStoreError } from './store-errors.ts';
import { batchableShareLookup, createDeviceShareLookups, selectSharesOfDevice, SHARE_COLUMNS } from './device-shares.mysql.ts';

const COLUMNS = PLATFORM_COLUMNS;

const UPSERT = `
INSERT INTO upstream_platform (${COLUMNS})
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
  tenant_id = VALUES(tenant_id),
  name = VALUES(name),
  domain = VALUES(domain),
  host = VALUES(host),
  port = VALUES(port),
  transport = VALUES(transport),
  password = VALUES(password),
  register_expires_s = VALUES(register_expires_s),
  keepalive_interval_s = VALUES(keepalive_interval_s),
  keepalive_max_failures = VALUES(keepalive_max_failures),
  enabled = VALUES(enabled),
  charset = VALUES(charset),
  local_id = VALUES(local_id),
  catalog_group_id = VALUES(catalog_group_id),
  catalog_group_name = VALUES(catalog_group_name)`;

const UPSERT_SHARES_TAIL = `
ON DUPLICATE KEY UPDATE catalog_group_id = VALUES(catalog_group_id), parent_id = VALUES(parent_id)`;

/** Rows per multi-row statement: far below max_allowed_packet, few round trips for big lists. */
const CHUNK = 500;

interface PlatformRecord extends RowDataPacket, PlatformRow {}

interface ShareRecord extends RowDataPacket, SharedChannelRow {}

type Queryable = Pick<Pool, 'query'> | PoolConnection;

export function createMysqlPlatformRepository(pool: Pool): PlatformRepository {
  let closed = false;
  const run = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    if (closed) throw new CascadeError('CASCADE_ERR_CLOSED', 'platform repository is closed');
    try {
      return await fn();
    } catch (err) {
      throw toStoreError(err, what);
    }
  };
  // read on every device online/offline event, in batches under a storm (device-shares.mysql.ts)
  const deviceShares = createDeviceShareLookups(pool);
  const select = async (where: string, params: unknown[]): Promise<UpstreamPlatform[]> => {
    const [rows] = await pool.query<PlatformRecord[]>(`SELECT ${COLUMNS} FROM upstream_platform ${where} ORDER BY server_id`, params);
    return rows.map(platformFromRow);
  };

  return {
    listEnabled: () => run('listEnabled', () => select('WHERE enabled = 1', [])),
    listAll: () => run('listAll', () => select('', [])),
    get: (serverId) => run('get', async () => (await select('WHERE server_id = ?', [serverId]))[0] ?? null),
    upsert: (platform) =>
      run('upsert', async () => {
        const p = validateUpstreamPlatform(platform);
        await pool.query(UPSERT, platformRowValues(p));
      }),
    remove: (serverId) =>
      run('remove', async () => {
        // the foreign key's ON DELETE CASCADE drops the channel list with it
        const [res] = await pool.query<ResultSetHeader>('DELETE FROM upstream_platform WHERE server_id = ?', [serverId]);
        return res.affectedRows > 0;
      }),

    listChannels: (serverId) =>
      run('listChannels', async () => {
        const [rows] = await pool.query<ShareRecord[]>(
          `SELECT ${SHARE_COLUMNS} FROM upstream_platform_channel WHERE platform_id = ? ORDER BY device_id, channel_id`,
          [serverId],
        );
        return rows.map(sharedChannelFromRow);
      }),
    shareChannels: (serverId, channels) =>
      run('shareChannels', async () => {
        channels.forEach(validateSharedChannel);
        if (channels.length === 0) return void (await requirePlatform(pool, serverId));
        await withTransaction(pool, async (conn) => {
          // a missing platform surfaces as a foreign key error → CASCADE_ERR_PLATFORM_NOT_FOUND
          for (const part of chunks(channels)) await insertShares(conn, serverId, part);
        });
      }),
    replaceChannels: (serverId, channels) =>
      run('replaceChannels', async () => {
        channels.forEach(validateSharedChannel);
        await withTransaction(pool, async (conn) => {
          await requirePlatform(conn, serverId, 'FOR UPDATE'); // serialises concurrent replaces of one platform
          await conn.query('DELETE FROM upstream_platform_channel WHERE platform_id = ?', [serverId]);
          for (const part of chunks(channels)) await insertShares(conn, serverId, part);
        });
      }),
    unshareChannels: (serverId, channels) =>
      run('unshareChannels', async () => {
        let removed = 0;
        for (const part of chunks(channels)) {
          const [res] = await pool.query<ResultSetHeader>(
            `DELETE FROM upstream_platform_channel WHERE platform_id = ? AND (device_id, channel_id) IN (${part.map(() => '(?, ?)').join(', ')})`,
            [serverId, ...part.flatMap((c) => [c.deviceId, c.channelId])],
          );
          removed += res.affectedRows;
        }
        return removed;
      }),
    sharesOf: (deviceId, channelId) =>
      run('sharesOf', async () => {
        const [rows] = await pool.query<ShareRecord[]>(
          `SELECT ${SHARE_COLUMNS} FROM upstream_platform_channel WHERE device_id = ? AND channel_id = ? ORDER BY platform_id`,
          [deviceId, channelId],
        );
        return rows.map((r): ChannelShare => ({ ...sharedChannelFromRow(r), platformId: r.platform_id }));
      }),
    sharesOfDevice: (deviceId, limit) =>
      run('sharesOfDevice', () => (batchableShareLookup(deviceId, limit) ? deviceShares.load(deviceId, limit) : selectSharesOfDevice(pool, deviceId, limit))),
    forgetChannels: (deviceId, channelId) =>
      run('forgetChannels', async () => {
        const [res] =
          channelId === undefined
            ? await pool.query<ResultSetHeader>('DELETE FROM upstream_platform_channel WHERE device_id = ?', [deviceId])
            : await pool.query<ResultSetHeader>('DELETE FROM upstream_platform_channel WHERE device_id = ? AND channel_id = ?', [deviceId, channelId]);
        return res.affectedRows;
      }),
    async close() {
      closed = true;
    },
  } satisfies PlatformRepository;
}

async function requirePlatform(db: Queryable, serverId: string, lock = ''): Promise<void> {
  const [rows] = await db.query<RowDataPacket[]>(`SELECT server_id FROM upstream_platform WHERE server_id = ? ${lock}`, [serverId]);
  if (rows.length === 0) throw new CascadeError('CASCADE_ERR_PLATFORM_NOT_FOUND', `no upstream platform ${serverId}`);
}

async function insertShares(conn: PoolConnection, serverId: string, part: readonly SharedChannel[]): Promise<void> {
  await conn.query(
    `INSERT INTO upstream_platform_channel (${SHARE_COLUMNS}) VALUES ${part.map(() => '(?, ?, ?, ?, ?)').join(', ')} ${UPSERT_SHARES_TAIL}`,
    part.flatMap((c) => [serverId, c.deviceId, c.channelId, c.catalogGroupId, c.parentId]),
  );
}

async function withTransaction(pool: Pool, fn: (conn: PoolConnection) => Promise<void>): Promise<void> {
  const conn = await pool.getConnection();
  try {
    await conn.beginTransaction();
    await fn(conn);
    await conn.commit();
  } catch (err) {
    await conn.rollback().catch(() => undefined); // the connection may be the thing that died
    throw err;
  } finally {
    conn.release();
  }
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}
