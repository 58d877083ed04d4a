// PlatformRepository (SPEC CASC-2; a tenant per platform, SEC-2) in the embedded store of a single
// instance (storage/embedded-store.sqlite.ts), the counterpart of @vms/cascade's MySQL adapter. Statements prepared
// once; a channel list is written in one transaction (all or nothing, as the port requires). Driver
// errors become CASCADE_ERR_STORE_QUERY (a local file has no "unavailable" state to wait out).
import {
  CascadeError,
  validateSharedChannel,
  validateUpstreamPlatform,
  type ChannelShare,
  type PlatformRepository,
  type SharedChannel,
  type UpstreamPlatform,
} from '@vms/cascade';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';

const COLUMNS =
  'server_id, tenant_id, name, domain, host, port, transport, password, register_expires_s, keepalive_interval_s, ' +
  'keepalive_max_failures, enabled, charset, local_id, catalog_group_id, catalog_group_name';

const SHARE_COLUMNS = 'platform_id, device_id, channel_id, catalog_group_id, parent_id';

interface PlatformRecord {
  server_id: string;
  tenant_id: string;
  name: string;
  domain: string;
  host: string;
  port: number;
  transport: string;
  password: string;
  register_expires_s: number;
  keepalive_interval_s: number;
  keepalive_max_failures: number;
  enabled: number;
  charset: 'GB2312' | 'UTF-8';
  local_id: string;
  catalog_group_id: string | null;
  catalog_group_name: string | null;
}

interface ShareRecord {
  platform_id: string;
  device_id: string;
  channel_id: string;
  catalog_group_id: string | null;
  parent_id: string | null;
}

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
    listEnabled: () => run('listEnabled', () => s.enabled.all().map(toPlatform)),
    listAll: () => run('listAll', () => s.all.all().map(toPlatform)),
    get: (serverId) =>
      run('get', () => {
        const row = s.one.get(serverId);
        return row === undefined ? null : toPlatform(row);
      }),
    upsert: (platform) =>
      run('upsert', () => {
        const p = validateUpstreamPlatform(platform);
        s.upsert.run(
          p.serverId,
          p.tenantId,
          p.name,
          p.domain,
          p.host,
          p.port,
          p.transport.toUpperCase(),
          p.password,
          p.registerExpiresS,
          p.keepaliveIntervalS,
          p.maxKeepaliveFailures,
          p.enabled ? 1 : 0,
          p.charset,
          p.localId,
          p.catalog.groupId,
          p.catalog.groupName,
        );
      }),
    remove: (serverId) => run('remove', () => s.remove.run(serverId).changes > 0),
    listChannels: (serverId) => run('listChannels', () => s.shares.all(serverId).map(toShared)),
    shareChannels: (serverId, channels) =>
      run('shareChannels', () => {
        channels.forEach(validateSharedChannel); // all or nothing
        share(serverId, channels);
      }),
    replaceChannels: (serverId, channels) =>
      run('replaceChannels', () => {
        channels.forEach(validateSharedChannel);
        replace(serverId, channels);
      }),
    unshareChannels: (serverId, channels) => run('unshareChannels', () => unshare(serverId, channels)),
    sharesOf: (deviceId, channelId) =>
      run('sharesOf', () => s.sharesOf.all(deviceId, channelId).map((r): ChannelShare => ({ ...toShared(r), platformId: r.platform_id }))),
    forgetChannels: (deviceId, channelId) =>
      run('forgetChannels', () => (channelId === undefined ? s.forgetDevice.run(deviceId) : s.forgetChannel.run(deviceId, channelId)).changes),
    async close() {
      closed = true;
    },
  } satisfies PlatformRepository;
}

function toPlatform(r: PlatformRecord): UpstreamPlatform {
  return Object.freeze({
    serverId: r.server_id,
    tenantId: r.tenant_id,
    name: r.name,
    domain: r.domain,
    host: r.host,
    port: r.port,
    transport: r.transport === 'TCP' ? 'tcp' : 'udp',
    password: r.password,
    registerExpiresS: r.register_expires_s,
    keepaliveIntervalS: r.keepalive_interval_s,
    maxKeepaliveFailures: r.keepalive_max_failures,
    enabled: r.enabled === 1,
    charset: r.charset,
    localId: r.local_id,
    catalog: Object.freeze({ groupId: r.catalog_group_id, groupName: r.catalog_group_name }),
  });
}

function toShared(r: ShareRecord): SharedChannel {
  return { deviceId: r.device_id, channelId: r.channel_id, catalogGroupId: r.catalog_group_id, parentId: r.parent_id };
}
