// RecordInfo results kept by the SN handed to the operator (SPEC §12 `GET /vms/record/result?sn=`),
// for a fixed time after the query was sent. Entries are kept in creation order, which is also expiry
// order, so sweeping stops at the first live entry.
import type { RecordQueryResult } from '../control/device-control.port.ts';
import { RecordQueryNotFoundError } from '../errors/catalog.ts';

/** How long a record query's result can be fetched after the query was sent. */
export const RECORD_RESULT_TTL_MS = 30 * 60_000;

export interface RecordResults {
  put(result: RecordQueryResult, now: number): void;
  /** Replaces a kept result (no-op once expired). */
  update(sn: string, patch: Partial<Omit<RecordQueryResult, 'sn' | 'deviceId' | 'channelId'>>): void;
  /** Throws RecordQueryNotFoundError for an unknown or expired SN. */
  get(sn: string, now: number): RecordQueryResult;
  readonly size: number;
}

export function createRecordResults(ttlMs: number = RECORD_RESULT_TTL_MS): RecordResults {
  const entries = new Map<string, { result: RecordQueryResult; expiresAt: number }>();
  const sweep = (now: number): void => {
    for (const [sn, e] of entries) {
      if (e.expiresAt > now) break;
      entries.delete(sn);
    }
  };
  return {
    put(result, now) {
      sweep(now);
      entries.set(result.sn, { result: Object.freeze({ ...result }), expiresAt: now + ttlMs });
    },
    update(sn, patch) {
      const e = entries.get(sn);
      if (e !== undefined) e.result = Object.freeze({ ...e.result, ...patch });
    },
    get(sn, now) {
      sweep(now);
      const e = entries.get(sn);
      if (e === undefined) throw new RecordQueryNotFoundError(sn);
      return e.result;
    },
    get size() {
      return entries.size;
    },
  };
}
