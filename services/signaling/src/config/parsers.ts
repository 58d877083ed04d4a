// Pure value parsers for configuration strings. Each returns the typed value or a problem text that
// never repeats the raw value (the caller decides whether the value may be echoed).
import { isIP } from 'node:net';
import { InvalidStoreUrlError, parseMysqlUrl as parseClusterMysqlUrl, parseRedisUrl as parseClusterRedisUrl } from '@vms/cluster';
import { compilePlacementRules, type PlacementRule } from '@vms/routing';
import type { DigestQop, DigestUsernameRule, LogLevel, MysqlSettings, RedisSettings } from './config.types.ts';
import { MIN_SIGNING_KEY_BYTES } from './signing-key.ts';

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = <T>(problem: string): Parsed<T> => ({ ok: false, problem });

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function parseHost(raw: string): Parsed<string> {
  if (IPV4.test(raw) || HOSTNAME.test(raw)) return ok(raw);
  if (raw.includes(':') && /^[0-9A-Fa-f:.]+$/.test(raw)) return ok(raw); // IPv6 literal
  return bad('must be an IPv4 address, IPv6 address or host name');
}

export function parsePort(raw: string): Parsed<number> {
  if (!/^\d{1,5}$/.test(raw)) return bad('must be an integer 0-65535');
  const n = Number(raw);
  return n <= 65535 ? ok(n) : bad('must be an integer 0-65535');
}

export function parseGbId(raw: string): Parsed<string> {
  return /^\d{20}$/.test(raw) ? ok(raw) : bad('must be a 20-digit GB28181 code');
}

/** A file-system path: non-empty, no NUL byte, at most 4096 characters (PATH_MAX). */
export function parsePath(raw: string): Parsed<string> {
  if (raw.length === 0 || raw.length > 4096 || raw.includes('\0')) return bad('must be a directory path (1-4096 characters, no NUL)');
  return ok(raw);
}

export function parseNonEmpty(raw: string): Parsed<string> {
  return raw.length > 0 ? ok(raw) : bad('must not be empty');
}

/** Node codes travel in Redis values, headers and SQL rows: keep them to a safe alphabet. */
export function parseNodeCode(raw: string): Parsed<string> {
  return /^[A-Za-z0-9._:-]{1,64}$/.test(raw) ? ok(raw) : bad('must be 1-64 characters of A-Z a-z 0-9 . _ : -');
}

export function parseHttpUrl(raw: string): Parsed<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return bad('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return bad('must be an absolute http:// or https:// URL');
  if (url.search !== '' || url.hash !== '') return bad('must not have a query or fragment');
  return ok(raw.replace(/\/+$/, ''));
}

const TRUE = new Set(['true', 'yes', 'on', '1']);
const FALSE = new Set(['false', 'no', 'off', '0']);

export function parseBoolean(raw: string): Parsed<boolean> {
  const v = raw.toLowerCase();
  if (TRUE.has(v)) return ok(true);
  if (FALSE.has(v)) return ok(false);
  return bad('must be true or false');
}

/** An IANA time zone name the runtime knows (Intl refuses an unknown one with a RangeError). */
export function parseTimeZone(raw: string): Parsed<string> {
  if (raw.length === 0 || raw.length > 64) return bad('must be an IANA time zone name, e.g. Asia/Shanghai');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: raw });
  } catch {
    return bad('is not an IANA time zone known to this runtime, e.g. Asia/Shanghai');
  }
  return ok(raw);
}

/** A positive duration in seconds; fractions allowed (tests use sub-second windows). */
export function parseSeconds(raw: string): Parsed<number> {
  if (!/^\d+(\.\d+)?$/.test(raw)) return bad('must be a positive number of seconds');
  const n = Number(raw);
  return n > 0 && n <= 86_400 ? ok(n) : bad('must be a positive number of seconds, at most 86400');
}

export function parseCount(raw: string): Parsed<number> {
  if (!/^\d{1,4}$/.test(raw)) return bad('must be an integer 1-1000');
  const n = Number(raw);
  return n >= 1 && n <= 1000 ? ok(n) : bad('must be an integer 1-1000');
}

/** A share of the ownership TTL after which a keepalive renews the claim: a decimal 0-0.5 (e.g. 0.4). */
export function parseTtlShare(raw: string): Parsed<number> {
  if (!/^(0|0?\.\d{1,3})$/.test(raw)) return bad('must be a decimal share of the ownership TTL, 0-0.5 (e.g. 0.4)');
  const n = Number(raw);
  return n >= 0 && n <= 0.5 ? ok(n) : bad('must be a decimal share of the ownership TTL, 0-0.5 (e.g. 0.4)');
}

/** A share as a whole percentage, 1-100. */
export function parsePercent(raw: string): Parsed<number> {
  if (!/^\d{1,3}$/.test(raw)) return bad('must be an integer percentage 1-100');
  const n = Number(raw);
  return n >= 1 && n <= 100 ? ok(n) : bad('must be an integer percentage 1-100');
}

/** A bound (SPEC SEC-3): a positive integer up to 10^9 (counts, bytes, rates). */
export function parseLimit(raw: string): Parsed<number> {
  if (!/^\d{1,10}$/.test(raw)) return bad('must be a positive integer');
  const n = Number(raw);
  return n >= 1 && n <= 1_000_000_000 ? ok(n) : bad('must be a positive integer, at most 1000000000');
}

/** SPEC §12 Redis URL forms, parsed by @vms/cluster (the client that will use them). */
export function parseRedisUrl(raw: string): Parsed<RedisSettings> {
  try {
    return ok({ url: raw, mode: parseClusterRedisUrl(raw).mode });
  } catch (err) {
    if (!(err instanceof InvalidStoreUrlError)) throw err;
    return bad('must be redis://[user:pass@]host:port[/db], rediss://… or redis+cluster://h1:p1,h2:p2');
  }
}

/** `mysql://user:pass@host:port/db`, parsed by @vms/cluster (which builds the pool). */
export function parseMysqlUrl(raw: string): Parsed<MysqlSettings> {
  try {
    return ok({ url: raw, database: parseClusterMysqlUrl(raw).database ?? '' });
  } catch (err) {
    if (!(err instanceof InvalidStoreUrlError)) throw err;
    return bad('must be mysql://user:pass@host:port/database');
  }
}

export function parseSigningKey(raw: string): Parsed<string> {
  return Buffer.byteLength(raw, 'utf8') >= MIN_SIGNING_KEY_BYTES
    ? ok(raw)
    : bad(`must be at least ${MIN_SIGNING_KEY_BYTES} bytes (RFC 7518 §3.2)`);
}

const LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function parseLogLevel(raw: string): Parsed<LogLevel> {
  const v = raw.toLowerCase();
  return (LEVELS as readonly string[]).includes(v) ? ok(v as LogLevel) : bad(`must be one of ${LEVELS.join(', ')}`);
}

/** A REGISTER lifetime bound, whole seconds (Expires is an integer, RFC 3261 §20.19), 1 s to one week. */
export function parseExpiresSeconds(raw: string): Parsed<number> {
  if (!/^\d{1,6}$/.test(raw)) return bad('must be an integer number of seconds, 1-604800');
  const n = Number(raw);
  return n >= 1 && n <= 604_800 ? ok(n) : bad('must be an integer number of seconds, 1-604800');
}

export function parseDigestQop(raw: string): Parsed<DigestQop> {
  const v = raw.toLowerCase();
  return v === 'auth' || v === 'none' ? ok(v) : bad('must be auth or none');
}

export function parseDigestUsername(raw: string): Parsed<DigestUsernameRule> {
  const v = raw.toLowerCase();
  return v === 'device-id' || v === 'any' ? ok(v) : bad('must be device-id or any');
}

/** Comma-separated device ids or id prefixes (1-20 digits each), e.g. `3402000000132,34020000001320000009`. */
export function parseGbIdPrefixes(raw: string): Parsed<readonly string[]> {
  const list = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (list.length === 0 || list.length > 1000 || list.some((p) => !/^\d{1,20}$/.test(p))) return bad('must be a comma-separated list of 1-1000 device ids or prefixes of 1-20 digits');
  return ok(list);
}

/** Comma-separated device ids or digit prefixes (1-20 digits each), at most 10,000. */
export function parsePrefixList(raw: string): Parsed<readonly string[]> {
  const items = raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (items.length > 10_000) return bad('must list at most 10000 prefixes');
  for (const item of items) if (!/^\d{1,20}$/.test(item)) return bad('must be comma-separated device ids or digit prefixes (1-20 digits)');
  return ok(items);
}

/**
 * Comma-separated IPv4/IPv6 addresses or CIDR blocks (a Kubernetes pod network: edge pods change address);
 * no names, as they are compared with a packet's source address.
 */
export function parseAddressList(raw: string): Parsed<readonly string[]> {
  const items = raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (items.length > 1000) return bad('must list at most 1000 addresses');
  for (const item of items) {
    const [ip = '', bits, ...rest] = item.split('/');
    const family = isIP(ip);
    const max = family === 6 ? 128 : 32;
    const okBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (family === 0 || !okBits || rest.length > 0) return bad('must be comma-separated IP addresses or CIDR blocks (10.0.0.0/8)');
  }
  return ok(items);
}

/** `prefix=group,prefix=group`: prefixes 0-20 digits, each once; groups as node codes. */
export function parsePlacementRules(raw: string): Parsed<readonly PlacementRule[]> {
  const rules: PlacementRule[] = [];
  for (const part of raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0)) {
    const m = /^(\d{0,20})=([A-Za-z0-9._:-]{1,64})$/.exec(part);
    if (m === null) return bad('must be prefix=group pairs, comma-separated (prefix: 0-20 digits; group: 1-64 of A-Z a-z 0-9 . _ : -)');
    rules.push({ prefix: m[1]!, group: m[2]! });
  }
  try {
    compilePlacementRules(rules);
  } catch (err) {
    return bad((err as Error).message);
  }
  return ok(rules);
}
