/**
 * Maps mysql2 errors (read once, by @vms/mysql-errors) onto this package's catalog. Transient errors
 * must never crash anything and are retried by the caller (SPEC FAIL-4).
 */
import { classifyMysqlError, codeSuffix } from '@vms/mysql-errors';
import { ClusterError, NodeRegistryQueryError, NodeRegistryUnavailableError } from './errors.ts';

export function isTransientMysqlError(err: unknown): boolean {
  return classifyMysqlError(err) === 'unavailable';
}

export function toNodeRegistryError(err: unknown, what: string): ClusterError {
  if (err instanceof ClusterError) return err;
  if (isTransientMysqlError(err)) return new NodeRegistryUnavailableError(`${what}: MySQL unavailable${codeSuffix(err)}`, { cause: err });
  return new NodeRegistryQueryError(`${what}: MySQL rejected the statement${codeSuffix(err)}`, { cause: err });
}
