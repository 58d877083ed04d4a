/**
 * One reading of mysql2 driver errors for every store in the platform, by their stable `code` (never
 * the message). Each package maps the kind onto its own error catalog (STYLE §2).
 *  - 'unavailable': the server is unreachable, restarting, overloaded, or shed the statement (deadlock,
 *    lock wait); callers may retry, and nothing may crash on it (SPEC FAIL-4).
 *  - 'missing-parent': a foreign key names a row that does not exist.
 *  - 'query': anything else (missing table, bad grant, syntax).
 */
/** Codes of the bounded pool's own errors (see TRANSIENT_CODES). */
export const POOL_ACQUIRE_TIMEOUT = 'VMS_MYSQL_ACQUIRE_TIMEOUT';
export const POOL_QUEUE_FULL = 'VMS_MYSQL_QUEUE_FULL';

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
  // Raised by @vms/cluster's bounded pool (createMysqlPool), not by mysql2: no connection came free
  // within the statement's deadline, or too many statements already wait for one (SPEC SEC-3).
  POOL_ACQUIRE_TIMEOUT,
  POOL_QUEUE_FULL,
]);

const MISSING_PARENT_CODES = new Set(['ER_NO_REFERENCED_ROW_2', 'ER_NO_REFERENCED_ROW']);

export type MysqlErrorKind = 'unavailable' | 'missing-parent' | 'query';

interface DriverError {
  code?: unknown;
  fatal?: unknown;
}

/** The driver's error code, when it has one. */
export function mysqlErrorCode(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as DriverError).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

export function classifyMysqlError(err: unknown): MysqlErrorKind {
  const code = mysqlErrorCode(err);
  // a fatal driver error means the connection died, whatever the code
  const fatal = typeof err === 'object' && err !== null && (err as DriverError).fatal === true;
  if ((code !== undefined && TRANSIENT_CODES.has(code)) || fatal) return 'unavailable';
  if (code !== undefined && MISSING_PARENT_CODES.has(code)) return 'missing-parent';
  return 'query';
}

/** Suffix for error messages: ` (CODE)` or nothing. */
export const codeSuffix = (err: unknown): string => {
  const code = mysqlErrorCode(err);
  return code === undefined ? '' : ` (${code})`;
};
