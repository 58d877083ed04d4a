// The SPEC SEC-3 bounds of the configuration, in the shapes of the modules that enforce them.
import type { MysqlPoolOptions } from '@vms/cluster';
import type { HttpLimits } from '../http/http-server.ts';
import type { DeviceLimits } from '../sip/device-admission.ts';
import type { LimitSettings } from './config.types.ts';

export const httpLimits = (l: LimitSettings): HttpLimits => ({
  headersTimeoutMs: l.httpHeadersTimeoutMs,
  requestTimeoutMs: l.httpRequestTimeoutMs,
  keepAliveTimeoutMs: l.httpKeepAliveTimeoutMs,
  idleTimeoutMs: l.httpIdleTimeoutMs,
  maxConnections: l.httpMaxConnections,
  maxConnectionsPerIp: l.httpConnectionsPerIp,
  bodyLimit: l.httpBodyLimit,
  webhookBodyLimit: l.httpWebhookBodyLimit,
});

export const mysqlPoolLimits = (l: LimitSettings): Pick<MysqlPoolOptions, 'statementTimeoutMs' | 'queueLimit'> => ({
  statementTimeoutMs: l.mysqlStatementTimeoutMs,
  queueLimit: l.mysqlQueueLimit,
});

export const deviceLimits = (l: LimitSettings): DeviceLimits => ({
  maxChannelsPerDevice: l.deviceMaxChannels,
  messageRatePerSec: l.deviceMessageRatePerSec,
  messageBurst: l.deviceMessageBurst,
  edgeAddresses: l.edgeAddresses,
  unboundRatePerSec: l.unboundMessageRatePerSec,
  unboundBurst: l.unboundMessageBurst,
  largeBodyDecodeThreads: l.largeBodyDecodeThreads,
  largeBodyDecodeQueue: l.largeBodyDecodeQueue,
});

/** The `limits` of @vms/sip's stack options. */
export const sipStackLimits = (l: LimitSettings) => ({
  maxMessageBytes: l.sipMaxMessageBytes,
  maxTcpConnections: l.sipTcpMaxConnections,
  maxTcpConnectionsPerIp: l.sipTcpConnectionsPerIp,
  tcpIdleTimeoutMs: l.sipTcpIdleTimeoutMs,
  tcpMessageTimeoutMs: l.sipTcpMessageTimeoutMs,
});
