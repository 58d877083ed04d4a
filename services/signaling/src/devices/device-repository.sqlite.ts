// Embedded persistent device store (the default without MYSQL_URL): SQLite through better-sqlite3,
// in the data directory's database (storage/embedded-store.sqlite.ts). better-sqlite3 is synchronous,
// so every statement is prepared once and no call holds the event loop for long: keepalives go
// through the same write-behind buffer as MySQL (OWN-5), written in transactions of at most
// WRITE_CHUNK rows with a turn of the event loop between two; id lists (markOnline/markOffline) are
// chunked the same way, and so are a catalog report's upserts and reads of named channels (a partial
// catalog of 13,504 channels written in one transaction held the loop 0.95 s on a loaded 2-core machine,
// /healthz with it; SPEC SEC-3: at most 50 ms per input). A catalog replace stays one transaction
// (readers never see half a catalog).
// Catalog writes cost the channels they name, never the device's whole catalog (SPEC SEC-3):
// `channel_count` is kept by difference (ids not stored yet, rows actually deleted), never by COUNT(*),
// and a batch over the per-device cap throws ChannelLimitError inside its transaction, storing nothing.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../core/clock.ts';
import { ChannelLimitError, DeviceNotFoundError, StorageError, VmsError } from '../errors/catalog.ts';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';
import { DEFAULT_MAX_CHANNELS_PER_DEVICE, type DeviceRepository, type DeviceRepositoryLimits } from './device-repository.port.ts';
import { CHANNEL_COLUMNS, channelFromRow, channelValues, DEVICE_COLUMNS, deviceFromRow, type ChannelRowFields, type DeviceRowFields } from './device-rows.ts';
import { type Channel, type ChannelId, type ChannelInput, type Device, type DeviceFilter, type DeviceId, type DeviceRegistration } from './device.types.ts';
import { createKeepaliveBuffer } from './keepalive-buffer.ts';
import { createRegistrationBuffer, registeredRow } from './registration-buffer.ts';
import { createRegistrationUpsert } from './registration-upsert.sqlite.ts';
import { normalizePage, offsetOf } from './paging.ts';

type DeviceRow = DeviceRowFields<number>;
type ChannelRow = ChannelRowFields<number>;

/** Rows read by getDevice kept for the registerDevice after them, at most (registrations in flight interleave). */
const READS_KEPT = 256;

/** Rows per write transaction between two turns of the event loop (~1-3 ms of SQLite work). */
export const WRITE_CHUNK = 1000;

export interface SqliteDeviceRepositoryOptions extends DeviceRepositoryLimits {
  readonly db: EmbeddedDb;
  /** Keepalive write-behind period; default 1000 ms. */
  readonly keepaliveFlushMs?: number;
  readonly clock?: Clock;
  /** Called when a batched registration write fails (it is retried). */
  readonly onRegistrationFlushError?: (err: unknown, size: number) => void;
  /** Called when a batched keepalive write fails (it is retried). */
  readonly onKeepaliveFlushError?: (err: unknown, size: number) => void;
}

interface IdRow {
  device_id: string;
}

const CHANNEL_UPSERT_TAIL =
  ' ON CONFLICT (device_id, channel_id) DO UPDATE SET name = excluded.name, manufacturer = excluded.manufacturer, ' +
  'model = excluded.model, owner = excluded.owner, civil_code = excluded.civil_code, address = excluded.address, ' +
  'parent_id = excluded.parent_id, parental = excluded.parental, status = excluded.status, longitude = excluded.longitude, ' +
  'latitude = excluded.latitude, ptz_type = excluded.ptz_type, extra = excluded.extra, updated_at = excluded.updated_at';

async function inChunks<T>(items: readonly T[], fn: (part: readonly T[]) => void): Promise<void> {
  for (let i = 0; i < items.length; i += WRITE_CHUNK) {
    if (i > 0) await nextTurn();
    fn(items.slice(i, i + WRITE_CHUNK));
  }
}

export function createSqliteDeviceRepository(options: SqliteDeviceRepositoryOptions): DeviceRepository {
  const { db } = options;
  const maxChannels = options.maxChannelsPerDevice ?? DEFAULT_MAX_CHANNELS_PER_DEVICE;
  const s = {
    device: db.prepare<[string], DeviceRow>(`SELECT ${DEVICE_COLUMNS} FROM gb_device WHERE device_id = ?`),
    provisionNew: db.prepare('INSERT OR IGNORE INTO gb_device (device_id, created_at, updated_at) VALUES (?, ?, ?)'),
    countOnline: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM gb_device WHERE online = 1'),
    keepalive: db.prepare('UPDATE gb_device SET keepalive_at = MAX(COALESCE(keepalive_at, 0), ?) WHERE device_id = ?'),
    onlineFlag: db.prepare<[string], { online: number; keepalive_at: number | null }>('SELECT online, keepalive_at FROM gb_device WHERE device_id = ?'),
    // reads idx_gb_device_online_keepalive alone (it holds the key: WITHOUT ROWID)
    countOffline: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM gb_device WHERE online = 0'),
    // the offline ones of a JSON array of ids: one statement per chunk, the per-id work in SQLite's C
    offlineAmong: db.prepare<[string], IdRow>('SELECT device_id FROM gb_device WHERE online = 0 AND device_id IN (SELECT value FROM json_each(?))'),
    setOnline: db.prepare('UPDATE gb_device SET online = 1, keepalive_at = MAX(COALESCE(keepalive_at, ?), ?), updated_at = ? WHERE device_id = ?'),
    setOffline: db.prepare('UPDATE gb_device SET online = 0 WHERE device_id = ?'),
    silent: db.prepare<[number, number], IdRow>(
      'SELECT device_id FROM gb_device WHERE online = 1 AND (keepalive_at IS NULL OR keepalive_at < ?) ORDER BY keepalive_at, device_id LIMIT ?',
    ),
    deleteChannels: db.prepare('DELETE FROM gb_channel WHERE device_id = ?'),
    deleteChannel: db.prepare('DELETE FROM gb_channel WHERE device_id = ? AND channel_id = ?'),
    upsertChannel: db.prepare(`INSERT INTO gb_channel (${CHANNEL_COLUMNS}) VALUES (${CHANNEL_COLUMNS.split(',').map(() => '?').join(', ')})${CHANNEL_UPSERT_TAIL}`),
    channelCount: db.prepare<[string], { channel_count: number }>('SELECT channel_count FROM gb_device WHERE device_id = ?'),
    setChannelCount: db.prepare('UPDATE gb_device SET channel_count = ?, updated_at = ? WHERE device_id = ?'),
    channelStored: db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM gb_channel WHERE device_id = ? AND channel_id = ?'),
    channels: db.prepare<[string, number, number], ChannelRow>(`SELECT ${CHANNEL_COLUMNS} FROM gb_channel WHERE device_id = ? ORDER BY channel_id LIMIT ? OFFSET ?`),
    channelsFrom: db.prepare<[string, number], ChannelRow>(`SELECT ${CHANNEL_COLUMNS} FROM gb_channel WHERE device_id = ? ORDER BY channel_id LIMIT ?`),
    channelsAfter: db.prepare<[string, string, number], ChannelRow>(`SELECT ${CHANNEL_COLUMNS} FROM gb_channel WHERE device_id = ? AND channel_id > ? ORDER BY channel_id LIMIT ?`),
    channel: db.prepare<[string, string], ChannelRow>(`SELECT ${CHANNEL_COLUMNS} FROM gb_channel WHERE device_id = ? AND channel_id = ?`),
    channelDevice: db.prepare<[string], IdRow>('SELECT device_id FROM gb_channel WHERE channel_id = ? ORDER BY updated_at DESC, device_id LIMIT 1'),
  };
  // Device lists: one prepared pair per filter shape (8 shapes).
  const listStatements = new Map<string, { count: ReturnType<typeof db.prepare>; page: ReturnType<typeof db.prepare> }>();
  const listFor = (filter: DeviceFilter): { count: ReturnType<typeof db.prepare>; page: ReturnType<typeof db.prepare> } => {
    const where: string[] = [];
    if (filter.tenantId !== undefined) where.push('tenant_id = @tenantId');
    if (filter.online !== undefined) where.push('online = @online');
    // a range on the key (BINARY collation: ':' sorts right after '9'), so the primary key index serves it
    if (filter.idPrefix !== undefined) where.push('device_id >= @idFrom AND device_id < @idTo');
    const clause = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
    let pair = listStatements.get(clause);
    if (pair === undefined) {
      pair = {
        count: db.prepare(`SELECT COUNT(*) AS n FROM gb_device${clause}`),
        page: db.prepare(`SELECT ${DEVICE_COLUMNS} FROM gb_device${clause} ORDER BY device_id LIMIT @limit OFFSET @offset`),
      };
      listStatements.set(clause, pair);
    }
    return pair;
  };

  // Operator-side statements whose column list depends on the call (≤ 2^5 texts): prepared once per text.
  const dynamic = new Map<string, ReturnType<typeof db.prepare>>();
  const prepared = (sql: string): ReturnType<typeof db.prepare> => {
    let st = dynamic.get(sql);
    if (st === undefined) dynamic.set(sql, (st = db.prepare(sql)));
    return st;
  };

  // Registrations are written behind (registration-buffer.ts): every other operation writes them first,
  // so it sees them and no later write is overtaken by an older registration.
  const registrations = createRegistrationBuffer(
    (batch) => writeRegistrations(batch),
    options.onRegistrationFlushError ?? (() => {}),
  );
  /**
   * Rows getDevice read since the last write, for the registerDevice that follows each (issue 11: the
   * REGISTER handler reads the device, then registers it: one SELECT, not two). Per device, not only the
   * last one: registrations in flight interleave their reads and registrations (with 8 in flight the
   * single last read was another device's nearly every time). Each taken once; any write forgets them
   * all (a keepalive, a provisioning, the offline scan, a registration flush could change the rows), and
   * past READS_KEPT they are forgotten too (reads without a registration after them: API lookups).
   */
  const readSinceWrite = new Map<DeviceId, DeviceRow | undefined>();
  const forgetReads = (): void => {
    if (readSinceWrite.size > 0) readSinceWrite.clear();
  };
  const guard = async <T>(operation: string, fn: () => T | Promise<T>, flushFirst = true): Promise<T> => {
    try {
      if (flushFirst) {
        forgetReads();
        registrations.flush();
      }
      return await fn();
    } catch (err) {
      if (err instanceof VmsError) throw err;
      throw new StorageError(operation, { cause: err });
    }
  };

  const writeKeepalives = db.transaction((part: readonly (readonly [DeviceId, number])[]) => {
    forgetReads();
    registrations.flush(); // a keepalive of a device whose row is still pending would update nothing
    for (const [id, at] of part) s.keepalive.run(at, id);
  });
  const upsertRegistrations = createRegistrationUpsert(db);
  const writeRegistrations = db.transaction((batch: readonly DeviceRegistration[]) => {
    forgetReads();
    upsertRegistrations(batch);
  });
  const keepalives = createKeepaliveBuffer({
    flushIntervalMs: options.keepaliveFlushMs ?? 1000,
    write: (batch) => inChunks([...batch], writeKeepalives),
    onError: options.onKeepaliveFlushError ?? (() => {}),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  keepalives.start();

  const withPending = (d: Device): Device => {
    const pending = keepalives.pending(d.deviceId);
    return pending !== undefined && (d.keepaliveAt === null || pending > d.keepaliveAt) ? Object.freeze({ ...d, keepaliveAt: pending }) : d;
  };
  const selectDevice = (deviceId: DeviceId): Device | null => {
    const row = s.device.get(deviceId);
    if (readSinceWrite.size >= READS_KEPT) readSinceWrite.clear();
    readSinceWrite.set(deviceId, row);
    const registration = registrations.pending(deviceId);
    if (registration !== undefined) return withPending(deviceFromRow(registeredRow(row, registration)));
    return row === undefined ? null : withPending(deviceFromRow(row));
  };
  /** The device as it is once registration `r` is written (applied over a pending one). */
  const selectDeviceAfter = (r: DeviceRegistration): Device => {
    const pending = registrations.pending(r.deviceId);
    // the registration's own columns are r's whatever the row held; the others are read just before
    let row: DeviceRow | undefined;
    if (readSinceWrite.has(r.deviceId)) {
      row = readSinceWrite.get(r.deviceId);
      readSinceWrite.delete(r.deviceId);
    } else row = s.device.get(r.deviceId);
    return withPending(deviceFromRow(registeredRow(pending === undefined ? row : registeredRow(row, pending), r)));
  };
  /** The device's stored channel count; DeviceNotFoundError if absent. */
  const channelCountOf = (deviceId: DeviceId): number => {
    const row = s.channelCount.get(deviceId);
    if (row === undefined) throw new DeviceNotFoundError(deviceId);
    return row.channel_count;
  };
  const putChannels = (deviceId: DeviceId, inputs: readonly ChannelInput[], at: number, count: number): void => {
    for (const c of inputs) s.upsertChannel.run(channelValues(deviceId, c, at)); // a later duplicate id wins
    s.setChannelCount.run(count, at, deviceId);
  };
  // The cap is checked before the first row is written; a throw inside a transaction rolls it back anyway.
  const replace = db.transaction((deviceId: DeviceId, inputs: readonly ChannelInput[], at: number) => {
    channelCountOf(deviceId);
    const unique = new Set(inputs.map((c) => c.channelId)).size;
    if (unique > maxChannels) throw new ChannelLimitError(deviceId, maxChannels);
    s.deleteChannels.run(deviceId);
    putChannels(deviceId, inputs, at, unique);
  });
  /** Ids of `ids` (unique) not stored yet for the device. */
  const unstored = (deviceId: DeviceId, ids: Iterable<ChannelId>): number => {
    let added = 0;
    for (const id of ids) if (s.channelStored.get(deviceId, id) === undefined) added += 1;
    return added;
  };
  const upsertPart = db.transaction((deviceId: DeviceId, inputs: readonly ChannelInput[], at: number) => {
    const count = channelCountOf(deviceId);
    const added = unstored(deviceId, new Set(inputs.map((c) => c.channelId)));
    if (count + added > maxChannels) throw new ChannelLimitError(deviceId, maxChannels);
    putChannels(deviceId, inputs, at, count + added);
  });
  /**
   * One transaction up to WRITE_CHUNK channels; a larger report is checked against the cap as a whole
   * first (reads in chunks), then written in chunks, each checking the cap again in its transaction: a
   * report over the cap stores nothing, and one that a concurrent write takes over it stops there.
   */
  const upsert = async (deviceId: DeviceId, inputs: readonly ChannelInput[], at: number): Promise<void> => {
    if (inputs.length <= WRITE_CHUNK) return upsertPart(deviceId, inputs, at);
    const count = channelCountOf(deviceId);
    let added = 0;
    await inChunks([...new Set(inputs.map((c) => c.channelId))], (part) => {
      added += unstored(deviceId, part);
    });
    if (count + added > maxChannels) throw new ChannelLimitError(deviceId, maxChannels);
    await inChunks(inputs, (part) => upsertPart(deviceId, part, at));
  };
  const remove = db.transaction((deviceId: DeviceId, channelIds: readonly ChannelId[], at: number) => {
    const count = channelCountOf(deviceId);
    let removed = 0;
    for (const id of new Set(channelIds)) removed += s.deleteChannel.run(deviceId, id).changes;
    s.setChannelCount.run(Math.max(0, count - removed), at, deviceId);
  });
  const flipOnline = db.transaction((ids: readonly DeviceId[], at: number, changed: DeviceId[]) => {
    forgetReads();
    // Only the rows that flip: the owner re-asserts all its devices every scan (offline-scanner.ts),
    // which must stay cheap: none when no row is offline, else one statement picks the offline ones
    // (issue 11: a read per registered device per scan, from JS, cost more than a registration).
    if ((s.countOffline.get()?.n ?? 0) === 0) return;
    for (const { device_id: id } of s.offlineAmong.all(JSON.stringify(ids))) {
      s.setOnline.run(at, at, at, id);
      changed.push(id);
    }
  });
  const flipOffline = db.transaction((ids: readonly DeviceId[], before: number | undefined, changed: DeviceId[]) => {
    forgetReads();
    for (const id of ids) {
      const row = s.onlineFlag.get(id);
      if (row?.online !== 1) continue;
      if (before !== undefined && row.keepalive_at !== null && row.keepalive_at >= before) continue;
      s.setOffline.run(id);
      changed.push(id);
    }
  });
  const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

  let closed: Promise<void> | null = null;

  return {
    registerDevice: (r) =>
      guard(
        'registerDevice',
        () => {
          // the row as the batched upsert will leave it (issue 11: one commit per batch, not per REGISTER)
          const device = selectDeviceAfter(r);
          registrations.add(r);
          return device;
        },
        false,
      ),

    provisionDevice: (p, at) =>
      guard('provisionDevice', () => {
        const sets: string[] = ['updated_at = @at'];
        const values: Record<string, unknown> = { at, deviceId: p.deviceId };
        for (const [col, value] of [['tenant_id', p.tenantId], ['name', p.name], ['password', p.password], ['charset', p.charset], ['transport', p.transport]] as const) {
          if (value === undefined) continue;
          sets.push(`${col} = @${col}`);
          values[col] = value;
        }
        db.transaction(() => {
          s.provisionNew.run(p.deviceId, at, at);
          prepared(`UPDATE gb_device SET ${sets.join(', ')} WHERE device_id = @deviceId`).run(values);
        })();
        const device = selectDevice(p.deviceId);
        if (device === null) throw new DeviceNotFoundError(p.deviceId);
        return device;
      }),

    updateDeviceInfo: (deviceId, info, at) =>
      guard('updateDeviceInfo', () => {
        const sets: string[] = ['updated_at = @at'];
        const values: Record<string, unknown> = { at, deviceId };
        for (const [col, value] of [['name', info.name], ['manufacturer', info.manufacturer], ['model', info.model], ['firmware', info.firmware]] as const) {
          if (value === undefined) continue;
          sets.push(`${col} = @${col}`);
          values[col] = value;
        }
        const res = prepared(`UPDATE gb_device SET ${sets.join(', ')} WHERE device_id = @deviceId`).run(values);
        if (res.changes === 0) throw new DeviceNotFoundError(deviceId);
      }),

    getDevice: (deviceId) => guard('getDevice', () => selectDevice(deviceId), false),

    listDevices: (filter) =>
      guard('listDevices', () => {
        const p = normalizePage(filter);
        const params = {
          ...(filter.tenantId === undefined ? {} : { tenantId: filter.tenantId }),
          ...(filter.online === undefined ? {} : { online: filter.online ? 1 : 0 }),
          ...(filter.idPrefix === undefined ? {} : { idFrom: filter.idPrefix, idTo: `${filter.idPrefix}:` }),
        };
        const { count, page } = listFor(filter);
        const total = (count.get(params) as { n: number }).n;
        const rows = page.all({ ...params, limit: p.size, offset: offsetOf(p) }) as DeviceRow[];
        return { items: rows.map((r) => withPending(deviceFromRow(r))), total, page: p.page, size: p.size };
      }),

    countOnlineDevices: () => guard('countOnlineDevices', () => s.countOnline.get()?.n ?? 0),

    touchKeepalive(deviceId, at) {
      keepalives.record(deviceId, at);
    },

    markOnline: (deviceIds, at) =>
      guard('markOnline', async () => {
        // No row offline (the usual state): nothing can flip, so no set, copy and chunk of the ids either.
        // The offline scan re-asserts every device it holds this way each period (~7k ids: a few million
        // instructions, run by the interpreter as often as not, billed to whatever registrations share the window)
        if ((s.countOffline.get()?.n ?? 0) === 0) return [];
        const changed: DeviceId[] = [];
        await inChunks([...new Set(deviceIds)], (part) => flipOnline(part, at, changed));
        return changed.sort(byKey);
      }),

    markOffline: (deviceIds, opts) =>
      guard('markOffline', async () => {
        if (deviceIds.length === 0) return [];
        await keepalives.flush();
        const changed: DeviceId[] = [];
        await inChunks([...new Set(deviceIds)], (part) => flipOffline(part, opts?.onlyIfKeepaliveBefore, changed));
        return changed.sort(byKey);
      }),

    findSilentDevices: (keepaliveBefore, limit) =>
      guard('findSilentDevices', async () => {
        await keepalives.flush();
        return s.silent.all(keepaliveBefore, Math.max(0, limit)).map((r) => r.device_id);
      }),

    replaceChannels: (deviceId, inputs, at) => guard('replaceChannels', () => replace(deviceId, inputs, at)),

    upsertChannels: (deviceId, inputs, at) => guard('upsertChannels', () => upsert(deviceId, inputs, at)),

    removeChannels: (deviceId, channelIds, at) =>
      guard('removeChannels', () => {
        if (channelIds.length === 0 || s.channelCount.get(deviceId) === undefined) return;
        remove(deviceId, channelIds, at);
      }),

    listChannels: (deviceId, request) =>
      guard('listChannels', () => {
        const p = normalizePage(request);
        const total = s.channelCount.get(deviceId)?.channel_count ?? 0; // kept by difference: no COUNT(*) per page
        return { items: s.channels.all(deviceId, p.size, offsetOf(p)).map(channelFromRow), total, page: p.page, size: p.size };
      }),

    listChannelsAfter: (deviceId, after, limit) =>
      guard('listChannelsAfter', () => {
        if (limit <= 0) return [];
        const rows = after === null ? s.channelsFrom.all(deviceId, limit) : s.channelsAfter.all(deviceId, after, limit);
        return rows.map(channelFromRow);
      }),

    getChannels: (deviceId, channelIds) =>
      guard('getChannels', async () => {
        const out: Channel[] = [];
        await inChunks([...new Set(channelIds)], (part) => {
          for (const id of part) {
            const row = s.channel.get(deviceId, id);
            if (row !== undefined) out.push(channelFromRow(row));
          }
        });
        return out;
      }),

    getChannel: (deviceId, channelId) =>
      guard('getChannel', () => {
        const row = s.channel.get(deviceId, channelId);
        return row === undefined ? null : channelFromRow(row);
      }),

    findChannelDevice: (channelId) => guard('findChannelDevice', () => s.channelDevice.get(channelId)?.device_id ?? null),

    close() {
      closed ??= keepalives.close().finally(() => registrations.close());
      return closed;
    },
  } satisfies DeviceRepository;
}
