// @vms/cluster: cluster state stores (ownership, node table), the cascade election rule and the
// migration runner. Protocol-agnostic: must not import @vms/sip or @vms/gb28181 (STYLE §5).
export {
  ClusterErrorCodes,
  ClusterError,
  OwnershipUnavailableError,
  OwnershipCommandError,
  NodeRegistryUnavailableError,
  NodeRegistryQueryError,
  MigrationError,
  InvalidStoreUrlError,
  StoreClosedError,
  ForwardConnectError,
  ForwardTimeoutError,
  ForwardResponseError,
  isClusterError,
  isTransientClusterError,
  type ClusterErrorCode,
  type ForwardConnectFailure,
} from './errors.ts';
export { systemClock, FakeClock, type Clock, type TimerHandle } from './clock.ts';

export { ownershipTtlMs, type OwnershipStore, type OwnershipClaim, type OwnershipMove, type OwnershipTtlSettings } from './ownership.port.ts';
export { createMemoryOwnershipStore, type MemoryOwnershipOptions } from './ownership.memory.ts';
export { createRedisOwnershipStore, ownershipKey, type RedisOwnershipOptions } from './ownership.redis.ts';
export { ClaimBatcher, type ClaimBatcherOptions, type ClaimSink } from './claim-batcher.ts';
export { withClaimBatching, type ClaimBatchingOptions } from './ownership.batched.ts';
export { createRedisClient, subscriberConnection, waitForRedisReady, type RedisClient, type RedisClientOptions } from './redis-client.ts';
export { parseRedisUrl, type RedisTarget, type RedisEndpoint } from './redis-url.ts';

export { MAX_DRAIN_PERIOD_MS, type NodeInfo, type NodeRow, type NodeRegistry } from './node-table.port.ts';
export { createMemoryNodeRegistry, type MemoryNodeRegistryOptions } from './node-table.memory.ts';
export { createMysqlNodeRegistry } from './node-table.mysql.ts';
export { createMysqlPool, parseMysqlUrl, DEFAULT_MYSQL_QUEUE_LIMIT, DEFAULT_MYSQL_STATEMENT_TIMEOUT_MS, POOL_ACQUIRE_TIMEOUT, POOL_QUEUE_FULL, type MysqlPoolOptions } from './mysql-pool.ts';
export { STORE_CHANNELS, type StoreCommandEvent, type StoreConnectionErrorEvent, type StoreKind } from './store-diagnostics.ts';
export { isTransientMysqlError } from './mysql-errors.ts';
export { migrate, type MigrateOptions, type MigrationResult } from './migrate.mysql.ts';
export { retryTransient, type RetryOptions } from './retry.ts';

export { electCascadeLeader, compareCodes, type ElectionCandidate } from './election.ts';
export {
  LeadershipTracker,
  applyNodeTableRead,
  initialLeadership,
  type LeadershipEvent,
  type LeadershipStep,
  type LeadershipTrackerOptions,
  type LeadershipView,
  type NodeTableRead,
} from './leadership.ts';

// Cascade event bus (SPEC CASC-3, CASC-4): one Redis pub/sub channel, events by value, receivers decide.
export {
  CASCADE_CHANNEL,
  CASCADE_EVENT_VERSION,
  CASCADE_EVENT_KINDS,
  CASCADE_CATALOG_EVENTS,
  MAX_CASCADE_MESSAGE_BYTES,
  encodeRawRequest,
  decodeRawRequest,
  type AlarmNotifyPayload,
  type AlarmSnapshot,
  type CascadeCatalogEvent,
  type CascadeEnvelope,
  type CascadeEvent,
  type CascadeEventData,
  type CascadeEventKind,
  type CascadePayloads,
  type CatalogChannelSnapshot,
  type CatalogNotifyPayload,
  type JsonValue,
  type MobilePositionNotifyPayload,
  type PositionSnapshot,
  type UpstreamControlPayload,
  type UpstreamResponsePayload,
} from './cascade-bus/cascade-event.ts';
export { decodeCascadeEvent, encodeCascadeEvent, type CascadeDecodeFailure, type CascadeDecodeResult } from './cascade-bus/cascade-codec.ts';
export type {
  CascadeBusOptions,
  CascadeBusProblem,
  CascadeBusStats,
  CascadeEventBus,
  CascadeEventHandler,
} from './cascade-bus/cascade-bus.port.ts';
export { createMemoryCascadeBus, createMemoryCascadeHub, type MemoryCascadeBusOptions, type MemoryCascadeHub } from './cascade-bus/cascade-bus.memory.ts';
export { createRedisCascadeBus, type RedisCascadeBusOptions, type RedisCascadeEventBus } from './cascade-bus/cascade-bus.redis.ts';
export {
  routeCascadeAction,
  receivedAction,
  type CascadeAction,
  type CascadeRoute,
  type CascadeRouteContext,
  type CascadeRouteStage,
} from './cascade-bus/cascade-route.ts';

export { FORWARD_HEADERS, MAX_FORWARD_CONNECT_TIMEOUT_MS, forwardSecretMatches, createForwardSecretCheck } from './forward/forward-protocol.ts';
export {
  createForwardClient,
  type ForwardClient,
  type ForwardClientOptions,
  type ForwardRequest,
  type ForwardResponse,
  type ForwardTarget,
} from './forward/forward-client.ts';
