/**
 * Checks an upstream platform record before it is stored or used, reporting every problem at once
 * (STYLE §1), so a console form shows them together and a typo fails at save time rather than as a
 * registration that never succeeds.
 */
import { isGbId } from '@vms/gb28181';
import { CascadeError } from '../errors.ts';
import {
  UPSTREAM_PLATFORM_DEFAULTS,
  domainOf,
  type CatalogGroupOptions,
  type SharedChannel,
  type UpstreamPlatform,
} from './platform.ts';

/** Bounds, in the units of the fields. */
export const PLATFORM_LIMITS = Object.freeze({
  registerExpiresS: { min: 10, max: 86_400 },
  keepaliveIntervalS: { min: 1, max: 3600 },
  maxKeepaliveFailures: { min: 1, max: 100 },
});

const DOMAIN_RE = /^[A-Za-z0-9.-]{1,64}$/;
const HOST_RE = /^[^\s;@<>"]{1,255}$/;
const CHANNEL_ID_RE = /^[\w.-]{1,64}$/;

export function validateUpstreamPlatform(p: UpstreamPlatform): UpstreamPlatform {
  const problems: string[] = [];
  if (!isGbId(p.serverId)) problems.push('serverId must be a 20-digit GB28181 id');
  if (!isGbId(p.localId)) problems.push('localId must be a 20-digit GB28181 id');
  if (p.serverId === p.localId && isGbId(p.serverId)) problems.push('localId must differ from serverId');
  if (!DOMAIN_RE.test(p.domain)) problems.push('domain must be 1-64 characters of [A-Za-z0-9.-]');
  if (!HOST_RE.test(p.host)) problems.push('host must be a host name or IP address');
  if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65_535) problems.push('port must be 1..65535');
  if (p.transport !== 'udp' && p.transport !== 'tcp') problems.push('transport must be udp or tcp');
  if (typeof p.password !== 'string' || p.password.length > 255) problems.push('password must be a string of at most 255 characters');
  if (typeof p.name !== 'string' || p.name.length > 255) problems.push('name must be a string of at most 255 characters');
  for (const key of ['registerExpiresS', 'keepaliveIntervalS', 'maxKeepaliveFailures'] as const) {
    const { min, max } = PLATFORM_LIMITS[key];
    if (!Number.isInteger(p[key]) || p[key] < min || p[key] > max) problems.push(`${key} must be an integer ${min}..${max}`);
  }
  if (p.charset !== 'GB2312' && p.charset !== 'UTF-8') problems.push('charset must be GB2312 or UTF-8');
  if (typeof p.enabled !== 'boolean') problems.push('enabled must be a boolean');
  problems.push(...catalogProblems(p.catalog));
  if (problems.length > 0) {
    throw new CascadeError('CASCADE_ERR_INVALID_PLATFORM', `upstream platform ${JSON.stringify(p.serverId)}: ${problems.join('; ')}`);
  }
  return p;
}

function catalogProblems(c: CatalogGroupOptions | undefined): string[] {
  if (c === undefined || c === null) return ['catalog options are required'];
  const out: string[] = [];
  if (c.groupId !== null && !isGbId(c.groupId)) out.push('catalog.groupId must be null or a 20-digit id');
  if (c.groupName !== null && (typeof c.groupName !== 'string' || c.groupName.length > 255)) out.push('catalog.groupName must be null or at most 255 characters');
  return out;
}

export type UpstreamPlatformInput = Pick<UpstreamPlatform, 'serverId' | 'host' | 'localId'> &
  Partial<Omit<UpstreamPlatform, 'serverId' | 'host' | 'localId' | 'catalog'>> & { catalog?: Partial<CatalogGroupOptions> };

/** A complete, validated, frozen record from the required fields plus documented defaults. */
export function upstreamPlatform(input: UpstreamPlatformInput): UpstreamPlatform {
  const p: UpstreamPlatform = {
    ...UPSTREAM_PLATFORM_DEFAULTS,
    domain: domainOf(input.serverId),
    ...input,
    catalog: { groupId: input.catalog?.groupId ?? null, groupName: input.catalog?.groupName ?? null },
  };
  return freezePlatform(validateUpstreamPlatform(p));
}

export function freezePlatform(p: UpstreamPlatform): UpstreamPlatform {
  return Object.freeze({ ...p, catalog: Object.freeze({ ...p.catalog }) });
}

export function validateSharedChannel(c: SharedChannel): SharedChannel {
  const problems: string[] = [];
  if (!CHANNEL_ID_RE.test(c.deviceId) || c.deviceId.length > 20) problems.push('deviceId must be 1-20 characters of [A-Za-z0-9_.-]');
  if (!CHANNEL_ID_RE.test(c.channelId)) problems.push('channelId must be 1-64 characters of [A-Za-z0-9_.-]');
  if (c.catalogGroupId !== null && !isGbId(c.catalogGroupId)) problems.push('catalogGroupId must be null or a 20-digit id');
  if (c.parentId !== null && !CHANNEL_ID_RE.test(c.parentId)) problems.push('parentId must be null or 1-64 characters of [A-Za-z0-9_.-]');
  if (problems.length > 0) {
    throw new CascadeError('CASCADE_ERR_INVALID_CHANNEL', `shared channel ${JSON.stringify(`${c.deviceId}/${c.channelId}`)}: ${problems.join('; ')}`);
  }
  return c;
}
