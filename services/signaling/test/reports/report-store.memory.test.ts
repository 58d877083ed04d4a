import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedHistory } from '../../src/reports/bounded-history.ts';
import { createMemoryReportStore } from '../../src/reports/report-store.memory.ts';
import { reportStoreContract } from './report-store.contract.ts';

const DEV = '34020000001320000001';

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

reportStoreContract('memory', async (bounds) => ({ store: createMemoryReportStore(bounds), dispose: async () => {} }));

describe('memory report store', () => {
  it('bounds the devices with subscription settings, the oldest written dropped', async () => {
    const s = createMemoryReportStore({ settingsTotal: 2 });
    await s.saveSubscriptionSettings(DEV, { catalog: true, alarm: false, mobileposition: true, intervalS: 2 });
    await s.saveSubscriptionSettings('34020000001320000002', { catalog: true, alarm: true, mobileposition: false, intervalS: 5 });
    assert.equal((await s.subscriptionSettings(DEV)).intervalS, 2);
    await s.saveSubscriptionSettings('34020000001320000003', { catalog: true, alarm: true, mobileposition: false, intervalS: 5 });
    assert.equal((await s.subscriptionSettings(DEV)).catalog, false, 'the oldest written was dropped');
  });
});
