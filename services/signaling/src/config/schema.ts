// Every setting of a signaling instance, declared once: key path (as nested YAML), value type,
// whether it is secret (never echoed in errors or logs), default and unit. SPEC §2 and §12.
// The environment variable of a key is derived, never spelled by hand: see `envNameOf`.

export type SettingType =
  | 'host'
  | 'port'
  | 'gbId'
  | 'string'
  | 'nodeCode'
  | 'httpUrl'
  | 'boolean'
  | 'seconds'
  | 'count'
  | 'redisUrl'
  | 'mysqlUrl'
  | 'signingKey'
  | 'logLevel'
  | 'mediaNodes'
  | 'path';

export interface SettingSpec {
  readonly key: string;
  readonly type: SettingType;
  readonly secret?: boolean;
  /** Human description of the default (the value itself is computed in `load.ts`). */
  readonly default: string;
  readonly doc: string;
}

export const SETTINGS = [
  { key: 'vms.gb28181.sip.host', type: 'host', default: 'first non-loopback IPv4, else 127.0.0.1', doc: 'external SIP address devices are pointed at (UDP and TCP)' },
  { key: 'vms.gb28181.sip.bind-host', type: 'host', default: '0.0.0.0 (every interface) when sip.host is not set, else sip.host', doc: 'address the SIP sockets listen on; Via and Contact always carry sip.host' },
  { key: 'vms.gb28181.sip.port', type: 'port', default: '5060', doc: 'external SIP port (UDP and TCP); 0 = any free port' },
  { key: 'vms.gb28181.sip.server-id', type: 'gbId', default: '34020000002000000001', doc: '20-digit platform SIP id, identical on all instances; realm = first 10 digits' },
  { key: 'vms.gb28181.sip.password', type: 'string', secret: true, default: 'none (no digest auth)', doc: 'device digest password; a per-device password overrides it' },
  { key: 'vms.gb28181.sip.instance-id', type: 'nodeCode', default: 'host:port', doc: 'node code: unique, stable across restarts; routing key for ownership and forwarding' },
  { key: 'vms.gb28181.sip.internal-base-url', type: 'httpUrl', default: 'http://host:<http port>', doc: 'HTTP base other instances use to reach this one' },
  { key: 'vms.gb28181.sip.node-forward-secret', type: 'string', secret: true, default: 'none (forwarding channel closed)', doc: 'shared secret for instance-to-instance forwarding' },
  { key: 'vms.gb28181.sip.cascade-node', type: 'boolean', default: 'false', doc: 'this instance volunteers for the cascade role' },
  { key: 'vms.gb28181.sip.keepalive-interval', type: 'seconds', default: '60', doc: 'expected device keepalive interval, seconds' },
  { key: 'vms.gb28181.sip.keepalive-timeout-count', type: 'count', default: '3', doc: 'missed keepalives before a device is offline' },
  { key: 'vms.gb28181.sip.offline-scan-period', type: 'seconds', default: '30', doc: 'period of the offline scan, seconds' },
  { key: 'vms.gb28181.sip.node-heartbeat-interval', type: 'seconds', default: '5', doc: 'node table heartbeat period, seconds; a node is online while its last heartbeat is at most 3 periods old' },
  { key: 'server.address', type: 'host', default: '0.0.0.0', doc: 'HTTP listen address' },
  { key: 'server.port', type: 'port', default: '18080', doc: 'HTTP control API port; 0 = any free port' },
  { key: 'redis.url', type: 'redisUrl', secret: true, default: 'none (standalone, embedded store)', doc: 'redis://, rediss:// or redis+cluster://h1:p1,h2:p2' },
  { key: 'vms.data-dir', type: 'path', default: './data (relative to the working directory)', doc: 'directory of the embedded store (SQLite file vms.sqlite) used when mysql.url is not set: devices, channels, upstream platforms, shared channels, media nodes survive restarts; one instance per directory' },
  { key: 'mysql.url', type: 'mysqlUrl', secret: true, default: 'none (embedded device store)', doc: 'mysql://user:pass@host:port/db' },
  { key: 'vms.auth.signing-key', type: 'signingKey', secret: true, default: 'dev key derived from server-id (warned at start)', doc: 'HS256 key for operator tokens, at least 32 bytes' },
  { key: 'vms.media.nodes', type: 'mediaNodes', secret: true, default: 'none (nodes come from the media node table)', doc: 'media nodes seeded at start: JSON array (YAML: list of maps), see src/media/media-nodes.config.ts' },
  { key: 'vms.media.probe-interval', type: 'seconds', default: '5', doc: 'period of the media node API probe loop, seconds' },
  { key: 'vms.media.probe-after', type: 'seconds', default: '15', doc: 'a media node no keepalive hook or probe confirmed for this long is probed (getServerConfig); unconfirmed for twice as long it is suspect, seconds' },
  { key: 'vms.media.failure-threshold', type: 'count', default: '3', doc: 'consecutive failed probes or API calls that make a media node inactive (never chosen until a success)' },
  { key: 'log.level', type: 'logLevel', default: 'info', doc: 'fatal, error, warn, info, debug, trace or silent' },
] as const satisfies readonly SettingSpec[];

export type SettingKey = (typeof SETTINGS)[number]['key'];

/** SPEC §12: upper-case the key path and turn `.` and `-` into `_`. */
export const envNameOf = (key: string): string => key.toUpperCase().replace(/[.-]/g, '_');

/** YAML sections owned by this schema: an unknown key inside one of them is reported (likely a typo). */
export const OWNED_SECTIONS = ['vms.gb28181.sip', 'vms.auth', 'vms.media', 'server', 'redis', 'mysql', 'log'] as const;

export const DEFAULT_SERVER_ID = '34020000002000000001';
export const DEFAULT_SIP_PORT = 5060;
export const DEFAULT_HTTP_PORT = 18080;
export const DEFAULT_DATA_DIR = './data';
