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
  isClusterError,
  isTransientClusterError,
  type ClusterErrorCode,
} from './errors.ts';
export { systemClock, FakeClock, type Clock, type TimerHandle } from './clock.ts';

export { ownershipTtlMs, type OwnershipStore, type OwnershipClaim, type OwnershipTtlSettings } from './ownership.port.ts';
export { createMemoryOwnershipStore, type MemoryOwnershipOptions } from './ownership.memory.ts';
export { createRedisOwnershipStore, ownershipKey, type RedisOwnershipOptions } from './ownership.redis.ts';
export { ClaimBatcher, type ClaimBatcherOptions, type ClaimSink } from './claim-batcher.ts';
export { withClaimBatching, type ClaimBatchingOptions } from './ownership.batched.ts';
export { createRedisClient, waitForRedisReady, type RedisClient, type RedisClientOptions } from './redis-client.ts';
export { parseRedisUrl, type RedisTarget, type RedisEndpoint } from './redis-url.ts';

export type { NodeInfo, NodeRow, NodeRegistry } from './node-table.port.ts';
export { createMemoryNodeRegistry, type MemoryNodeRegistryOptions } from './node-table.memory.ts';
export { createMysqlNodeRegistry } from './node-table.mysql.ts';
export { createMysqlPool, parseMysqlUrl, type MysqlPoolOptions } from './mysql-pool.ts';
export { isTransientMysqlError } from './mysql-errors.ts';
export { migrate, type MigrateOptions, type MigrationResult } from './migrate.mysql.ts';
export { retryTransient, type RetryOptions } from './retry.ts';

export { electCascadeLeader, compareCodes, type ElectionCandidate } from './election.ts';
