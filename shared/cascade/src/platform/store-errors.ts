/** Maps mysql2 driver errors (read once, by @vms/mysql-errors) onto this package's catalog. */
import { classifyMysqlError, codeSuffix } from '@vms/mysql-errors';
import { CascadeError } from '../errors.ts';

export function toStoreError(err: unknown, what: string): CascadeError {
  if (err instanceof CascadeError) return err;
  switch (classifyMysqlError(err)) {
    case 'unavailable':
      return new CascadeError('CASCADE_ERR_STORE_UNAVAILABLE', `${what}: MySQL unavailable${codeSuffix(err)}`, { cause: err });
    case 'missing-parent': // foreign key upstream_platform_channel → upstream_platform
      return new CascadeError('CASCADE_ERR_PLATFORM_NOT_FOUND', `${what}: no such upstream platform`, { cause: err });
    case 'query':
      return new CascadeError('CASCADE_ERR_STORE_QUERY', `${what}: MySQL rejected the statement${codeSuffix(err)}`, { cause: err });
  }
}
