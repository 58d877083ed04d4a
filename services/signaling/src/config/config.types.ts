import type { PlacementRule } from '@vms/routing';
import type { MediaNode } from '@vms/media';
import type { PortSharing, ShedPolicy } from '@vms/sip';
import type { SettingKey } from './schema.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
/** Whether the REGISTER challenge offers qop="auth" (RFC 2617). */
export type DigestQop = 'auth' | 'none';
/** Which digest usernames a REGISTER may use: the device id of From only, or any (SPEC SEC-1). */
export type DigestUsernameRule = 'device-id' | 'any';

export interface SipSettings {
  /** External SIP host devices are pointed at (Via, Contact, the node table). */
  readonly host: string;
  /** Address the SIP sockets listen on: 0.0.0.0 when `host` was detected, else `host` (or as configured). */
  readonly bindHost: string;
  /** External SIP port (UDP and TCP); 0 only in tests. */
  readonly port: number;
  /** 20-digit platform id. */
  readonly serverId: string;
  /** Digest realm: first 10 digits of the server id (SPEC §2). */
  readonly realm: string;
  /** Default device digest password; null = no auth. */
  readonly password: string | null;
  /** Longest REGISTER lifetime granted, seconds (SPEC SEC-1). */
  readonly registerExpiresMax: number;
  /** Shortest REGISTER lifetime accepted, seconds; shorter → 423 (RFC 3261 §10.3 step 7). */
  readonly registerExpiresMin: number;
  readonly digestQop: DigestQop;
  readonly digestUsername: DigestUsernameRule;
  /** Node code (instance-id). */
  readonly instanceId: string;
  /** HTTP base other instances use to reach this one, without a trailing slash. */
  readonly internalBaseUrl: string;
  /** Device ids / id prefixes treated as GB/T 28181-2022 devices whatever their REGISTER says. */
  readonly gb2022Devices: readonly string[];
  /** HTTP base devices reach this instance at (snapshot UploadURL), without a trailing slash. */
  readonly uploadBaseUrl: string;
  /** Shared forward secret; null = forwarding channel closed (ROUTE-6). */
  readonly nodeForwardSecret: string | null;
  readonly cascadeNode: boolean;
  /** Seconds. */
  readonly keepaliveIntervalSec: number;
  readonly keepaliveTimeoutCount: number;
  /** Seconds. */
  readonly offlineScanPeriodSec: number;
  /** Seconds between node-table heartbeats (SPEC NODE-1); online window = 3 heartbeats. */
  readonly nodeHeartbeatIntervalSec: number;
  /** Issue 11: share of the ownership TTL (0-0.5) after which a keepalive renews its claim (vms.cluster.owner-renew-after). */
  readonly ownerRenewAfterShare: number;
  /** The SIP port is shared with other instances on the host (vms.gb28181.sip.reuse-port or LISTEN_FDS); null = this instance's alone. */
  readonly portSharing: PortSharing | null;
}

/** Device placement (issue 14). */
export interface PlacementSettings {
  /** This instance's shard group (written to the node table). */
  readonly group: string;
  /** prefix → group, validated (compilePlacementRules). */
  readonly rules: readonly PlacementRule[];
  /** GB/T 28181-2022 §9.1.2.3 redirect server on. */
  readonly redirect: boolean;
  /** Device ids / prefixes redirected without X-GB-ver: 3.0. */
  readonly redirectAllow: readonly string[];
  /** Devices per second a drain releases when the operator names no period (paced drain). */
  readonly drainRate: number;
}

export interface HttpSettings {
  readonly address: string;
  readonly port: number;
}

/** Validated here; connection details are parsed by @vms/cluster's Redis client. */
export interface RedisSettings {
  readonly url: string;
  /** `cluster` for redis+cluster:// and rediss+cluster:// seed lists. */
  readonly mode: 'single' | 'cluster';
}

export interface MysqlSettings {
  readonly url: string;
  readonly database: string;
}

export interface AuthSettings {
  readonly signingKey: string;
  /** `dev-default`: no key was configured; a stable development key was derived (warn at start). */
  readonly signingKeySource: 'configured' | 'dev-default';
}

/** Session continuity (SPEC §11 RECOVER). */
export interface RecoverySettings {
  readonly enabled: boolean;
  /** Seconds an orphaned session waits for its device before it is released. */
  readonly giveUpSec: number;
}

export interface MediaSettings {
  /** Media nodes seeded from configuration (`vms.media.nodes`); the registry holds the rest. */
  readonly nodes: readonly MediaNode[];
  /** Seconds between two rounds of the media node API probe loop. */
  readonly probeIntervalSec: number;
  /** Seconds without a keepalive hook or probe success after which a node is probed (suspect at twice that). */
  readonly probeAfterSec: number;
  /** Consecutive failures that make a media node inactive. */
  readonly failureThreshold: number;
}

/** The routing engine (SPEC §10); times in milliseconds here (seconds in the settings). */
export interface RoutingSettings {
  /** IANA zone rule time windows are read in. */
  readonly timeZone: string;
  /** Period of the version-table poll. */
  readonly pollIntervalMs: number;
  /** Period of a health probe round, and one probe's longest wait (≤ the period). */
  readonly probeIntervalMs: number;
  readonly probeTimeoutMs: number;
  /**
   * null (default): one table build thread started and warmed up at start, kept for the process's lifetime
   * (replaced if it dies); else the thread is started by a build and ended after this long idle.
   */
  readonly buildThreadIdleMs: number | null;
}

/** SPEC SEC-3 bounds; times in milliseconds here (seconds in the settings). README "Bounds". */
export interface LimitSettings {
  readonly deviceMaxChannels: number;
  readonly deviceMessageRatePerSec: number;
  readonly deviceMessageBurst: number;
  readonly edgeAddresses: readonly string[];
  readonly unboundMessageRatePerSec: number;
  readonly unboundMessageBurst: number;
  readonly largeBodyDecodeThreads: number;
  readonly largeBodyDecodeQueue: number;
  readonly sipMaxMessageBytes: number;
  readonly sipTcpMessageTimeoutMs: number;
  readonly sipTcpIdleTimeoutMs: number;
  readonly sipTcpMaxConnections: number;
  readonly sipTcpConnectionsPerIp: number;
  readonly httpHeadersTimeoutMs: number;
  readonly httpRequestTimeoutMs: number;
  readonly httpKeepAliveTimeoutMs: number;
  readonly httpIdleTimeoutMs: number;
  readonly httpMaxConnections: number;
  readonly httpConnectionsPerIp: number;
  readonly httpBodyLimit: number;
  readonly httpWebhookBodyLimit: number;
  /** Largest uploaded snapshot picture, bytes. */
  readonly snapshotMaxBytes: number;
  /** Snapshot pictures kept on disk by this instance. */
  readonly snapshotMaxFiles: number;
  readonly mysqlStatementTimeoutMs: number;
  readonly mysqlQueueLimit: number;
  /** Marks of the REGISTER shedder (issue 11: overload without collapse). */
  readonly registerShed: ShedPolicy;
}

export type SettingSource = 'default' | 'file' | 'env';

export interface Config {
  readonly sip: SipSettings;
  readonly http: HttpSettings;
  /** null = standalone (no Redis). */
  readonly redis: RedisSettings | null;
  /** null = embedded store in `dataDir`. */
  readonly mysql: MysqlSettings | null;
  /** Directory of the embedded store (SQLite), used when `mysql` is null; relative to the working directory. */
  readonly dataDir: string;
  readonly auth: AuthSettings;
  readonly media: MediaSettings;
  readonly routing: RoutingSettings;
  readonly recovery: RecoverySettings;
  readonly log: { readonly level: LogLevel };
  readonly placement: PlacementSettings;
  readonly limits: LimitSettings;
  /** Where each setting came from, for the start-up log (values of secrets are never logged). */
  readonly sources: Readonly<Record<SettingKey, SettingSource>>;
  readonly configFile: string | null;
}
