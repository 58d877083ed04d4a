import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@vms/sip';
import type { CascadeError } from '../errors.ts';
import { SubscriptionTable, subscriptionKindOf } from './subscription-table.ts';

const UP1 = '34010000002000000001';
const UP2 = '35010000002000000001';

function table() {
  const clock = new FakeClock(10_000);
  return { clock, t: new SubscriptionTable<{ name: string }>({ clock, maxExpiresS: 7200 }) };
}

describe('SubscriptionTable', () => {
  it('creates, refreshes (keeping its age) and ends a subscription with Expires 0', () => {
    const { clock, t } = table();
    const d = { name: 'dialog-1' };
    const created = t.subscribe({ key: 'k1', platformId: UP1, kind: 'catalog', dialog: d, expiresS: 3600, sn: '11' });
    assert.deepEqual(created, { type: 'created', entry: { key: 'k1', platformId: UP1, kind: 'catalog', dialog: d, expiresAt: 3_610_000, createdAt: 10_000, sn: '11' } });
    clock.advance(1000);
    const refreshed = t.subscribe({ key: 'k1', platformId: UP1, kind: 'catalog', dialog: d, expiresS: 600 });
    assert.equal(refreshed.type, 'refreshed');
    assert.deepEqual([refreshed.entry?.expiresAt, refreshed.entry?.createdAt], [611_000, 10_000]);
    assert.deepEqual(t.subscribe({ key: 'k1', platformId: UP1, kind: 'catalog', dialog: d, expiresS: 0 }), { type: 'removed', entry: refreshed.entry });
    assert.deepEqual(t.subscribe({ key: 'k1', platformId: UP1, kind: 'catalog', dialog: d, expiresS: 0 }), { type: 'removed', entry: null });
    assert.equal(t.size, 0);
  });

  it('notifyTargets: live subscriptions of a kind (optionally one platform), oldest first', () => {
    const { clock, t } = table();
    t.subscribe({ key: 'b', platformId: UP2, kind: 'catalog', dialog: { name: 'b' }, expiresS: 60 });
    clock.advance(1);
    t.subscribe({ key: 'a', platformId: UP1, kind: 'catalog', dialog: { name: 'a' }, expiresS: 3600 });
    t.subscribe({ key: 'c', platformId: UP1, kind: 'alarm', dialog: { name: 'c' }, expiresS: 3600 });
    t.subscribe({ key: 'm', platformId: UP1, kind: 'mobilePosition', dialog: { name: 'm' }, expiresS: 3600, intervalS: 5 });
    assert.deepEqual(t.notifyTargets('catalog').map((e) => e.key), ['b', 'a']);
    assert.deepEqual(t.notifyTargets('catalog', UP1).map((e) => e.key), ['a']);
    assert.deepEqual(t.notifyTargets('alarm').map((e) => e.key), ['c']);
    assert.equal(t.notifyTargets('mobilePosition')[0]?.intervalS, 5);
  });

  it('expiry with the clock: a lapsed subscription is never a target, sweep() removes it, nextExpiryAt() schedules', () => {
    const { clock, t } = table();
    t.subscribe({ key: 'short', platformId: UP1, kind: 'alarm', dialog: { name: 's' }, expiresS: 60 });
    t.subscribe({ key: 'long', platformId: UP1, kind: 'alarm', dialog: { name: 'l' }, expiresS: 3600 });
    assert.equal(t.nextExpiryAt(), 70_000);
    clock.advance(60_000);
    assert.deepEqual(t.notifyTargets('alarm').map((e) => e.key), ['long'], 'lapsed at exactly its expiry');
    assert.equal(t.get('short'), null);
    assert.equal(t.size, 2, 'still stored until swept');
    assert.deepEqual(t.sweep().map((e) => e.key), ['short']);
    assert.equal(t.nextExpiryAt(), 3_610_000);
    // a SUBSCRIBE reusing a lapsed key is a new subscription
    clock.advance(4_000_000);
    assert.equal(t.subscribe({ key: 'long', platformId: UP1, kind: 'alarm', dialog: { name: 'l' }, expiresS: 60 }).type, 'created');
  });

  it('caps Expires, refuses nonsense, clears per platform and on leadership loss', () => {
    const { t } = table();
    assert.equal(t.grantedExpiresS(86_400), 7200);
    assert.equal(t.subscribe({ key: 'x', platformId: UP1, kind: 'catalog', dialog: { name: 'x' }, expiresS: 86_400 }).entry?.expiresAt, 10_000 + 7_200_000);
    assert.throws(() => t.subscribe({ key: 'y', platformId: UP1, kind: 'catalog', dialog: { name: 'y' }, expiresS: -1 }), (e: CascadeError) => e.code === 'CASCADE_ERR_ARGUMENT');
    t.subscribe({ key: 'z', platformId: UP2, kind: 'alarm', dialog: { name: 'z' }, expiresS: 60 });
    assert.deepEqual(t.removePlatform(UP1).map((e) => e.key), ['x']);
    assert.deepEqual(t.clear().map((e) => e.key), ['z']);
    assert.equal(t.nextExpiryAt(), null);
    assert.equal(t.unsubscribe('z'), null);
  });

  it('subscriptionKindOf maps SUBSCRIBE body CmdTypes (any case)', () => {
    assert.deepEqual(['Catalog', 'ALARM', 'MobilePosition', 'DeviceInfo'].map(subscriptionKindOf), ['catalog', 'alarm', 'mobilePosition', null]);
  });
});
