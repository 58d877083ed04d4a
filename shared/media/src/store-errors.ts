/** Maps mysql2 driver errors (read once, by @vms/mysql-errors) onto this package's catalog. */
import { classifyMysqlError, codeSuffix } from '@vms/mysql-errors';
import { MediaError } from './errors.ts';

export function toStoreError(err: unknown, what: string): MediaError {
  if (err instanceof MediaError) return err;
  if (classifyMysqlError(err) === 'unavailable') {
    return new MediaError('MEDIA_ERR_STORE_UNAVAILABLE', `${what}: MySQL unavailable${codeSuffix(err)}`, { cause: err });
  }
  return new MediaError('MEDIA_ERR_STORE_QUERY', `${what}: MySQL rejected the statement${codeSuffix(err)}`, { cause: err });
}
