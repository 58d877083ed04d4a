// The edge's settings, read and validated once from the environment (a bad value names its variable; every
// problem at once). Documented in README.md.
import { compilePlacementRules, type PlacementRule } from '@vms/routing';
import { DEFAULT_SHED_POLICY, shedBufferHidesMark, type ShedPolicy } from '@vms/sip';
import { DEFAULT_MAX_FLOW_DEVICES } from './flow-devices.ts';

export interface EdgeConfig {
  readonly code: string;
  readonly bindHost: string;
  readonly host: string;
  readonly port: number;
  readonly flowSecret: Buffer;
  readonly mysqlUrl: string;
  readonly onlineWindowMs: number;
  readonly pollMs: number;
  readonly rules: readonly PlacementRule[];
  readonly maxRequestsPerSec: number;
  readonly perAddressRequestsPerSec: number;
  /** Flows whose device is remembered (flow-devices.ts): INVITE placement, and refreshes never shed. */
  readonly maxFlowDevices: number;
  /** How the edge reaches shards; over TCP with these bounds (shard-links.ts). */
  readonly shardTransport: 'udp' | 'tcp';
  readonly shardLinks: { readonly connections: number; readonly maxQueued: number; readonly backoffMaxMs: number };
  /** Marks of the overload control (overload.ts): when new REGISTERs are answered 503. */
  readonly shedPolicy: ShedPolicy;
  readonly metricsHost: string;
  /** 0 = no metrics endpoint. */
  readonly metricsPort: number;
  readonly logLevel: string;
}

export class EdgeConfigError extends Error {
  readonly code = 'EDGE_ERR_CONFIG';
  constructor(readonly issues: readonly string[]) {
    super(`bad sip-edge settings: ${issues.join('; ')}`);
  }
}

export function loadEdgeConfig(env: Readonly<Record<string, string | undefined>>): EdgeConfig {
  const issues: string[] = [];
  const str = (name: string, def?: string): string => {
    const v = env[name]?.trim();
    if (v !== undefined && v !== '') return v;
    if (def === undefined) issues.push(`${name}: required`);
    return def ?? '';
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      issues.push(`${name}: integer ${min}-${max} expected, got ${JSON.stringify(raw)}`);
      return def;
    }
    return n;
  };
  const host = str('VMS_EDGE_HOST', '127.0.0.1');
  const port = int('VMS_EDGE_PORT', 5060, 0, 65535);
  const secret = str('VMS_EDGE_FLOW_SECRET');
  if (secret !== '' && Buffer.byteLength(secret) < 16) issues.push('VMS_EDGE_FLOW_SECRET: at least 16 bytes (the same on every edge)');
  const code = str('VMS_EDGE_CODE', `edge-${host}:${port}`);
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(code)) issues.push('VMS_EDGE_CODE: 1-64 of A-Z a-z 0-9 . _ : -');
  const heartbeatS = int('VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL', 5, 1, 3600);
  let rules: PlacementRule[] = [];
  const rawRules = env['VMS_PLACEMENT_RULES']?.trim() ?? '';
  if (rawRules !== '') {
    rules = rawRules.split(',').map((p) => {
      const [prefix = '', group = ''] = p.trim().split('=');
      return { prefix, group };
    });
    try {
      compilePlacementRules(rules);
    } catch (err) {
      issues.push(`VMS_PLACEMENT_RULES: ${(err as Error).message}`);
    }
  }
  const shardTransport = str('VMS_EDGE_SHARD_TRANSPORT', 'udp').toLowerCase();
  if (shardTransport !== 'udp' && shardTransport !== 'tcp') issues.push(`VMS_EDGE_SHARD_TRANSPORT: udp or tcp expected, got ${JSON.stringify(shardTransport)}`);
  // The overload control's marks (overload.ts; the shards' vms.limits.register-shed-*): each a band, the
  // shed share rising over the high mark and falling under the low one.
  const d = DEFAULT_SHED_POLICY;
  const queueHigh = int('VMS_EDGE_SHED_QUEUE_HIGH', d.highQueueBytes, 1024, 1 << 30);
  const queueLow = int('VMS_EDGE_SHED_QUEUE_LOW', d.lowQueueBytes, 0, 1 << 30);
  if (queueLow >= queueHigh) issues.push(`VMS_EDGE_SHED_QUEUE_LOW: must be below VMS_EDGE_SHED_QUEUE_HIGH (${queueLow} >= ${queueHigh})`);
  const utilizationHigh = int('VMS_EDGE_SHED_UTILIZATION_HIGH', d.highUtilization * 100, 1, 100);
  const utilizationLow = int('VMS_EDGE_SHED_UTILIZATION_LOW', d.lowUtilization * 100, 0, 100);
  if (utilizationLow >= utilizationHigh) issues.push(`VMS_EDGE_SHED_UTILIZATION_LOW: must be below VMS_EDGE_SHED_UTILIZATION_HIGH (${utilizationLow} >= ${utilizationHigh})`);
  const shedPolicy: ShedPolicy = {
    ...d,
    highQueueBytes: queueHigh,
    lowQueueBytes: queueLow,
    highUtilization: utilizationHigh / 100,
    lowUtilization: utilizationLow / 100,
    maxFraction: int('VMS_EDGE_SHED_MAX_SHARE', d.maxFraction * 100, 1, 99) / 100,
    sheddingReceiveBufferBytes: int('VMS_EDGE_SHED_RECEIVE_BUFFER', d.sheddingReceiveBufferBytes, 64 * 1024, 1 << 30),
    retryAfterMinSec: int('VMS_EDGE_SHED_RETRY_AFTER', d.retryAfterMinSec, 1, 3600),
    retryAfterSpreadSec: int('VMS_EDGE_SHED_RETRY_AFTER_SPREAD', d.retryAfterSpreadSec, 0, 3600),
    retryAfterMaxSpreadSec: int('VMS_EDGE_SHED_RETRY_AFTER_MAX_SPREAD', d.retryAfterMaxSpreadSec, 0, 86_400),
  };
  if (shedBufferHidesMark(shedPolicy)) {
    issues.push(`VMS_EDGE_SHED_RECEIVE_BUFFER: twice it (the kernel's accounting) must exceed VMS_EDGE_SHED_QUEUE_HIGH (2 × ${shedPolicy.sheddingReceiveBufferBytes} <= ${shedPolicy.highQueueBytes}): while shedding the queue could never pass the mark`);
  }
  if (shedPolicy.retryAfterMaxSpreadSec < shedPolicy.retryAfterSpreadSec) {
    issues.push(`VMS_EDGE_SHED_RETRY_AFTER_MAX_SPREAD: must not be below VMS_EDGE_SHED_RETRY_AFTER_SPREAD (${shedPolicy.retryAfterMaxSpreadSec} < ${shedPolicy.retryAfterSpreadSec})`);
  }
  const config: EdgeConfig = {
    code,
    bindHost: str('VMS_EDGE_BIND_HOST', '0.0.0.0'),
    host,
    port,
    flowSecret: Buffer.from(secret),
    mysqlUrl: str('MYSQL_URL'),
    // the signaling instances' own rule (SPEC NODE-1): online while the last heartbeat is at most 3 beats old
    onlineWindowMs: heartbeatS * 3000,
    pollMs: int('VMS_EDGE_NODE_POLL_MS', 1000, 100, 60_000),
    rules,
    maxRequestsPerSec: int('VMS_EDGE_MAX_REQUESTS_PER_SEC', 20_000, 1, 10_000_000),
    perAddressRequestsPerSec: int('VMS_EDGE_PER_ADDRESS_REQUESTS_PER_SEC', 200, 1, 10_000_000),
    maxFlowDevices: int('VMS_EDGE_MAX_FLOW_DEVICES', DEFAULT_MAX_FLOW_DEVICES, 1, 10_000_000),
    shardTransport: shardTransport === 'tcp' ? 'tcp' : 'udp',
    shardLinks: {
      connections: int('VMS_EDGE_SHARD_TCP_CONNECTIONS', 2, 1, 64),
      maxQueued: int('VMS_EDGE_SHARD_TCP_MAX_QUEUED', 1000, 1, 1_000_000),
      backoffMaxMs: int('VMS_EDGE_SHARD_TCP_BACKOFF_MAX_MS', 5000, 100, 600_000),
    },
    shedPolicy,
    metricsHost: str('VMS_EDGE_METRICS_HOST', '0.0.0.0'),
    metricsPort: int('VMS_EDGE_METRICS_PORT', 9091, 0, 65535),
    logLevel: str('LOG_LEVEL', 'info'),
  };
  if (issues.length > 0) throw new EdgeConfigError(issues);
  return Object.freeze(config);
}
