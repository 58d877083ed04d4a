// One RecordInfo query's answer (GB/T 28181-2016 §9.7, §A.2.6): paged like Catalog (`SumNum` total,
// `RecordList Num` per MESSAGE) and matched by SN only — the Response's DeviceID may be the device
// rather than the queried channel, and items may name other channels (sample 10). Identical items
// (a resent page) count once. Pure: no I/O, no clock.
import type { RecordInfoResponse, RecordItem as GbRecordItem } from '@vms/gb28181';
import type { RecordItem } from '../control/device-control.port.ts';
import type { Assembly } from './pending-queries.ts';

export interface RecordAnswer {
  readonly complete: boolean;
  readonly total: number | null;
  readonly items: readonly RecordItem[];
}

export interface RecordAssembly extends Assembly<RecordInfoResponse, RecordAnswer> {
  /** The answer so far, readable while MESSAGEs are still awaited. */
  snapshot(): RecordAnswer;
}

const text = (v: string | undefined): string | null => {
  const t = v?.trim();
  return t === undefined || t === '' ? null : t;
};

const integer = (v: string | undefined): number | null => {
  const t = text(v);
  if (t === null || !/^\d{1,15}$/.test(t)) return null;
  return Number(t);
};

export function recordItemOf(item: GbRecordItem): RecordItem {
  return {
    deviceId: item.deviceId,
    name: text(item.name),
    filePath: text(item.filePath),
    address: text(item.address),
    startTime: item.startTime?.trim() ?? '',
    endTime: item.endTime?.trim() ?? '',
    secrecy: integer(item.secrecy),
    type: text(item.type),
    recorderId: text(item.recorderId),
    fileSize: integer(item.fileSize),
  };
}

const itemKey = (i: RecordItem): string =>
  [i.deviceId, i.startTime, i.endTime, i.filePath, i.name, i.type, i.recorderId, i.fileSize, i.address, i.secrecy].join('\u0000');

export function createRecordAssembly(): RecordAssembly {
  const items = new Map<string, RecordItem>();
  let total: number | null = null;
  let pages = 0;
  const answer = (complete: boolean): RecordAnswer => ({ complete, total, items: [...items.values()] });
  const isComplete = (): boolean => total !== null && items.size >= total;
  return {
    add(response) {
      pages++;
      total ??= response.sumNum;
      for (const raw of response.items) {
        const item = recordItemOf(raw);
        items.set(itemKey(item), item);
      }
      return isComplete();
    },
    partial: () => (pages > 0 ? answer(false) : undefined),
    result: () => answer(true),
    snapshot: () => answer(isComplete()),
  };
}
