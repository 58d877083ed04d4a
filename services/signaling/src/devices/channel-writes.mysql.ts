// Catalog writes of the MySQL device store (SPEC SEC-3): each costs the channels it names, never the
// device's whole catalog. The device row is locked (FOR UPDATE) for the transaction, so the channel
// cap and `channel_count` hold under concurrent messages from one device; the count is kept by
// difference (ids that were not stored yet, rows actually deleted), never by COUNT(*).
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { ChannelLimitError, DeviceNotFoundError } from '../errors/catalog.ts';
import { insertChannels } from './device-batches.mysql.ts';
import type { ChannelId, ChannelInput, DeviceId } from './device.types.ts';

interface CountRow extends RowDataPacket {
  channel_count: number;
}
interface IdRow extends RowDataPacket {
  channel_id: string;
}

/** Ids per `IN (…)` list. */
const ID_CHUNK = 1000;

/** The device's channel count, its row locked until the transaction ends; DeviceNotFoundError if absent. */
async function lockDevice(conn: PoolConnection, deviceId: DeviceId): Promise<number> {
  const [rows] = await conn.query<CountRow[]>('SELECT channel_count FROM gb_device WHERE device_id = ? FOR UPDATE', [deviceId]);
  const row = rows[0];
  if (row === undefined) throw new DeviceNotFoundError(deviceId);
  return Number(row.channel_count);
}

/** Which of `ids` the device already has (by primary key). */
export async function storedChannelIds(conn: PoolConnection, deviceId: DeviceId, ids: readonly ChannelId[]): Promise<Set<ChannelId>> {
  const out = new Set<ChannelId>();
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const [rows] = await conn.query<IdRow[]>('SELECT channel_id FROM gb_channel WHERE device_id = ? AND channel_id IN (?)', [deviceId, ids.slice(i, i + ID_CHUNK)]);
    for (const r of rows) out.add(r.channel_id);
  }
  return out;
}

const setCount = (conn: PoolConnection, deviceId: DeviceId, count: number, at: Date): Promise<unknown> =>
  conn.query('UPDATE gb_device SET channel_count = ?, updated_at = ? WHERE device_id = ?', [count, at, deviceId]);

export async function upsertChannelRows(conn: PoolConnection, deviceId: DeviceId, inputs: readonly ChannelInput[], at: Date, maxChannels: number): Promise<void> {
  const count = await lockDevice(conn, deviceId);
  const ids = [...new Set(inputs.map((c) => c.channelId))];
  const stored = await storedChannelIds(conn, deviceId, ids);
  const next = count + ids.length - stored.size;
  if (next > maxChannels) throw new ChannelLimitError(deviceId, maxChannels);
  await insertChannels(conn, deviceId, inputs, at);
  await setCount(conn, deviceId, next, at);
}

export async function replaceChannelRows(conn: PoolConnection, deviceId: DeviceId, inputs: readonly ChannelInput[], at: Date, maxChannels: number): Promise<void> {
  await lockDevice(conn, deviceId);
  const unique = new Set(inputs.map((c) => c.channelId)).size;
  if (unique > maxChannels) throw new ChannelLimitError(deviceId, maxChannels);
  await conn.query('DELETE FROM gb_channel WHERE device_id = ?', [deviceId]);
  await insertChannels(conn, deviceId, inputs, at);
  await setCount(conn, deviceId, unique, at);
}

export async function removeChannelRows(conn: PoolConnection, deviceId: DeviceId, channelIds: readonly ChannelId[], at: Date): Promise<void> {
  let count: number;
  try {
    count = await lockDevice(conn, deviceId);
  } catch (err) {
    if (err instanceof DeviceNotFoundError) return; // unknown ids, unknown device: nothing to remove
    throw err;
  }
  const ids = [...new Set(channelIds)];
  let removed = 0;
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const [res] = await conn.query<ResultSetHeader>('DELETE FROM gb_channel WHERE device_id = ? AND channel_id IN (?)', [deviceId, ids.slice(i, i + ID_CHUNK)]);
    removed += res.affectedRows;
  }
  await setCount(conn, deviceId, Math.max(0, count - removed), at);
}
