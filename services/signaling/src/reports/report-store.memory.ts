// ReportStore in memory (standalone and embedded-store instances): bounded histories per device and
// in total (bounded-history.ts). Lost on restart, like the owner's view of its devices' sessions.
import type { PageRequest } from '../devices/device.types.ts';
import { pageOf } from '../devices/paging.ts';
import { BoundedHistory } from './bounded-history.ts';
import {
  DEFAULT_REPORT_BOUNDS,
  NO_SUBSCRIPTIONS,
  type AlarmRecord,
  type PositionRecord,
  type ReportBounds,
  type ReportStore,
  type SubscriptionSettings,
} from './report-store.port.ts';

const inRange = (at: number, from: number | undefined, to: number | undefined): boolean => (from === undefined || at >= from) && (to === undefined || at <= to);

export function createMemoryReportStore(bounds: Partial<ReportBounds> = {}): ReportStore {
  const b = { ...DEFAULT_REPORT_BOUNDS, ...bounds };
  const alarms = new BoundedHistory<AlarmRecord>(b.alarmsPerDevice, b.alarmsTotal);
  const positions = new BoundedHistory<PositionRecord>(b.positionsPerDevice, b.positionsTotal);
  const settings = new Map<string, SubscriptionSettings>();
  let nextId = 1;
  return {
    async addAlarm(input) {
      const record: AlarmRecord = { ...input, id: nextId++ };
      alarms.add(input.deviceId, record);
      return record;
    },
    async listAlarms(q, page: PageRequest) {
      const hits = alarms
        .list(q.deviceId)
        .filter(
          (a) =>
            inRange(a.receivedAt, q.from, q.to) &&
            (q.method === undefined || a.method === q.method) &&
            (q.type === undefined || a.type === q.type) &&
            (q.priority === undefined || a.priority === q.priority),
        )
        .reverse();
      return pageOf(hits, page);
    },
    async addPosition(p) {
      positions.add(p.deviceId, p);
    },
    async latestPosition(deviceId) {
      return positions.latest(deviceId) ?? null;
    },
    async track(q, page) {
      return pageOf(
        positions.list(q.deviceId).filter((p) => inRange(p.receivedAt, q.from, q.to)),
        page,
      );
    },
    async subscriptionSettings(deviceId) {
      return settings.get(deviceId) ?? NO_SUBSCRIPTIONS;
    },
    async saveSubscriptionSettings(deviceId, s) {
      settings.delete(deviceId);
      settings.set(deviceId, s);
      // oldest-written first out (Map keeps insertion order)
      while (settings.size > b.settingsTotal) settings.delete(settings.keys().next().value as string);
    },
    async close() {},
  } satisfies ReportStore;
}
