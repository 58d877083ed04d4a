// Multi-row statements of the MySQL device store: registration batches (registration-batches.ts),
// keepalive batches (OWN-5) and catalog upserts.
import type { Pool, PoolConnection } from 'mysql2/promise';
import { CHANNEL_COLUMNS, channelValues, DEVICE_COLUMNS, deviceFromRow } from './device-rows.ts';
import type { DeviceRow } from './device-rows.mysql.ts';
import { DEFAULT_TENANT, type ChannelInput, type Device, type DeviceId, type DeviceRegistration } from './device.types.ts';

/** Rows per multi-row statement. */
const CHUNK = 500;
/**
 * Devices per keepalive UPDATE. Its `CASE device_id WHEN … THEN …` is searched linearly for every row it
 * updates (MariaDB's Item_func_case_simple::find_item, one collation compare per WHEN), so a statement of
 * n devices costs ~n²/2 compares: at 500 that search was about a fifth of mariadbd's CPU in the fleet-kill
 * bench (3 shards, ~2,700 keepalives/s). At 64 the search costs an eighth of that per row, for 8× the
 * statements, which are cheap beside it (docs/benchmarks.md § fleet-kill).
 */
const KEEPALIVE_CHUNK = 64;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Upserts the registrations in order (a later one of the same device wins: MySQL applies the rows of one
 * INSERT in order) and reads their rows back, in one statement each per 500. keepalive_at never goes back.
 */
export async function writeRegistrations(pool: Pool, batch: readonly DeviceRegistration[]): Promise<Map<DeviceId, Device>> {
  const devices = new Map<DeviceId, Device>();
  for (const part of chunks(batch)) {
    const values = part.map((r) => {
      const at = new Date(r.at);
      return [r.deviceId, DEFAULT_TENANT, r.transport, r.remoteIp, r.remotePort, at, at, r.expiresSec, 1, at, at];
    });
    await pool.query(
      'INSERT INTO gb_device (device_id, tenant_id, transport, remote_ip, remote_port, registered_at, keepalive_at, expires_sec, online, created_at, updated_at) ' +
        'VALUES ? ON DUPLICATE KEY UPDATE transport = VALUES(transport), remote_ip = VALUES(remote_ip), ' +
        'remote_port = VALUES(remote_port), registered_at = VALUES(registered_at), ' +
        'keepalive_at = GREATEST(COALESCE(keepalive_at, VALUES(keepalive_at)), VALUES(keepalive_at)), ' +
        'expires_sec = VALUES(expires_sec), online = 1, updated_at = VALUES(updated_at)',
      [values],
    );
    const [rows] = await pool.query<DeviceRow[]>(`SELECT ${DEVICE_COLUMNS} FROM gb_device WHERE device_id IN (?)`, [[...new Set(part.map((r) => r.deviceId))]]);
    for (const row of rows) devices.set(row.device_id, deviceFromRow(row));
  }
  return devices;
}

/** One UPDATE per KEEPALIVE_CHUNK devices; keepalive_at only moves forward (a late batch never rewinds it). */
export async function writeKeepalives(pool: Pool, batch: ReadonlyMap<DeviceId, number>): Promise<void> {
  for (const part of chunks([...batch], KEEPALIVE_CHUNK)) {
    const cases = part.map(() => 'WHEN ? THEN CAST(? AS DATETIME(3))').join(' ');
    const params: unknown[] = part.flatMap(([id, at]) => [id, new Date(at)]);
    await pool.query(
      `UPDATE gb_device SET keepalive_at = GREATEST(COALESCE(keepalive_at, CAST('1970-01-01' AS DATETIME(3))), CASE device_id ${cases} END) ` +
        'WHERE device_id IN (?)',
      [...params, part.map(([id]) => id)],
    );
  }
}

/** Upserts catalog items; a channel id given twice keeps the later item. */
export async function insertChannels(conn: PoolConnection, deviceId: DeviceId, inputs: readonly ChannelInput[], at: Date): Promise<void> {
  const unique = [...new Map(inputs.map((c) => [c.channelId, c])).values()];
  for (const part of chunks(unique)) {
    await conn.query(
      `INSERT INTO gb_channel (${CHANNEL_COLUMNS}) VALUES ? ON DUPLICATE KEY UPDATE ` +
        'name = VALUES(name), manufacturer = VALUES(manufacturer), model = VALUES(model), owner = VALUES(owner), ' +
        'civil_code = VALUES(civil_code), address = VALUES(address), parent_id = VALUES(parent_id), parental = VALUES(parental), ' +
        'status = VALUES(status), longitude = VALUES(longitude), latitude = VALUES(latitude), ptz_type = VALUES(ptz_type), ' +
        'extra = VALUES(extra), updated_at = VALUES(updated_at)',
      [part.map((c) => channelValues(deviceId, c, at))],
    );
  }
}
