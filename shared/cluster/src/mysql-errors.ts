/**
 * Maps mysql2 errors to the catalog by their stable `code` (never the message). Transient: the
 * server is unreachable, restarting, overloaded, or shed the statement (deadlock, lock wait) —
 * SPEC FAIL-4 says those must never crash anything and are retried by the caller. Everything else
 * (missing table, bad grant, syntax) is a query error.
 */
import { ClusterError, NodeRegistryQueryError, NodeRegistryUnavailableError } from './errors.ts';

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
  'ER_CANT_CONNECT_TO_SERVER', // unused by mysql2 today, kept for drivers that report it
]);

interface DriverError {
  code?: unknown;
  fatal?: unknown;
}

export function isTransientMysqlError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as DriverError;
  // a fatal driver error means the connection died, whatever the code
  return (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)) || e.fatal === true;
}

export function toNodeRegistryError(err: unknown, what: string): ClusterError {
  if (err instanceof ClusterError) return err;
  const code = typeof err === 'object' && err !== null ? (err as DriverError).code : undefined;
  const suffix = typeof code === 'string' ? ` (${code})` : '';
  if (isTransientMysqlError(err)) return new NodeRegistryUnavailableError(`${what}: MySQL unavailable${suffix}`, { cause: err });
  return new NodeRegistryQueryError(`${what}: MySQL rejected the statement${suffix}`, { cause: err });
}
