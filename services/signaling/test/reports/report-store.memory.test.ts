import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedHistory } from '../../src/reports/bounded-history.ts';
import { createMemoryReportStore } from '../../src/reports/report-store.memory.ts';
import type { AlarmInput } from '../../src/reports/report-store.port.ts';

const DEV = '34020000001320000001';
const alarm = (deviceId: string, receivedAt: number, extra: Partial<AlarmInput> = {}): AlarmInput => ({
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

describe('BoundedHistory (SPEC SEC-3: per key and in total)', () => {
  it('drops a key’s oldest when the key is full', () => {
    const h = new BoundedHistory<number>(3, 100);
    for (let i = 1; i <= 5; i++) h.add('a', i);
    assert.deepEqual(h.list('a'), [3, 4, 5]);
    assert.equal(h.size, 3);
  });

  it('drops the oldest overall when the total is full, whichever key holds it', () => {
    const h = new BoundedHistory<string>(10, 4);
    h.add('a', 'a1');
    h.add('b', 'b1');
    h.add('a', 'a2');
    h.add('b', 'b2');
    h.add('c', 'c1');
    assert.deepEqual([h.list('a'), h.list('b'), h.list('c')], [['a2'], ['b1', 'b2'], ['c1']]);
    h.add('c', 'c2');
    assert.deepEqual([h.list('a'), h.list('b'), h.list('c')], [['a2'], ['b2'], ['c1', 'c2']]);
    assert.equal(h.size, 4);
  });

  it('one flooding key does not grow the arrival queue without bound', () => {
    const h = new BoundedHistory<number>(5, 1000);
    h.add('quiet', -1);
    for (let i = 0; i < 200_000; i++) h.add('loud', i);
    assert.equal(h.size, 6);
    assert.deepEqual(h.list('quiet'), [-1]);
    assert.ok(h.backlog <= 2 * h.size + 16, `arrival queue holds ${h.backlog}`);
    assert.deepEqual(h.list('loud'), [199_995, 199_996, 199_997, 199_998, 199_999]);
  });
});

describe('memory report store', () => {
  it('lists alarms newest first, filtered by time range and type, paged', async () => {
    const s = createMemoryReportStore();
    for (let i = 0; i < 10; i++) await s.addAlarm(alarm(DEV, 1000 + i, { method: i % 2 === 0 ? '2' : '5', type: i % 2 === 0 ? null : '1' }));
    await s.addAlarm(alarm('34020000001320000002', 1005));
    const all = await s.listAlarms({ deviceId: DEV }, { page: 1, size: 3 });
    assert.equal(all.total, 10);
    assert.deepEqual(all.items.map((a) => a.receivedAt), [1009, 1008, 1007]);
    const video = await s.listAlarms({ deviceId: DEV, method: '5', from: 1002, to: 1007 }, { page: 1, size: 20 });
    assert.deepEqual(video.items.map((a) => a.receivedAt), [1007, 1005, 1003]);
    assert.equal((await s.listAlarms({ deviceId: DEV, type: '1' }, { page: 2, size: 4 })).items.length, 1);
  });

  it('bounds alarms per device and in total', async () => {
    const s = createMemoryReportStore({ alarmsPerDevice: 5, alarmsTotal: 8 });
    for (let i = 0; i < 20; i++) await s.addAlarm(alarm(DEV, i));
    for (let i = 0; i < 4; i++) await s.addAlarm(alarm('34020000001320000002', 100 + i));
    assert.deepEqual((await s.listAlarms({ deviceId: DEV }, { page: 1, size: 100 })).items.map((a) => a.receivedAt), [19, 18, 17, 16]);
    assert.equal((await s.listAlarms({ deviceId: '34020000001320000002' }, { page: 1, size: 100 })).total, 4);
  });

  it('keeps a bounded track oldest first and the latest position', async () => {
    const s = createMemoryReportStore({ positionsPerDevice: 3 });
    assert.equal(await s.latestPosition(DEV), null);
    for (let i = 0; i < 5; i++) {
      await s.addPosition({ deviceId: DEV, sourceId: DEV, receivedAt: i, time: 't', longitude: `116.${i}`, latitude: '39.9', speed: null, direction: null, altitude: null });
    }
    assert.equal((await s.latestPosition(DEV))?.longitude, '116.4');
    assert.deepEqual((await s.track({ deviceId: DEV }, { page: 1, size: 10 })).items.map((p) => p.receivedAt), [2, 3, 4]);
    assert.deepEqual((await s.track({ deviceId: DEV, from: 3 }, { page: 1, size: 10 })).items.map((p) => p.receivedAt), [3, 4]);
  });

  it('keeps subscription settings per device (none by default), bounded', async () => {
    const s = createMemoryReportStore({ settingsTotal: 2 });
    assert.deepEqual(await s.subscriptionSettings(DEV), { catalog: false, alarm: false, mobileposition: false, intervalS: 5 });
    await s.saveSubscriptionSettings(DEV, { catalog: true, alarm: false, mobileposition: true, intervalS: 2 });
    await s.saveSubscriptionSettings('34020000001320000002', { catalog: true, alarm: true, mobileposition: false, intervalS: 5 });
    assert.equal((await s.subscriptionSettings(DEV)).intervalS, 2);
    await s.saveSubscriptionSettings('34020000001320000003', { catalog: true, alarm: true, mobileposition: false, intervalS: 5 });
    assert.equal((await s.subscriptionSettings(DEV)).catalog, false, 'the oldest written was dropped');
  });
});
