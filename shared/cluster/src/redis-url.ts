/**
 * REDIS_URL forms accepted (SPEC §12):
 *   redis://[user:pass@]host[:port][/db]        one server
 *   rediss://…                                  one server over TLS
 *   redis+cluster://[user:pass@]h1:p1,h2:p2…    Redis Cluster seed nodes
 *   rediss+cluster://…                          Redis Cluster over TLS
 * Pure parsing; the WHATWG URL parser cannot read a comma-separated host list, so this is by hand.
 */
import { InvalidStoreUrlError } from './errors.ts';

export interface RedisEndpoint {
  host: string;
  port: number;
}

interface Common {
  username?: string;
  password?: string;
  tls: boolean;
}

export type RedisTarget =
  | ({ mode: 'single'; endpoint: RedisEndpoint; db: number } & Common)
  | ({ mode: 'cluster'; nodes: RedisEndpoint[] } & Common);

const DEFAULT_PORT = 6379;
const SCHEMES: Record<string, { cluster: boolean; tls: boolean }> = {
  'redis:': { cluster: false, tls: false },
  'rediss:': { cluster: false, tls: true },
  'redis+cluster:': { cluster: true, tls: false },
  'rediss+cluster:': { cluster: true, tls: true },
};

export function parseRedisUrl(url: string): RedisTarget {
  const m = /^([a-z+]+:)\/\/(?:([^@/]*)@)?([^/?#]*)(?:\/([^?#]*))?/i.exec(url.trim());
  const scheme = m?.[1]?.toLowerCase();
  const kind = scheme !== undefined ? SCHEMES[scheme] : undefined;
  if (m === null || kind === undefined) {
    throw new InvalidStoreUrlError(`Redis URL must start with redis://, rediss://, redis+cluster:// or rediss+cluster://`);
  }
  const common: Common = { tls: kind.tls, ...credentials(m[2]) };
  const hosts = (m[3] ?? '').split(',').filter((h) => h !== '').map(endpoint);
  if (hosts.length === 0) throw new InvalidStoreUrlError('Redis URL names no host');
  if (kind.cluster) return { mode: 'cluster', nodes: hosts, ...common };
  if (hosts.length > 1) throw new InvalidStoreUrlError('several hosts need the redis+cluster:// scheme');
  const dbText = m[4] ?? '';
  const db = dbText === '' ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0) throw new InvalidStoreUrlError(`bad Redis database number "${dbText}"`);
  return { mode: 'single', endpoint: hosts[0] as RedisEndpoint, db, ...common };
}

function credentials(userinfo: string | undefined): { username?: string; password?: string } {
  if (userinfo === undefined || userinfo === '') return {};
  const i = userinfo.indexOf(':');
  const user = decodeURIComponent(i < 0 ? userinfo : userinfo.slice(0, i));
  const pass = i < 0 ? undefined : decodeURIComponent(userinfo.slice(i + 1));
  return { ...(user !== '' ? { username: user } : {}), ...(pass !== undefined ? { password: pass } : {}) };
}

function endpoint(text: string): RedisEndpoint {
  // [v6]:port, host:port, host
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const plain = /^([^:]+)(?::(\d+))?$/.exec(text);
  const host = v6?.[1] ?? plain?.[1];
  const portText = v6 !== null ? v6[2] : plain?.[2];
  if (host === undefined) throw new InvalidStoreUrlError(`bad Redis host "${text}"`);
  const port = portText === undefined ? DEFAULT_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidStoreUrlError(`bad Redis port in "${text}"`);
  return { host, port };
}
