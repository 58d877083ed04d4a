/**
 * Checks an upstream platform record before it is stored or used, reporting every problem at once
 * (STYLE §1), so a console form shows them together and a typo fails at save time rather than as a
 * registration that never succeeds.
 */
import { isIP } from 'node:net';
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
const CHANNEL_ID_RE = /^[\w.-]{1,64}$/;
/** Tenant ids as the signaling service's tokens carry them (gb_device.tenant_id VARCHAR(12)). */
export const TENANT_ID_RE = /^[A-Za-z0-9_-]{1,12}$/;
/** One DNS label (RFC 1123 §2.1: letters, digits, hyphens; not starting or ending with a hyphen). */
const DNS_LABEL_RE = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
/** Free text shown to operators: no control characters (they would reach logs and consoles as is). */
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/**
 * The address REGISTER and MESSAGEs go to: a literal IPv4 / IPv6 address or a DNS name (RFC 1123
 * labels, at most 253 characters, not all-numeric so a mistyped IPv4 address is not taken for a
 * name). No URL, no port (that is `port`), no spaces, no brackets.
 */
export function isPlatformHost(host: unknown): boolean {
  if (typeof host !== 'string' || host.length === 0 || host.length > 253 || host.includes('%')) return false; // no IPv6 zone ids
  if (isIP(host) !== 0) return true;
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  const labels = name.split('.');
  if (!labels.every((l) => DNS_LABEL_RE.test(l))) return false;
  return !/^[\d.]+$/.test(name); // 999.1.2.3, 10.1.2: not an address, and not a name either
}

const isText = (v: unknown, max: number): boolean => typeof v === 'string' && v.length <= max && !CONTROL_RE.test(v);
const isIntIn = (v: unknown, min: number, max: number): boolean => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

type Problem = readonly [field: string, problem: string];

export function validateUpstreamPlatform(p: UpstreamPlatform): UpstreamPlatform {
  const problems: Problem[] = [];
  const check = (ok: boolean, field: string, problem: string): void => {
    if (!ok) problems.push([field, problem]);
  };
  check(typeof p.serverId === 'string' && isGbId(p.serverId), 'serverId', 'must be a 20-digit GB28181 id');
  check(typeof p.tenantId === 'string' && TENANT_ID_RE.test(p.tenantId), 'tenantId', 'must be 1-12 characters of [A-Za-z0-9_-]');
  check(typeof p.localId === 'string' && isGbId(p.localId), 'localId', 'must be a 20-digit GB28181 id');
  check(!(p.serverId === p.localId && typeof p.serverId === 'string' && isGbId(p.serverId)), 'localId', 'must differ from serverId');
  check(typeof p.domain === 'string' && DOMAIN_RE.test(p.domain), 'domain', 'must be 1-64 characters of [A-Za-z0-9.-]');
  check(isPlatformHost(p.host), 'host', 'must be a literal IP address or a DNS name (no scheme, port, path or spaces; at most 253 characters)');
  check(isIntIn(p.port, 1, 65_535), 'port', 'must be an integer 1..65535');
  check(p.transport === 'udp' || p.transport === 'tcp', 'transport', 'must be udp or tcp');
  check(isText(p.password, 255), 'password', 'must be a string of at most 255 characters without control characters');
  check(isText(p.name, 255), 'name', 'must be a string of at most 255 characters without control characters');
  for (const key of ['registerExpiresS', 'keepaliveIntervalS', 'maxKeepaliveFailures'] as const) {
    const { min, max } = PLATFORM_LIMITS[key];
    check(isIntIn(p[key], min, max), key, `must be an integer ${min}..${max}`);
  }
  check(p.charset === 'GB2312' || p.charset === 'UTF-8', 'charset', 'must be GB2312 or UTF-8');
  check(typeof p.enabled === 'boolean', 'enabled', 'must be a boolean');
  problems.push(...catalogProblems(p.catalog));
  if (problems.length > 0) {
    const id = typeof p.serverId === 'string' ? p.serverId.slice(0, 40) : typeof p.serverId;
    throw new CascadeError('CASCADE_ERR_INVALID_PLATFORM', `upstream platform ${JSON.stringify(id)}: ${problems.map(([f, m]) => `${f} ${m}`).join('; ')}`, {
      fields: [...new Set(problems.map(([f]) => f))],
    });
  }
  return p;
}

function catalogProblems(c: CatalogGroupOptions | undefined): Problem[] {
  if (c === undefined || c === null || typeof c !== 'object') return [['catalog', 'options are required']];
  const out: Problem[] = [];
  if (c.groupId !== null && !(typeof c.groupId === 'string' && isGbId(c.groupId))) out.push(['catalog.groupId', 'must be null or a 20-digit id']);
  if (c.groupName !== null && !isText(c.groupName, 255)) out.push(['catalog.groupName', 'must be null or at most 255 characters without control characters']);
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
  const problems: Problem[] = [];
  const id = (v: unknown, max: number): boolean => typeof v === 'string' && v.length <= max && CHANNEL_ID_RE.test(v);
  if (!id(c.deviceId, 20)) problems.push(['deviceId', 'must be 1-20 characters of [A-Za-z0-9_.-]']);
  if (!id(c.channelId, 64)) problems.push(['channelId', 'must be 1-64 characters of [A-Za-z0-9_.-]']);
  if (c.catalogGroupId !== null && !(typeof c.catalogGroupId === 'string' && isGbId(c.catalogGroupId))) problems.push(['catalogGroupId', 'must be null or a 20-digit id']);
  if (c.parentId !== null && !id(c.parentId, 64)) problems.push(['parentId', 'must be null or 1-64 characters of [A-Za-z0-9_.-]']);
  if (problems.length > 0) {
    const key = `${String(c.deviceId).slice(0, 20)}/${String(c.channelId).slice(0, 64)}`;
    throw new CascadeError('CASCADE_ERR_INVALID_CHANNEL', `shared channel ${JSON.stringify(key)}: ${problems.map(([f, m]) => `${f} ${m}`).join('; ')}`, {
      fields: problems.map(([f]) => f),
    });
  }
  return c;
}
