// The shares of many devices in one statement, for sharesOfDevice under a storm of devices coming online
// or going offline (issue 11: one statement per device overflowed the bounded pool's queue and lost
// cascade ON/OFF notifications). Each device keeps its own bound and order: ROW_NUMBER() per device in
// the order of the single-device statement (MariaDB 10.2+), so no device's rows past its limit leave
// the server.
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { batchableDeviceId, createLookupBatcher, type LookupBatcher } from '@vms/batch';
import { POOL_QUEUE_FULL } from '@vms/mysql-errors';
import type { ChannelShare } from './platform.ts';
import { sharedChannelFromRow, type SharedChannelRow } from './platform-row.ts';

export const SHARE_COLUMNS = 'platform_id, device_id, channel_id, catalog_group_id, parent_id';

interface ShareRecord extends RowDataPacket, SharedChannelRow {}

const shareOf = (r: ShareRecord): ChannelShare => ({ ...sharedChannelFromRow(r), platformId: r.platform_id });

/** Whether a batch may carry this lookup: the id by @vms/batch's rule, a limit the server takes; else it is read alone. */
export const batchableShareLookup = (deviceId: string, limit: number): boolean => batchableDeviceId(deviceId) && Number.isSafeInteger(limit) && limit >= 0;

/** One device's shares by channel then platform, at most `limit`: the statement of a lone lookup. */
export async function selectSharesOfDevice(pool: Pick<Pool, 'query'>, deviceId: string, limit: number): Promise<ChannelShare[]> {
  const [rows] = await pool.query<ShareRecord[]>(`SELECT ${SHARE_COLUMNS} FROM upstream_platform_channel WHERE device_id = ? ORDER BY channel_id, platform_id LIMIT ?`, [
    deviceId,
    limit,
  ]);
  return rows.map(shareOf);
}

/** Lookup key: the limit and the device (callers asking different limits share a batch). */
const keyOf = (deviceId: string, limit: number): string => `${limit}:${deviceId}`;
const parseKey = (key: string): { limit: number; deviceId: string } => {
  const at = key.indexOf(':');
  return { limit: Number(key.slice(0, at)), deviceId: key.slice(at + 1) };
};

/** Several devices' shares: each device's by channel then platform, at most the batch's largest limit. */
async function selectSharesOfDevices(pool: Pick<Pool, 'query'>, deviceIds: readonly string[], limit: number): Promise<Map<string, ChannelShare[]>> {
  const [rows] = await pool.query<ShareRecord[]>(
    `SELECT ${SHARE_COLUMNS} FROM (` +
      `SELECT ${SHARE_COLUMNS}, ROW_NUMBER() OVER (PARTITION BY device_id ORDER BY channel_id, platform_id) AS n ` +
      'FROM upstream_platform_channel WHERE device_id IN (?)) AS ranked ' +
      'WHERE n <= ? ORDER BY device_id, channel_id, platform_id',
    [[...deviceIds], limit],
  );
  const byDevice = new Map<string, ChannelShare[]>();
  for (const r of rows) {
    const list = byDevice.get(r.device_id);
    if (list === undefined) byDevice.set(r.device_id, [shareOf(r)]);
    else list.push(shareOf(r));
  }
  return byDevice;
}

export interface DeviceShareLookups {
  /** The device's shares as selectSharesOfDevice reads them; the caller's own array. */
  load(deviceId: string, limit: number): Promise<ChannelShare[]>;
}

/**
 * A lone lookup goes at once by the single-device statement; those arriving while lookups are in flight
 * go together (@vms/batch). Its overflow reads as the pool's own "queue full": unavailable, try later.
 */
export function createDeviceShareLookups(pool: Pick<Pool, 'query'>): DeviceShareLookups {
  const lookups: LookupBatcher<string, readonly ChannelShare[]> = createLookupBatcher({
    queueFullCode: POOL_QUEUE_FULL,
    absent: () => [],
    fetch: async (keys) => {
      const asked = keys.map(parseKey);
      if (asked.length === 1) {
        const [{ deviceId, limit }] = asked as [{ deviceId: string; limit: number }];
        return new Map([[keys[0] as string, await selectSharesOfDevice(pool, deviceId, limit)]]);
      }
      const deviceIds = [...new Set(asked.map((a) => a.deviceId))];
      const byDevice = await selectSharesOfDevices(pool, deviceIds, Math.max(...asked.map((a) => a.limit)));
      return new Map(asked.map(({ deviceId, limit }, i) => [keys[i] as string, (byDevice.get(deviceId) ?? []).slice(0, limit)]));
    },
  });
  return {
    load: async (deviceId, limit) => [...(await lookups.load(keyOf(deviceId, limit)))],
  };
}
