// The ReportStore contract: memory (standalone) and MySQL (cluster, V008) answer alike. Bounds are
// exact here: the MySQL store is opened to trim on every write.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AlarmInput, ReportBounds, ReportStore } from '../../src/reports/report-store.port.ts';

export const DEV = '34020000001320000001';
const DEV2 = '34020000001320000002';

export const alarm = (deviceId: string, receivedAt: number, extra: Partial<AlarmInput> = {}): AlarmInput => ({
  deviceId,
  sourceId: deviceId,
  receivedAt,
  priority: '1',
  method: '2',
  type: null,
  alarmTime: null,
  description: null,
  longitude: null,
  latitude: null,
  via: 'message',
  ...extra,
});

export type OpenStore = (bounds?: Partial<ReportBounds>) => Promise<{ store: ReportStore; dispose: () => Promise<void> }>;

export function reportStoreContract(name: string, open: OpenStore): void {
  const using = async (bounds: Partial<ReportBounds> | undefined, body: (s: ReportStore) => Promise<void>): Promise<void> => {
    const { store, dispose } = await open(bounds);
    try {
      await body(store);
    } finally {
      await dispose();
    }
  };

  describe(`report store contract: ${name}`, () => {
    it('lists alarms newest first, filtered by time range, method and type, paged', () =>
      using(undefined, async (s) => {
        for (let i = 0; i < 10; i++) await s.addAlarm(alarm(DEV, 1000 + i, { method: i % 2 === 0 ? '2' : '5', type: i % 2 === 0 ? null : '1', description: `a${i}` }));
        await s.addAlarm(alarm(DEV2, 1005));
        const all = await s.listAlarms({ deviceId: DEV }, { page: 1, size: 3 });
        assert.equal(all.total, 10);
        assert.deepEqual(all.items.map((a) => a.receivedAt), [1009, 1008, 1007]);
        assert.equal(all.items[0]?.description, 'a9');
        const video = await s.listAlarms({ deviceId: DEV, method: '5', from: 1002, to: 1007 }, { page: 1, size: 20 });
        assert.deepEqual(video.items.map((a) => a.receivedAt), [1007, 1005, 1003]);
        assert.equal((await s.listAlarms({ deviceId: DEV, type: '1' }, { page: 2, size: 4 })).items.length, 1);
        assert.equal((await s.listAlarms({ deviceId: DEV, priority: '3' }, { page: 1, size: 4 })).total, 0);
      }));

    it('bounds alarms per device and in total, the oldest dropped first', () =>
      using({ alarmsPerDevice: 5, alarmsTotal: 8 }, async (s) => {
        for (let i = 0; i < 20; i++) await s.addAlarm(alarm(DEV, i));
        for (let i = 0; i < 4; i++) await s.addAlarm(alarm(DEV2, 100 + i));
        assert.deepEqual((await s.listAlarms({ deviceId: DEV }, { page: 1, size: 100 })).items.map((a) => a.receivedAt), [19, 18, 17, 16]);
        assert.equal((await s.listAlarms({ deviceId: DEV2 }, { page: 1, size: 100 })).total, 4);
      }));

    it('keeps a bounded track oldest first and the latest position, coordinates as sent', () =>
      using({ positionsPerDevice: 3 }, async (s) => {
        assert.equal(await s.latestPosition(DEV), null);
        for (let i = 0; i < 5; i++) {
          await s.addPosition({ deviceId: DEV, sourceId: DEV, receivedAt: 5000 + i, time: '2026-12-01T10:00:00', longitude: `116.39700${i}`, latitude: '39.908000', speed: '10.0', direction: null, altitude: null });
        }
        const latest = await s.latestPosition(DEV);
        assert.deepEqual([latest?.longitude, latest?.latitude, latest?.speed, latest?.direction], ['116.397004', '39.908000', '10.0', null]);
        assert.deepEqual((await s.track({ deviceId: DEV }, { page: 1, size: 10 })).items.map((p) => p.receivedAt), [5002, 5003, 5004]);
        assert.deepEqual((await s.track({ deviceId: DEV, from: 5003 }, { page: 1, size: 10 })).items.map((p) => p.receivedAt), [5003, 5004]);
      }));

    it('keeps subscription settings per device, none by default', () =>
      using(undefined, async (s) => {
        assert.deepEqual(await s.subscriptionSettings(DEV), { catalog: false, alarm: false, mobileposition: false, intervalS: 5 });
        await s.saveSubscriptionSettings(DEV, { catalog: true, alarm: false, mobileposition: true, intervalS: 2 });
        await s.saveSubscriptionSettings(DEV, { catalog: true, alarm: true, mobileposition: true, intervalS: 3 });
        assert.deepEqual(await s.subscriptionSettings(DEV), { catalog: true, alarm: true, mobileposition: true, intervalS: 3 });
        assert.equal((await s.subscriptionSettings(DEV2)).catalog, false);
      }));
  });
}
