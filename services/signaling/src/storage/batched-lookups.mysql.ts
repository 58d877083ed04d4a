// What the MySQL stores' batched point reads share (@vms/batch, issue 11).
import { createLookupBatcher, type LookupBatcher, type LookupBatcherOptions } from '@vms/batch';
import { POOL_QUEUE_FULL } from '@vms/mysql-errors';

/** A lookup batcher whose overflow reads as the pool's own "queue full": unavailable, try later. */
export function createMysqlLookups<K, V>(o: Omit<LookupBatcherOptions<K, V>, 'queueFullCode'>): LookupBatcher<K, V> {
  return createLookupBatcher({ ...o, queueFullCode: POOL_QUEUE_FULL });
}
