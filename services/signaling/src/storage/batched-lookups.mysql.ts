// What the MySQL stores' batched point reads share (@vms/batch, issue 11).
import { createLookupBatcher, type LookupBatcher, type LookupBatcherOptions } from '@vms/batch';
import { POOL_QUEUE_FULL } from '@vms/mysql-errors';

/**
 * Whether a batch may carry this id. A batch's rows are matched to the asked ids by string equality, but
 * `device_id = ?` matches by the column's collation: case-insensitively for gb_device, and ignoring
 * trailing spaces for every PAD SPACE collation. A digits-only id (every GB/T 28181 id) reads the same
 * either way; any other one is read alone, by the single-id statement, as before.
 */
export const batchableId = (id: string): boolean => /^[0-9]{1,64}$/.test(id);

/** A lookup batcher whose overflow reads as the pool's own "queue full": unavailable, try later. */
export function createMysqlLookups<K, V>(o: Omit<LookupBatcherOptions<K, V>, 'queueFullCode'>): LookupBatcher<K, V> {
  return createLookupBatcher({ ...o, queueFullCode: POOL_QUEUE_FULL });
}
