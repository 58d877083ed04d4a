export {
  createLookupBatcher,
  LookupQueueFullError,
  DEFAULT_LOOKUP_BATCH,
  DEFAULT_LOOKUP_BATCHES_IN_FLIGHT,
  DEFAULT_LOOKUPS_QUEUED,
  type LookupBatcher,
  type LookupBatcherOptions,
} from './lookup-batcher.ts';
export { batchableDeviceId } from './device-keys.ts';
