/**
 * An upstream (parent) GB28181 platform this platform registers to as a lower platform (SPEC CASC-2),
 * and the channels it is given. Configuration only: registration state is runtime state of the
 * cascade leader (UpstreamRegistration), never stored.
 */
export type UpstreamTransport = 'udp' | 'tcp';
/** Charset of the MANSCDP bodies sent to this platform (GB/T 28181 examples use GB2312). */
export type UpstreamCharset = 'GB2312' | 'UTF-8';

/** Where shared channels hang in the catalog the upstream sees. */
export interface CatalogGroupOptions {
  /**
   * 20-digit id of a business group (type 215) or virtual organisation (216) sent as a catalog item
   * above the shared channels; null: channels hang directly under our platform id (`localId`).
   */
  readonly groupId: string | null;
  /** Name of that item; null: the id. */
  readonly groupName: string | null;
}

export interface UpstreamPlatform {
  /** The upstream's 20-digit SIP id (GB/T 28181 Annex D); key of the record, unique across tenants. */
  readonly serverId: string;
  /**
   * The tenant the platform belongs to (SPEC SEC-2): only that tenant's operators see and change it,
   * and it receives only that tenant's channels. 1-12 of [A-Za-z0-9_-]; default `000000`.
   */
  readonly tenantId: string;
  /** Label for operators. */
  readonly name: string;
  /** The upstream's SIP domain (realm), normally the first 10 digits of its id. */
  readonly domain: string;
  /** Address REGISTER and MESSAGEs go to. */
  readonly host: string;
  readonly port: number;
  readonly transport: UpstreamTransport;
  /** Digest password; empty: no credentials offered (a 401 then fails the registration). */
  readonly password: string;
  /** Expires asked for in REGISTER, seconds. */
  readonly registerExpiresS: number;
  /** Keepalive MESSAGE period, seconds. */
  readonly keepaliveIntervalS: number;
  /** Consecutive failed keepalives after which the platform counts as offline and is re-registered. */
  readonly maxKeepaliveFailures: number;
  /** Disabled platforms are kept but never registered to. */
  readonly enabled: boolean;
  readonly charset: UpstreamCharset;
  /** The 20-digit id we present to this platform (our server id; digest username). */
  readonly localId: string;
  readonly catalog: CatalogGroupOptions;
}

/** The key of one channel of one device (gb_channel's primary key). */
export interface ChannelKey {
  readonly deviceId: string;
  readonly channelId: string;
}

/** One channel an upstream platform receives, with its placement in that platform's catalog. */
export interface SharedChannel extends ChannelKey {
  /** BusinessGroupID given to the channel at this platform; null: the platform's group when it is a 215. */
  readonly catalogGroupId: string | null;
  /** ParentID given to the channel at this platform; null: the platform's group, else our local id. */
  readonly parentId: string | null;
}

/** A SharedChannel seen from the channel: which platform receives it. */
export interface ChannelShare extends SharedChannel {
  readonly platformId: string;
}

/** The default tenant (a device that registers without being provisioned joins it, SPEC §12). */
export const DEFAULT_TENANT_ID = '000000';

export const UPSTREAM_PLATFORM_DEFAULTS = Object.freeze({
  tenantId: DEFAULT_TENANT_ID,
  name: '',
  port: 5060,
  transport: 'udp',
  password: '',
  registerExpiresS: 3600,
  keepaliveIntervalS: 60,
  maxKeepaliveFailures: 3,
  enabled: true,
  charset: 'GB2312',
} as const);

/** The SIP domain of a 20-digit id: its first 10 digits (centre + industry code, Annex D). */
export function domainOf(id: string): string {
  return id.slice(0, 10);
}
