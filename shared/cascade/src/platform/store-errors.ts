/**
 * Maps mysql2 driver errors to the catalog by their stable `code` (never the message). The list
 * mirrors @vms/cluster's, which this package may not import (STYLE §5): an unreachable, restarting
 * or overloaded server, or a shed statement, is transient; anything else is a query error.
 */
import { CascadeError } from '../errors.ts';

const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_QUERY_INTERRUPTED',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
]);

/** A child row names a platform that does not exist (foreign key upstream_platform_channel → upstream_platform). */
const MISSING_PARENT_CODES = new Set(['ER_NO_REFERENCED_ROW_2', 'ER_NO_REFERENCED_ROW']);

interface DriverError {
  code?: unknown;
  fatal?: unknown;
}

export function toStoreError(err: unknown, what: string): CascadeError {
  if (err instanceof CascadeError) return err;
  const e = typeof err === 'object' && err !== null ? (err as DriverError) : {};
  const code = typeof e.code === 'string' ? e.code : undefined;
  const suffix = code === undefined ? '' : ` (${code})`;
  // a fatal driver error means the connection died, whatever the code
  if ((code !== undefined && TRANSIENT_CODES.has(code)) || e.fatal === true) {
    return new CascadeError('CASCADE_ERR_STORE_UNAVAILABLE', `${what}: MySQL unavailable${suffix}`, { cause: err });
  }
  if (code !== undefined && MISSING_PARENT_CODES.has(code)) {
    return new CascadeError('CASCADE_ERR_PLATFORM_NOT_FOUND', `${what}: no such upstream platform`, { cause: err });
  }
  return new CascadeError('CASCADE_ERR_STORE_QUERY', `${what}: MySQL rejected the statement${suffix}`, { cause: err });
}
