// The `upstream_platform` and `upstream_platform_channel` rows as both stores hold them: MySQL in the
// cluster (this package) and SQLite in the standalone instance (services/signaling). One mapping, so a
// column added to one store cannot be forgotten in the other.
import type { SharedChannel, UpstreamPlatform } from './platform.ts';
import { freezePlatform } from './platform.validate.ts';

/** Column list of `upstream_platform`, in the order of `platformRowValues`. */
export const PLATFORM_COLUMNS =
  'server_id, tenant_id, name, domain, host, port, transport, password, register_expires_s, keepalive_interval_s, ' +
  'keepalive_max_failures, enabled, charset, local_id, catalog_group_id, catalog_group_name';

export interface PlatformRow {
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

export interface SharedChannelRow {
  platform_id: string;
  device_id: string;
  channel_id: string;
  catalog_group_id: string | null;
  parent_id: string | null;
}

export function platformFromRow(r: PlatformRow): UpstreamPlatform {
  return freezePlatform({
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
    catalog: { groupId: r.catalog_group_id, groupName: r.catalog_group_name },
  });
}

/** A validated platform as the values of PLATFORM_COLUMNS, in that order. */
export function platformRowValues(p: UpstreamPlatform): Array<string | number | null> {
  return [
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
  ];
}

export function sharedChannelFromRow(r: SharedChannelRow): SharedChannel {
  return { deviceId: r.device_id, channelId: r.channel_id, catalogGroupId: r.catalog_group_id, parentId: r.parent_id };
}
