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
  | 'limit'
  | 'percent'
  | 'ttlShare'
  | 'redisUrl'
  | 'mysqlUrl'
  | 'signingKey'
  | 'logLevel'
  | 'mediaNodes'
  | 'path'
  | 'expiresSeconds'
  | 'digestQop'
  | 'digestUsername'
  | 'timeZone'
  | 'gbIdPrefixes'
  | 'prefixList'
  | 'addressList'
  | 'placementRules';

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
  { key: 'vms.gb28181.sip.reuse-port', type: 'boolean', default: 'false', doc: 'share sip.port (UDP and TCP) with other instances on this host (SO_REUSEPORT): the kernel keeps each device address:port on one of them; each needs its own instance-id; Node 22.12+ (on Node 20 start each instance through scripts/socket-activate.py, which hands the sockets over in LISTEN_FDS)' },
  { key: 'vms.gb28181.sip.server-id', type: 'gbId', default: '34020000002000000001', doc: '20-digit platform SIP id, identical on all instances; realm = first 10 digits' },
  { key: 'vms.gb28181.sip.password', type: 'string', secret: true, default: 'none (no digest auth)', doc: 'device digest password; a per-device password overrides it' },
  { key: 'vms.gb28181.sip.register-expires-max', type: 'expiresSeconds', default: '3600', doc: 'longest REGISTER lifetime granted, seconds (a longer Expires is cut to it; the 200 carries the granted value)' },
  { key: 'vms.gb28181.sip.register-expires-min', type: 'expiresSeconds', default: '60', doc: 'shortest REGISTER lifetime accepted, seconds; shorter gets 423 Interval Too Brief with Min-Expires (RFC 3261 §10.3)' },
  { key: 'vms.gb28181.sip.digest-qop', type: 'digestQop', default: 'auth', doc: 'auth: the 401 offers qop="auth" (answers with or without qop verify); none: no qop offered, for devices that fail on it' },
  { key: 'vms.gb28181.sip.digest-username', type: 'digestUsername', default: 'device-id', doc: 'device-id: the digest username must be the device id of From; any: any username (devices that send a login name, e.g. "admin")' },
  { key: 'vms.gb28181.sip.instance-id', type: 'nodeCode', default: 'host:port', doc: 'node code: unique, stable across restarts; routing key for ownership and forwarding' },
  { key: 'vms.gb28181.sip.internal-base-url', type: 'httpUrl', default: 'http://host:<http port>', doc: 'HTTP base other instances use to reach this one' },
  { key: 'vms.gb28181.sip.gb2022-devices', type: 'gbIdPrefixes', default: 'none (only devices registering with X-GB-ver: 3.0)', doc: 'comma-separated device ids or id prefixes (1-20 digits) treated as GB/T 28181-2022 devices whatever their REGISTER says; others get 4610 for 2022-only commands unless they register with X-GB-ver 3.0' },
  { key: 'vms.gb28181.sip.upload-base-url', type: 'httpUrl', default: 'http://sip.host:<http port>', doc: 'HTTP base devices reach this instance at, for snapshot uploads (SnapShotConfig UploadURL)' },
  { key: 'vms.gb28181.sip.node-forward-secret', type: 'string', secret: true, default: 'none (forwarding channel closed)', doc: 'shared secret for instance-to-instance forwarding' },
  { key: 'vms.gb28181.sip.cascade-node', type: 'boolean', default: 'false', doc: 'this instance volunteers for the cascade role' },
  { key: 'vms.gb28181.sip.keepalive-interval', type: 'seconds', default: '60', doc: 'expected device keepalive interval, seconds' },
  { key: 'vms.gb28181.sip.keepalive-timeout-count', type: 'count', default: '3', doc: 'missed keepalives before a device is offline' },
  { key: 'vms.gb28181.sip.offline-scan-period', type: 'seconds', default: '30', doc: 'period of the offline scan, seconds' },
  { key: 'vms.cluster.owner-renew-after', type: 'ttlShare', default: '0.4', doc: 'with Redis: a keepalive renews its device\'s ownership claim only once this share of the ownership TTL (keepalive interval × timeout count + one offline-scan period, 210 s at the defaults) has passed since this instance last wrote it: 0.4 = 84 s, every other keepalive at 60 s; 0 = every keepalive; at most 0.5. A device that stops keeps its claim at least (1 − share) × TTL after its last message (126 s at the defaults, under the 180 s online window)' },
  { key: 'vms.gb28181.sip.node-heartbeat-interval', type: 'seconds', default: '5', doc: 'node table heartbeat period, seconds; a node is online while its last heartbeat is at most 3 periods old' },
  // Device placement (issue 14; README "Device placement")
  { key: 'vms.placement.group', type: 'nodeCode', default: 'default', doc: 'shard group (region) this instance serves; placement rules map device-code prefixes to groups' },
  { key: 'vms.placement.rules', type: 'placementRules', default: 'none (every device in the default group)', doc: 'prefix=group pairs, comma-separated (YAML: one string), e.g. 3402=hefei,34=anhui; the longest prefix of the device code wins' },
  { key: 'vms.placement.redirect', type: 'boolean', default: 'false', doc: 'act as GB/T 28181-2022 §9.1.2.3 redirect server: an authenticated REGISTER placed on another shard gets 302 (only X-GB-ver: 3.0 or allow-listed devices)' },
  { key: 'vms.placement.redirect-allow', type: 'prefixList', default: 'none', doc: 'device ids or id prefixes (comma-separated) redirected even without X-GB-ver: 3.0' },
  { key: 'vms.placement.drain-rate', type: 'limit', default: '100', doc: 'devices per second a drained shard releases (POST /vms/nodes/drain without periodS): drain period = its online devices / rate, at least 1 s; all moved within the period + one device keepalive interval + one registration; an undrained shard takes its share of the devices of its group back at the same rate' },
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
  { key: 'vms.routing.time-zone', type: 'timeZone', default: 'Asia/Shanghai', doc: "IANA time zone the routing rules' time windows are read in (validated against the runtime's zone data)" },
  { key: 'vms.routing.poll-interval', type: 'seconds', default: '5', doc: 'period at which every instance checks the routing version table for a new published version, seconds (the Redis nudge makes it a fallback)' },
  { key: 'vms.routing.probe-interval', type: 'seconds', default: '10', doc: "period of a routing health probe round (SIP OPTIONS to 'sip' destinations, HTTP GET to 'http' ones), seconds" },
  {
    key: 'vms.routing.build-thread-idle',
    type: 'seconds',
    default: 'none: the build thread is kept for the process lifetime while the table has 100,000 rules or more, else ended after 5 idle minutes',
    doc: 'when set, the routing table build thread is always ended after this long idle, seconds (saves its memory; the first build after that pays the thread start and cold code)',
  },
  { key: 'vms.routing.probe-timeout', type: 'seconds', default: '3', doc: 'longest wait for one routing health probe, seconds (at most the probe interval)' },
  { key: 'vms.recovery.enabled', type: 'boolean', default: 'true', doc: 'session continuity (SPEC §11): established device dialogs (live, playback, download, talk, broadcast) and the cascade leader\'s upstream dialogs are snapshotted in Redis and restored by the device\'s new owner (crash or move) and by the next leader' },
  { key: 'vms.recovery.give-up', type: 'seconds', default: '30', doc: 'an orphaned session whose device has not come back within this is released (BYE if reachable, RTP port closed, SSRC freed), seconds' },
  { key: 'log.level', type: 'logLevel', default: 'info', doc: 'fatal, error, warn, info, debug, trace or silent' },
  // SPEC SEC-3 bounds (README "Bounds": what the peer gets when one is hit)
  { key: 'vms.limits.device-max-channels', type: 'limit', default: '50000', doc: 'channels one device may hold; a catalog over it is answered SIP 403' },
  { key: 'vms.limits.device-message-rate', type: 'limit', default: '200', doc: "tokens per second refilled in a device's bucket; a MESSAGE costs 1 + 1 per full 4 KiB of body; empty: SIP 503 + Retry-After" },
  { key: 'vms.limits.edge-addresses', type: 'addressList', default: 'none', doc: 'IP addresses or CIDR blocks of SIP edges (services/sip-edge; a pod network in Kubernetes): their unregistered-sender traffic is limited per device flow the edge names, not per edge address' },
  { key: 'vms.limits.unbound-message-rate', type: 'limit', default: '50', doc: 'per source address: MESSAGEs a second naming no device registered here on that flow (each costs a store read and a challenge); over it SIP 503 + Retry-After' },
  { key: 'vms.limits.unbound-message-burst', type: 'limit', default: '500', doc: 'per source address: the burst of such MESSAGEs (a site behind one NAT address after an instance restart)' },
  { key: 'vms.limits.large-body-decode-threads', type: 'limit', default: '1', doc: 'worker threads decoding MANSCDP bodies over 4 KiB off the event loop' },
  { key: 'vms.limits.large-body-decode-queue', type: 'limit', default: '64', doc: 'bodies over 4 KiB waiting for a decode thread; more are answered SIP 503 + Retry-After' },
  { key: 'vms.limits.device-message-burst', type: 'limit', default: '4000', doc: "size of a device's token bucket (the burst it may send at once)" },
  { key: 'vms.limits.sip-max-message-bytes', type: 'limit', default: '65535', doc: 'largest SIP message (UDP and TCP); over it TCP is answered 513 and closed, UDP dropped' },
  { key: 'vms.limits.sip-tcp-message-timeout', type: 'seconds', default: '10', doc: 'a SIP message on TCP must be complete this long after its first byte, else the connection is closed' },
  { key: 'vms.limits.sip-tcp-idle-timeout', type: 'seconds', default: '300', doc: 'a SIP TCP connection with no complete message (or keepalive CRLF) for this long is closed' },
  { key: 'vms.limits.sip-tcp-max-connections', type: 'limit', default: '10000', doc: 'open SIP TCP connections; more are refused (closed at once)' },
  { key: 'vms.limits.sip-tcp-connections-per-ip', type: 'limit', default: '64', doc: 'SIP TCP connections from one source address; more are refused' },
  { key: 'vms.limits.http-headers-timeout', type: 'seconds', default: '10', doc: 'HTTP request headers must arrive within this, else 408 and close' },
  { key: 'vms.limits.http-request-timeout', type: 'seconds', default: '30', doc: 'a whole HTTP request (headers and body) must arrive within this, else 408 and close' },
  { key: 'vms.limits.http-keepalive-timeout', type: 'seconds', default: '72', doc: 'an idle keep-alive HTTP connection is closed after this' },
  { key: 'vms.limits.http-idle-timeout', type: 'seconds', default: '120', doc: 'an HTTP socket with no byte either way for this long is destroyed' },
  { key: 'vms.limits.http-max-connections', type: 'limit', default: '10000', doc: 'open HTTP connections; more are closed at once' },
  { key: 'vms.limits.http-connections-per-ip', type: 'limit', default: '512', doc: 'HTTP connections from one address; more are closed at once' },
  { key: 'vms.limits.http-body-limit', type: 'limit', default: '1048576', doc: 'largest control API request body, bytes; over it: 413' },
  { key: 'vms.limits.http-webhook-body-limit', type: 'limit', default: '65536', doc: 'largest media hook (/vms/webhook/*) body, bytes; over it: 413' },
  { key: 'vms.limits.snapshot-max-bytes', type: 'limit', default: '2097152', doc: 'largest snapshot picture a device may upload, bytes; over it: 413, nothing stored' },
  { key: 'vms.limits.snapshot-max-files', type: 'limit', default: '1000', doc: 'snapshot pictures kept on disk per instance (under the data dir); the oldest are deleted beyond it' },
  { key: 'vms.limits.mysql-statement-timeout', type: 'seconds', default: '2', doc: 'one MySQL statement including the wait for a connection; then the request fails with 503' },
  { key: 'vms.limits.register-shed-queue-high', type: 'limit', default: '1048576', doc: "overload (issue 11): bytes waiting in the SIP UDP socket's receive queue over which new devices' first REGISTERs are answered SIP 503 + Retry-After, the share let through cut to a quarter per 100 ms and to the cap at once past 4× this mark (~450-500 datagrams of the kernel's accounting, ~60 ms of arrivals at 4,000 registrations/s; keepalives, refreshes and digest answers are never shed)" },
  { key: 'vms.limits.register-shed-queue-low', type: 'limit', default: '262144', doc: 'receive-queue bytes under which the shed share falls again, 10 points per 100 ms; below register-shed-queue-high' },
  { key: 'vms.limits.register-shed-max-pending', type: 'limit', default: '1000', doc: 'REGISTERs in flight (awaiting the store, Redis or MySQL) over which new ones are shed whatever the queue' },
  { key: 'vms.limits.register-shed-utilization-high', type: 'percent', default: '90', doc: 'event-loop utilization over which new REGISTERs are shed where the receive queue cannot be read (not Linux), percent' },
  { key: 'vms.limits.register-shed-utilization-low', type: 'percent', default: '75', doc: 'utilization under which shedding eases there, percent; below register-shed-utilization-high' },
  { key: 'vms.limits.register-shed-receive-buffer', type: 'limit', default: '1048576', doc: "SO_RCVBUF of the SIP UDP socket while new REGISTERs are shed at register-shed-max-share, bytes (the kernel doubles it: twice this must exceed register-shed-queue-high); back to 4 MiB once shedding stops: what would wait past the sender's 500 ms retransmission timer is dropped by the kernel instead of answered late" },
  { key: 'vms.limits.register-shed-max-share', type: 'percent', default: '99', doc: 'highest share of new REGISTERs shed, percent: the rest still get through, so a storm drains instead of stalling' },
  { key: 'vms.limits.register-retry-after', type: 'limit', default: '5', doc: 'Retry-After of a shed REGISTER, seconds, at least' },
  { key: 'vms.limits.register-retry-after-max-spread', type: 'limit', default: '600', doc: 'farthest Retry-After past register-retry-after, seconds, and the length of the return calendar: a shed device is told the earliest second in which fewer devices are due than the instance admits a second while shedding (at least 10), so the waits grow with the backlog, not to this; only when every second up to it is full are they spread over all of it' },
  { key: 'vms.limits.register-retry-after-spread', type: 'limit', default: '25', doc: 'Retry-After spread: a random 0..spread seconds is added while that second of the return calendar has room, so a few shed devices do not come back together' },
  { key: 'vms.limits.mysql-queue-limit', type: 'limit', default: '100', doc: 'statements waiting for a MySQL connection per pool; more fail at once with 503' },
] as const satisfies readonly SettingSpec[];

export type SettingKey = (typeof SETTINGS)[number]['key'];

/** SPEC §12: upper-case the key path and turn `.` and `-` into `_`. */
export const envNameOf = (key: string): string => key.toUpperCase().replace(/[.-]/g, '_');

/** YAML sections owned by this schema: an unknown key inside one of them is reported (likely a typo). */
export const OWNED_SECTIONS = ['vms.gb28181.sip', 'vms.cluster', 'vms.auth', 'vms.media', 'vms.routing', 'vms.limits', 'vms.placement', 'server', 'redis', 'mysql', 'log'] as const;

export const DEFAULT_SERVER_ID = '34020000002000000001';
export const DEFAULT_SIP_PORT = 5060;
export const DEFAULT_HTTP_PORT = 18080;
export const DEFAULT_DATA_DIR = './data';
/**
 * Issue 11: a keepalive renews its device's claim once 0.4 × TTL has passed since the last write: 84 s
 * at the defaults (TTL 210 s), so every other keepalive at the 60 s interval (one at 60 s is early, the
 * one at 120 s renews), leaving room for a device's jitter either way.
 */
export const DEFAULT_OWNER_RENEW_AFTER_SHARE = 0.4;
export const DEFAULT_ROUTING_TIME_ZONE = 'Asia/Shanghai';
/** SPEC SEC-1: granted REGISTER lifetime at most one hour (what GB28181 devices ask for by default). */
export const DEFAULT_REGISTER_EXPIRES_MAX = 3600;
/** RFC 3261 §10.3 step 7; 60 s as common registrars (Asterisk's minexpiry) use. */
export const DEFAULT_REGISTER_EXPIRES_MIN = 60;
