/**
 * The error catalog of @vms/cluster (STYLE §2). Callers branch on `code` (or the class), never on
 * `message`. `transient` says whether trying again later can succeed (store down, lock timeout) as
 * opposed to a bug or misconfiguration; retry helpers only retry transient errors (SPEC FAIL-3/4).
 */
export const ClusterErrorCodes = {
  REDIS_UNAVAILABLE: 'CLUSTER_ERR_REDIS_UNAVAILABLE',
  REDIS_COMMAND: 'CLUSTER_ERR_REDIS_COMMAND',
  MYSQL_UNAVAILABLE: 'CLUSTER_ERR_MYSQL_UNAVAILABLE',
  MYSQL_QUERY: 'CLUSTER_ERR_MYSQL_QUERY',
  MIGRATION: 'CLUSTER_ERR_MIGRATION',
  BAD_URL: 'CLUSTER_ERR_BAD_URL',
  CLOSED: 'CLUSTER_ERR_CLOSED',
  FORWARD_CONNECT: 'CLUSTER_ERR_FORWARD_CONNECT',
  FORWARD_TIMEOUT: 'CLUSTER_ERR_FORWARD_TIMEOUT',
  FORWARD_RESPONSE: 'CLUSTER_ERR_FORWARD_RESPONSE',
} as const;

export type ClusterErrorCode = (typeof ClusterErrorCodes)[keyof typeof ClusterErrorCodes];

export abstract class ClusterError extends Error {
  abstract readonly code: ClusterErrorCode;
  abstract readonly transient: boolean;
}

/** Redis could not be reached in time (down, hung, reconnecting, cluster not ready). SPEC FAIL-3. */
export class OwnershipUnavailableError extends ClusterError {
  readonly code = ClusterErrorCodes.REDIS_UNAVAILABLE;
  readonly transient = true;
  override readonly name = 'OwnershipUnavailableError';
}

/** Redis answered with an error that retrying will not fix (e.g. WRONGTYPE on a foreign key). */
export class OwnershipCommandError extends ClusterError {
  readonly code = ClusterErrorCodes.REDIS_COMMAND;
  readonly transient = false;
  override readonly name = 'OwnershipCommandError';
}

/** MySQL could not be reached or shed the query (connection lost, deadlock, too many connections). SPEC FAIL-4. */
export class NodeRegistryUnavailableError extends ClusterError {
  readonly code = ClusterErrorCodes.MYSQL_UNAVAILABLE;
  readonly transient = true;
  override readonly name = 'NodeRegistryUnavailableError';
}

/** MySQL rejected the statement for a reason retrying will not fix (missing table, bad grant). */
export class NodeRegistryQueryError extends ClusterError {
  readonly code = ClusterErrorCodes.MYSQL_QUERY;
  readonly transient = false;
  override readonly name = 'NodeRegistryQueryError';
}

/** A migration file is malformed, duplicated, changed after being applied, or failed to apply. */
export class MigrationError extends ClusterError {
  readonly code = ClusterErrorCodes.MIGRATION;
  readonly transient = false;
  override readonly name = 'MigrationError';
}

/** A store URL (REDIS_URL, MYSQL_URL) that cannot be understood. */
export class InvalidStoreUrlError extends ClusterError {
  readonly code = ClusterErrorCodes.BAD_URL;
  readonly transient = false;
  override readonly name = 'InvalidStoreUrlError';
}

/** The store, batcher or forward client was closed; pending and later calls reject with this. */
export class StoreClosedError extends ClusterError {
  readonly code = ClusterErrorCodes.CLOSED;
  readonly transient = false;
  override readonly name = 'StoreClosedError';
}

/**
 * SPEC ROUTE-5, connect phase of an instance-to-instance forward. `refused`: nothing listens at the
 * owner's internal address (the process is gone); `timeout`: no TCP handshake within the (short)
 * connect timeout; `unreachable`: no route, DNS failure, reset during the handshake.
 */
export type ForwardConnectFailure = 'refused' | 'timeout' | 'unreachable';

export class ForwardConnectError extends ClusterError {
  readonly code = ClusterErrorCodes.FORWARD_CONNECT;
  readonly transient = true;
  override readonly name = 'ForwardConnectError';
  constructor(
    readonly target: string,
    readonly reason: ForwardConnectFailure,
    options?: { cause?: unknown },
  ) {
    super(`forward to ${target}: connect failed (${reason})`, options);
  }
}

/** SPEC ROUTE-5, read phase: the owner accepted the connection but sent no headers / stalled in the body. */
export class ForwardTimeoutError extends ClusterError {
  readonly code = ClusterErrorCodes.FORWARD_TIMEOUT;
  readonly transient = true;
  override readonly name = 'ForwardTimeoutError';
  constructor(
    readonly target: string,
    readonly phase: 'headers' | 'body',
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(`forward to ${target}: no ${phase} within ${timeoutMs} ms`, options);
  }
}

/** The connection broke after it was established (reset, closed mid-response, malformed or oversized answer). */
export class ForwardResponseError extends ClusterError {
  readonly code = ClusterErrorCodes.FORWARD_RESPONSE;
  readonly transient = true;
  override readonly name = 'ForwardResponseError';
  constructor(
    readonly target: string,
    options?: { cause?: unknown },
  ) {
    super(`forward to ${target}: connection failed during the exchange`, options);
  }
}

export function isClusterError(err: unknown): err is ClusterError {
  return err instanceof ClusterError;
}

/** True for errors worth retrying later: our transient classes only. */
export function isTransientClusterError(err: unknown): boolean {
  return err instanceof ClusterError && err.transient;
}
