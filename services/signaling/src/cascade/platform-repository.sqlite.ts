// PlatformRepository (SPEC CASC-2; a tenant per platform, SEC-2) in the embedded store of a single
// instance (storage/embedded-store.sqlite.ts), the counterpart of @vms/cascade's MySQL adapter. Statements prepared
// once; a channel list is written in one transaction (all or nothing, as the port requires). Driver
// errors become CASCADE_ERR_STORE_QUERY (a local file has no "unavailable" state to wait out).
import {
  CascadeError,
  platformFromRow,
  platformRowValues,
  PLATFORM_COLUMNS,
  sharedChannelFromRow,
  validateSharedChannel,
  validateUpstreamPlatform,
  type ChannelShare,
  type PlatformRepository,
  type PlatformRow,
  type SharedChannel,
  type SharedChannelRow,
  type UpstreamPlatform,
} from '@vms/cascade';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';
import { limitStatements } from '../storage/limit-statements.sqlite.ts';

const COLUMNS = PLATFORM_COLUMNS;

const SHARE_COLUMNS = 'platform_id, device_id, channel_id, catalog_group_id, parent_id';

type PlatformRecord = PlatformRow;
type ShareRecord = SharedChannelRow;

export function createSqlitePlatformRepository(db: EmbeddedDb): PlatformRepository {
  const s = {
    all: db.prepare<[], PlatformRecord>(`SELECT ${COLUMNS} FROM upstream_platform ORDER BY server_id`),
    enabled: db.prepare<[], PlatformRecord>(`SELECT ${COLUMNS} FROM upstream_platform WHERE enabled = 1 ORDER BY server_id`),
    one: db.prepare<[string], PlatformRecord>(`SELECT ${COLUMNS} FROM upstream_platform WHERE server_id = ?`),
    exists: db.prepare<[string], { server_id: string }>('SELECT server_id FROM upstream_platform WHERE server_id = ?'),
    upsert: db.prepare(
      `INSERT INTO upstream_platform (${COLUMNS}) VALUES (${COLUMNS.split(',').map(() => '?').join(', ')}) ` +
        'ON CONFLICT (server_id) DO UPDATE SET tenant_id = excluded.tenant_id, name = excluded.name, domain = excluded.domain, host = excluded.host, port = excluded.port, ' +
        'transport = excluded.transport, password = excluded.password, register_expires_s = excluded.register_expires_s, ' +
        'keepalive_interval_s = excluded.keepalive_interval_s, keepalive_max_failures = excluded.keepalive_max_failures, ' +
        'enabled = excluded.enabled, charset = excluded.charset, local_id = excluded.local_id, ' +
        'catalog_group_id = excluded.catalog_group_id, catalog_group_name = excluded.catalog_group_name',
    ),
    remove: db.prepare('DELETE FROM upstream_platform WHERE server_id = ?'), // ON DELETE CASCADE drops the shares
    shares: db.prepare<[string], ShareRecord>(`SELECT ${SHARE_COLUMNS} FROM upstream_platform_channel WHERE platform_id = ? ORDER BY device_id, channel_id`),
    share: db.prepare(
      `INSERT INTO upstream_platform_channel (${SHARE_COLUMNS}) VALUES (?, ?, ?, ?, ?) ` +
        'ON CONFLICT (platform_id, device_id, channel_id) DO UPDATE SET catalog_group_id = excluded.catalog_group_id, parent_id = excluded.parent_id',
    ),
    unshareAll: db.prepare('DELETE FROM upstream_platform_channel WHERE platform_id = ?'),
    unshare: db.prepare('DELETE FROM upstream_platform_channel WHERE platform_id = ? AND device_id = ? AND channel_id = ?'),
    sharesOf: db.prepare<[string, string], ShareRecord>(
      `SELECT ${SHARE_COLUMNS} FROM upstream_platform_channel WHERE device_id = ? AND channel_id = ? ORDER BY platform_id`,
    ),
    // not `LIMIT ?`: see limit-statements.sqlite.ts (run for every device coming online)
    sharesOfDevice: limitStatements<[string], ShareRecord>(
      db,
      (limit) => `SELECT ${SHARE_COLUMNS} FROM upstream_platform_channel WHERE device_id = ? ORDER BY channel_id, platform_id LIMIT ${limit}`,
    ),
    anyShare: db.prepare<[], { one: number }>('SELECT 1 AS one FROM upstream_platform_channel LIMIT 1'),
    forgetDevice: db.prepare('DELETE FROM upstream_platform_channel WHERE device_id = ?'),
    forgetChannel: db.prepare('DELETE FROM upstream_platform_channel WHERE device_id = ? AND channel_id = ?'),
  };

  const requirePlatform = (serverId: string): void => {
    if (s.exists.get(serverId) === undefined) throw new CascadeError('CASCADE_ERR_PLATFORM_NOT_FOUND', `no upstream platform ${serverId}`);
  };
  const insertShares = (serverId: string, channels: readonly SharedChannel[]): void => {
    for (const c of channels) s.share.run(serverId, c.deviceId, c.channelId, c.catalogGroupId, c.parentId);
  };
  const share = db.transaction((serverId: string, channels: readonly SharedChannel[]) => {
    requirePlatform(serverId);
    insertShares(serverId, channels);
  });
  const replace = db.transaction((serverId: string, channels: readonly SharedChannel[]) => {
    requirePlatform(serverId);
    s.unshareAll.run(serverId);
    insertShares(serverId, channels);
  });
  const unshare = db.transaction((serverId: string, channels: readonly { deviceId: string; channelId: string }[]) => {
    let removed = 0;
    for (const c of channels) removed += s.unshare.run(serverId, c.deviceId, c.channelId).changes;
    return removed;
  });

  /**
   * Whether the store holds no share at all, as last read; null: read it again. Every device coming online
   * asks for its shares (cascade-triggers.ts), and a platform sharing nothing upstream — every device of a
   * registration storm then — answered each with an empty indexed query (issue 11: ~4k instructions a
   * registration). Only this repository writes the table (the embedded store is one process's, locked
   * EXCLUSIVE), and each of its writes forgets the answer.
   */
  let noShares: boolean | null = null;
  const write = <T>(what: string, fn: () => T): Promise<T> => {
    noShares = null;
    return run(what, fn);
  };

  let closed = false;
  const run = async <T>(what: string, fn: () => T): Promise<T> => {
    if (closed) throw new CascadeError('CASCADE_ERR_CLOSED', 'platform repository is closed');
    try {
      return fn();
    } catch (err) {
      if (err instanceof CascadeError) throw err;
      throw new CascadeError('CASCADE_ERR_STORE_QUERY', `${what}: the embedded store rejected the statement`, { cause: err });
    }
  };

  return {
    listEnabled: () => run('listEnabled', () => s.enabled.all().map(platformFromRow)),
    listAll: () => run('listAll', () => s.all.all().map(platformFromRow)),
    get: (serverId) =>
      run('get', () => {
        const row = s.one.get(serverId);
        return row === undefined ? null : platformFromRow(row);
      }),
    upsert: (platform) =>
      write('upsert', () => {
        const p = validateUpstreamPlatform(platform);
        s.upsert.run(...platformRowValues(p));
      }),
    remove: (serverId) => write('remove', () => s.remove.run(serverId).changes > 0),
    listChannels: (serverId) => run('listChannels', () => s.shares.all(serverId).map(sharedChannelFromRow)),
    shareChannels: (serverId, channels) =>
      write('shareChannels', () => {
        channels.forEach(validateSharedChannel); // all or nothing
        share(serverId, channels);
      }),
    replaceChannels: (serverId, channels) =>
      write('replaceChannels', () => {
        channels.forEach(validateSharedChannel);
        replace(serverId, channels);
      }),
    unshareChannels: (serverId, channels) => write('unshareChannels', () => unshare(serverId, channels)),
    sharesOf: (deviceId, channelId) =>
      run('sharesOf', () => s.sharesOf.all(deviceId, channelId).map((r): ChannelShare => ({ ...sharedChannelFromRow(r), platformId: r.platform_id }))),
    sharesOfDevice: (deviceId, limit) =>
      run('sharesOfDevice', () => {
        noShares ??= s.anyShare.get() === undefined;
        if (noShares) return [];
        return s.sharesOfDevice(limit).all(deviceId).map((r): ChannelShare => ({ ...sharedChannelFromRow(r), platformId: r.platform_id }));
      }),
    forgetChannels: (deviceId, channelId) =>
      write('forgetChannels', () => (channelId === undefined ? s.forgetDevice.run(deviceId) : s.forgetChannel.run(deviceId, channelId)).changes),
    async close() {
      closed = true;
    },
  } satisfies PlatformRepository;
}
