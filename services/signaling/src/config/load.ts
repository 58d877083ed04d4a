// Configuration enters here, once: `--config FILE` (YAML), then environment variables (env wins),
// validated against `schema.ts` with every problem reported in one ConfigError, then frozen.
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import type { MediaNode } from '@vms/media';
import type { PlacementRule } from '@vms/routing';
import { parse as parseYaml } from 'yaml';
import { ConfigError, type ConfigIssue } from '../errors/catalog.ts';
import type { Config, DigestQop, DigestUsernameRule, LogLevel, MysqlSettings, RedisSettings, SettingSource } from './config.types.ts';
import { parseMediaNodes } from '../media/media-nodes.config.ts';
import { DEFAULT_SHED_POLICY, listenFdsFromEnv, nodeSetsReusePort, shedBufferHidesMark, type PortSharing } from '@vms/sip';
import { firstNonLoopbackIPv4, type InterfaceTable } from './host.ts';
import * as P from './parsers.ts';
import {
  DEFAULT_DATA_DIR,
  DEFAULT_ROUTING_TIME_ZONE,
  DEFAULT_HTTP_PORT,
  DEFAULT_OWNER_RENEW_AFTER_SHARE,
  DEFAULT_REGISTER_EXPIRES_MAX,
  DEFAULT_REGISTER_EXPIRES_MIN,
  DEFAULT_SERVER_ID,
  DEFAULT_SIP_PORT,
  envNameOf,
  OWNED_SECTIONS,
  SETTINGS,
  type SettingKey,
  type SettingType,
} from './schema.ts';
import { devSigningKey } from './signing-key.ts';

export interface ConfigIo {
  readonly readFile: (path: string) => string;
  readonly networkInterfaces: () => InterfaceTable;
  /** This process's pid, for LISTEN_PID (default process.pid). */
  readonly pid?: number;
  /** Node's version, for vms.gb28181.sip.reuse-port (default process.versions.node). */
  readonly nodeVersion?: string;
}

export const nodeConfigIo: ConfigIo = {
  readFile: (path) => readFileSync(path, 'utf8'),
  networkInterfaces,
};

type ValueOf<T extends SettingType> = T extends 'port' | 'seconds' | 'count' | 'expiresSeconds' | 'limit' | 'percent' | 'ttlShare'
  ? number
  : T extends 'boolean'
    ? boolean
    : T extends 'redisUrl'
      ? RedisSettings
      : T extends 'mysqlUrl'
        ? MysqlSettings
        : T extends 'logLevel'
          ? LogLevel
          : T extends 'mediaNodes'
            ? readonly MediaNode[]
            : T extends 'digestQop'
              ? DigestQop
              : T extends 'digestUsername'
                ? DigestUsernameRule
                : T extends 'gbIdPrefixes'
                  ? readonly string[]
                  : T extends 'prefixList' | 'addressList'
                    ? readonly string[]
                    : T extends 'placementRules'
                      ? readonly PlacementRule[]
                      : string;

const PARSERS: { readonly [T in SettingType]: (raw: string) => P.Parsed<ValueOf<T>> } = {
  host: P.parseHost,
  port: P.parsePort,
  gbId: P.parseGbId,
  string: P.parseNonEmpty,
  nodeCode: P.parseNodeCode,
  httpUrl: P.parseHttpUrl,
  boolean: P.parseBoolean,
  seconds: P.parseSeconds,
  count: P.parseCount,
  limit: P.parseLimit,
  percent: P.parsePercent,
  ttlShare: P.parseTtlShare,
  redisUrl: P.parseRedisUrl,
  mysqlUrl: P.parseMysqlUrl,
  signingKey: P.parseSigningKey,
  logLevel: P.parseLogLevel,
  mediaNodes: parseMediaNodes,
  path: P.parsePath,
  expiresSeconds: P.parseExpiresSeconds,
  digestQop: P.parseDigestQop,
  digestUsername: P.parseDigestUsername,
  timeZone: P.parseTimeZone,
  gbIdPrefixes: P.parseGbIdPrefixes,
  prefixList: P.parsePrefixList,
  addressList: P.parseAddressList,
  placementRules: P.parsePlacementRules,
};

type Spec = (typeof SETTINGS)[number];
type TypeOfKey<K extends SettingKey> = Extract<Spec, { key: K }>['type'];

/** Extracts `--config FILE` / `--config=FILE`; other arguments are left to the caller. */
export function configFileFromArgv(argv: readonly string[]): { file: string | null; issue: ConfigIssue | null } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--config') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        return { file: null, issue: { key: '--config', env: null, problem: 'needs a file name' } };
      }
      return { file: next, issue: null };
    }
    if (arg.startsWith('--config=')) return { file: arg.slice('--config='.length), issue: null };
  }
  return { file: null, issue: null };
}

/** Flattens failsafe-parsed YAML (strings, maps, lists) into dotted key paths. */
function flatten(node: unknown, prefix: string, out: Map<string, unknown>): void {
  if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
    for (const [k, v] of Object.entries(node)) flatten(v, prefix === '' ? k : `${prefix}.${k}`, out);
  } else if (prefix !== '') {
    out.set(prefix, node);
  }
}

function readYaml(file: string, io: ConfigIo, issues: ConfigIssue[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  let text: string;
  try {
    text = io.readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'read error';
    issues.push({ key: '--config', env: null, problem: `cannot read ${file} (${code})` });
    return out;
  }
  try {
    // failsafe: every scalar stays a string, so a 20-digit server-id keeps its digits.
    flatten(parseYaml(text, { schema: 'failsafe' }), '', out);
  } catch (err) {
    issues.push({ key: '--config', env: null, problem: `${file} is not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}` });
  }
  return out;
}

/**
 * Whether and how the SIP port is shared with other instances on the host (@vms/sip port-sharing.ts):
 * sockets handed over by a launcher (LISTEN_FDS) or vms.gb28181.sip.reuse-port, with what that needs.
 */
function portSharingOf(values: ReadonlyMap<SettingKey, unknown>, env: NodeJS.ProcessEnv, io: ConfigIo, issues: ConfigIssue[]): PortSharing | null {
  const handedOver = listenFdsFromEnv(env, io.pid ?? process.pid);
  if (handedOver !== null && 'problem' in handedOver) {
    issues.push({ key: 'LISTEN_FDS', env: 'LISTEN_FDS', problem: handedOver.problem });
    return null;
  }
  const reusePort = values.get('vms.gb28181.sip.reuse-port') === true;
  if (handedOver === null && !reusePort) return null;
  const key = (k: SettingKey) => ({ key: k, env: envNameOf(k) });
  if (!values.has('vms.gb28181.sip.instance-id')) {
    issues.push({
      ...key('vms.gb28181.sip.instance-id'),
      problem: 'must be set, and unique to each instance, when instances share the SIP port (vms.gb28181.sip.reuse-port, or sockets handed over in LISTEN_FDS): the default host:port would be the same for all of them',
    });
  }
  if (handedOver !== null) return { kind: 'inherited', ...handedOver };
  const version = io.nodeVersion ?? process.versions.node;
  if (!nodeSetsReusePort(version)) {
    issues.push({
      ...key('vms.gb28181.sip.reuse-port'),
      problem: `this Node (${version}) cannot set SO_REUSEPORT: it needs 22.12 or later. Start each instance through scripts/socket-activate.py instead (or a systemd socket unit with ReusePort=yes), which hands the sockets over in LISTEN_FDS`,
    });
  }
  if ((values.get('vms.gb28181.sip.port') ?? DEFAULT_SIP_PORT) === 0) issues.push({ ...key('vms.gb28181.sip.port'), problem: 'must be a fixed port when instances share it (vms.gb28181.sip.reuse-port)' });
  return { kind: 'reuse-port' };
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv, io: ConfigIo = nodeConfigIo): Config {
  const issues: ConfigIssue[] = [];
  const { file, issue } = configFileFromArgv(argv);
  if (issue !== null) issues.push(issue);
  const yaml = file === null ? new Map<string, unknown>() : readYaml(file, io, issues);

  const known = new Set<string>(SETTINGS.map((s) => s.key));
  for (const key of yaml.keys()) {
    const owned = OWNED_SECTIONS.some((section) => key === section || key.startsWith(`${section}.`));
    if (owned && !known.has(key)) issues.push({ key, env: null, problem: 'unknown key' });
  }

  const sources = {} as Record<SettingKey, SettingSource>;
  const values = new Map<SettingKey, unknown>();
  for (const spec of SETTINGS) {
    const envName = envNameOf(spec.key);
    const fromEnv = env[envName];
    const fromFile = yaml.get(spec.key);
    let raw: string | undefined;
    // An empty value means "unset" in both places (compose files often pass empty variables).
    if (fromEnv !== undefined && fromEnv.trim() !== '') {
      raw = fromEnv.trim();
      sources[spec.key] = 'env';
    } else if (fromFile !== undefined && fromFile !== '') {
      if (spec.type === 'mediaNodes' && Array.isArray(fromFile)) {
        // a YAML list of maps: handed to the parser as is (JSON text is the env form)
        sources[spec.key] = 'file';
        const parsed = parseMediaNodes(fromFile);
        if (parsed.ok) values.set(spec.key, parsed.value);
        else issues.push({ key: spec.key, env: envName, problem: parsed.problem });
        continue;
      }
      if (typeof fromFile !== 'string') {
        issues.push({ key: spec.key, env: envName, problem: 'must be a single value, not a list or map' });
        sources[spec.key] = 'file';
        continue;
      }
      raw = fromFile.trim();
      sources[spec.key] = 'file';
    } else {
      sources[spec.key] = 'default';
      continue;
    }
    const parsed = (PARSERS[spec.type] as (raw: string) => P.Parsed<unknown>)(raw);
    if (parsed.ok) values.set(spec.key, parsed.value);
    else {
      const shown = 'secret' in spec && spec.secret ? '' : `, got ${JSON.stringify(raw)}`;
      issues.push({ key: spec.key, env: envName, problem: parsed.problem + shown });
    }
  }
  const announced = values.get('vms.gb28181.sip.host');
  if (typeof announced === 'string' && isWildcard(announced)) {
    issues.push({
      key: 'vms.gb28181.sip.host',
      env: envNameOf('vms.gb28181.sip.host'),
      problem: `must be the address devices reach, not a wildcard (got ${JSON.stringify(announced)}); to listen on every interface set vms.gb28181.sip.bind-host instead`,
    });
  }
  const expiresMin = values.get('vms.gb28181.sip.register-expires-min') ?? DEFAULT_REGISTER_EXPIRES_MIN;
  const expiresMax = values.get('vms.gb28181.sip.register-expires-max') ?? DEFAULT_REGISTER_EXPIRES_MAX;
  if (typeof expiresMin === 'number' && typeof expiresMax === 'number' && expiresMin > expiresMax) {
    issues.push({
      key: 'vms.gb28181.sip.register-expires-min',
      env: envNameOf('vms.gb28181.sip.register-expires-min'),
      problem: `must not exceed vms.gb28181.sip.register-expires-max (${expiresMin} > ${expiresMax})`,
    });
  }
  const probeInterval = values.get('vms.routing.probe-interval') ?? 10;
  const probeTimeout = values.get('vms.routing.probe-timeout') ?? 3;
  // The shedder's marks are a band: the share rises over the high one and falls under the low one.
  for (const [low, high, lowDefault, highDefault] of [
    ['vms.limits.register-shed-queue-low', 'vms.limits.register-shed-queue-high', DEFAULT_SHED_POLICY.lowQueueBytes, DEFAULT_SHED_POLICY.highQueueBytes],
    ['vms.limits.register-shed-utilization-low', 'vms.limits.register-shed-utilization-high', DEFAULT_SHED_POLICY.lowUtilization * 100, DEFAULT_SHED_POLICY.highUtilization * 100],
  ] as const) {
    const l = values.get(low) ?? lowDefault;
    const h = values.get(high) ?? highDefault;
    if (typeof l === 'number' && typeof h === 'number' && l >= h) issues.push({ key: low, env: envNameOf(low), problem: `must be below ${high} (${l} >= ${h})` });
  }
  const shedBuffer = values.get('vms.limits.register-shed-receive-buffer') ?? DEFAULT_SHED_POLICY.sheddingReceiveBufferBytes;
  const shedHigh = values.get('vms.limits.register-shed-queue-high') ?? DEFAULT_SHED_POLICY.highQueueBytes;
  if (typeof shedBuffer === 'number' && typeof shedHigh === 'number' && shedBufferHidesMark({ sheddingReceiveBufferBytes: shedBuffer, highQueueBytes: shedHigh })) {
    issues.push({
      key: 'vms.limits.register-shed-receive-buffer',
      env: envNameOf('vms.limits.register-shed-receive-buffer'),
      problem: `twice it (the kernel's accounting) must exceed vms.limits.register-shed-queue-high (2 × ${shedBuffer} <= ${shedHigh}): while shedding the queue could never pass the mark`,
    });
  }
  if (typeof probeInterval === 'number' && typeof probeTimeout === 'number' && probeTimeout > probeInterval) {
    issues.push({
      key: 'vms.routing.probe-timeout',
      env: envNameOf('vms.routing.probe-timeout'),
      problem: `must not exceed vms.routing.probe-interval (${probeTimeout} > ${probeInterval})`,
    });
  }
  const portSharing = portSharingOf(values, env, io, issues);
  if (issues.length > 0) throw new ConfigError(issues);

  const get = <K extends SettingKey>(key: K): ValueOf<TypeOfKey<K>> | undefined =>
    values.get(key) as ValueOf<TypeOfKey<K>> | undefined;

  const configuredHost = get('vms.gb28181.sip.host');
  const host = configuredHost ?? firstNonLoopbackIPv4(io.networkInterfaces());
  // A detected address is only a guess at what devices use: listen on every interface so that
  // loopback, other NICs and the guess all work. A configured one is a decision: listen there only
  // (several instances may share a port on different addresses).
  const bindHost = get('vms.gb28181.sip.bind-host') ?? (configuredHost === undefined ? '0.0.0.0' : configuredHost);
  const sipPort = get('vms.gb28181.sip.port') ?? DEFAULT_SIP_PORT;
  const httpPort = get('server.port') ?? DEFAULT_HTTP_PORT;
  const serverId = get('vms.gb28181.sip.server-id') ?? DEFAULT_SERVER_ID;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const configuredKey = get('vms.auth.signing-key');

  const config: Config = {
    sip: {
      host,
      bindHost,
      port: sipPort,
      serverId,
      realm: serverId.slice(0, 10),
      password: get('vms.gb28181.sip.password') ?? null,
      registerExpiresMax: get('vms.gb28181.sip.register-expires-max') ?? DEFAULT_REGISTER_EXPIRES_MAX,
      registerExpiresMin: get('vms.gb28181.sip.register-expires-min') ?? DEFAULT_REGISTER_EXPIRES_MIN,
      digestQop: get('vms.gb28181.sip.digest-qop') ?? 'auth',
      digestUsername: get('vms.gb28181.sip.digest-username') ?? 'device-id',
      instanceId: get('vms.gb28181.sip.instance-id') ?? `${host}:${sipPort}`,
      internalBaseUrl: get('vms.gb28181.sip.internal-base-url') ?? `http://${urlHost}:${httpPort}`,
      nodeForwardSecret: get('vms.gb28181.sip.node-forward-secret') ?? null,
      gb2022Devices: get('vms.gb28181.sip.gb2022-devices') ?? [],
      uploadBaseUrl: get('vms.gb28181.sip.upload-base-url') ?? `http://${urlHost}:${httpPort}`,
      cascadeNode: get('vms.gb28181.sip.cascade-node') ?? false,
      keepaliveIntervalSec: get('vms.gb28181.sip.keepalive-interval') ?? 60,
      keepaliveTimeoutCount: get('vms.gb28181.sip.keepalive-timeout-count') ?? 3,
      offlineScanPeriodSec: get('vms.gb28181.sip.offline-scan-period') ?? 30,
      nodeHeartbeatIntervalSec: get('vms.gb28181.sip.node-heartbeat-interval') ?? 5,
      ownerRenewAfterShare: get('vms.cluster.owner-renew-after') ?? DEFAULT_OWNER_RENEW_AFTER_SHARE,
      portSharing,
    },
    http: { address: get('server.address') ?? '0.0.0.0', port: httpPort },
    redis: get('redis.url') ?? null,
    mysql: get('mysql.url') ?? null,
    dataDir: get('vms.data-dir') ?? DEFAULT_DATA_DIR,
    auth: {
      signingKey: configuredKey ?? devSigningKey(serverId),
      signingKeySource: configuredKey === undefined ? 'dev-default' : 'configured',
    },
    media: {
      nodes: get('vms.media.nodes') ?? [],
      probeIntervalSec: get('vms.media.probe-interval') ?? 5,
      probeAfterSec: get('vms.media.probe-after') ?? 15,
      failureThreshold: get('vms.media.failure-threshold') ?? 3,
    },
    routing: {
      timeZone: get('vms.routing.time-zone') ?? DEFAULT_ROUTING_TIME_ZONE,
      pollIntervalMs: ms(get('vms.routing.poll-interval') ?? 5),
      probeIntervalMs: ms(get('vms.routing.probe-interval') ?? 10),
      probeTimeoutMs: ms(get('vms.routing.probe-timeout') ?? 3),
      buildThreadIdleMs: nullableMs(get('vms.routing.build-thread-idle')),
    },
    recovery: {
      enabled: get('vms.recovery.enabled') ?? true,
      giveUpSec: get('vms.recovery.give-up') ?? 30,
    },
    log: { level: get('log.level') ?? 'info' },
    placement: {
      group: get('vms.placement.group') ?? 'default',
      rules: get('vms.placement.rules') ?? [],
      redirect: get('vms.placement.redirect') ?? false,
      redirectAllow: get('vms.placement.redirect-allow') ?? [],
      drainRate: get('vms.placement.drain-rate') ?? 100,
    },
    limits: {
      deviceMaxChannels: get('vms.limits.device-max-channels') ?? 50_000,
      deviceMessageRatePerSec: get('vms.limits.device-message-rate') ?? 200,
      deviceMessageBurst: get('vms.limits.device-message-burst') ?? 4000,
      edgeAddresses: get('vms.limits.edge-addresses') ?? [],
      unboundMessageRatePerSec: get('vms.limits.unbound-message-rate') ?? 50,
      unboundMessageBurst: get('vms.limits.unbound-message-burst') ?? 500,
      largeBodyDecodeThreads: get('vms.limits.large-body-decode-threads') ?? 1,
      largeBodyDecodeQueue: get('vms.limits.large-body-decode-queue') ?? 64,
      sipMaxMessageBytes: get('vms.limits.sip-max-message-bytes') ?? 65_535,
      sipTcpMessageTimeoutMs: ms(get('vms.limits.sip-tcp-message-timeout') ?? 10),
      sipTcpIdleTimeoutMs: ms(get('vms.limits.sip-tcp-idle-timeout') ?? 300),
      sipTcpMaxConnections: get('vms.limits.sip-tcp-max-connections') ?? 10_000,
      sipTcpConnectionsPerIp: get('vms.limits.sip-tcp-connections-per-ip') ?? 64,
      httpHeadersTimeoutMs: ms(get('vms.limits.http-headers-timeout') ?? 10),
      httpRequestTimeoutMs: ms(get('vms.limits.http-request-timeout') ?? 30),
      httpKeepAliveTimeoutMs: ms(get('vms.limits.http-keepalive-timeout') ?? 72),
      httpIdleTimeoutMs: ms(get('vms.limits.http-idle-timeout') ?? 120),
      httpMaxConnections: get('vms.limits.http-max-connections') ?? 10_000,
      httpConnectionsPerIp: get('vms.limits.http-connections-per-ip') ?? 512,
      httpBodyLimit: get('vms.limits.http-body-limit') ?? 1024 * 1024,
      httpWebhookBodyLimit: get('vms.limits.http-webhook-body-limit') ?? 64 * 1024,
      snapshotMaxBytes: get('vms.limits.snapshot-max-bytes') ?? 2 * 1024 * 1024,
      snapshotMaxFiles: get('vms.limits.snapshot-max-files') ?? 1000,
      mysqlStatementTimeoutMs: ms(get('vms.limits.mysql-statement-timeout') ?? 2),
      mysqlQueueLimit: get('vms.limits.mysql-queue-limit') ?? 100,
      registerShed: {
        highQueueBytes: get('vms.limits.register-shed-queue-high') ?? DEFAULT_SHED_POLICY.highQueueBytes,
        lowQueueBytes: get('vms.limits.register-shed-queue-low') ?? DEFAULT_SHED_POLICY.lowQueueBytes,
        highQueueDelayMs: DEFAULT_SHED_POLICY.highQueueDelayMs,
        lowQueueDelayMs: DEFAULT_SHED_POLICY.lowQueueDelayMs,
        maxPending: get('vms.limits.register-shed-max-pending') ?? DEFAULT_SHED_POLICY.maxPending,
        highUtilization: (get('vms.limits.register-shed-utilization-high') ?? DEFAULT_SHED_POLICY.highUtilization * 100) / 100,
        lowUtilization: (get('vms.limits.register-shed-utilization-low') ?? DEFAULT_SHED_POLICY.lowUtilization * 100) / 100,
        maxFraction: (get('vms.limits.register-shed-max-share') ?? DEFAULT_SHED_POLICY.maxFraction * 100) / 100,
        cut: DEFAULT_SHED_POLICY.cut,
        fall: DEFAULT_SHED_POLICY.fall,
        sheddingReceiveBufferBytes: get('vms.limits.register-shed-receive-buffer') ?? DEFAULT_SHED_POLICY.sheddingReceiveBufferBytes,
        retryAfterMinSec: get('vms.limits.register-retry-after') ?? DEFAULT_SHED_POLICY.retryAfterMinSec,
        retryAfterSpreadSec: get('vms.limits.register-retry-after-spread') ?? DEFAULT_SHED_POLICY.retryAfterSpreadSec,
        retryAfterMaxSpreadSec: get('vms.limits.register-retry-after-max-spread') ?? DEFAULT_SHED_POLICY.retryAfterMaxSpreadSec,
      },
    },
    sources,
    configFile: file,
  };
  return deepFreeze(config);
}

const ms = (seconds: number): number => Math.round(seconds * 1000);
/** A duration whose absence means "never". */
const nullableMs = (seconds: number | undefined): number | null => (seconds === undefined ? null : ms(seconds));

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || /^[0:]+$/.test(host); // 0.0.0.0, ::, 0:0:...:0
}
