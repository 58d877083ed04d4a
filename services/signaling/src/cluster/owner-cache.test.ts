import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../core/clock.ts';
import { OWNER_CACHE_TTL_MS, OwnerCache } from './owner-cache.ts';

const DEV = '34020000001320000001';

function counting(answers: (string | null)[]): { read: () => Promise<string | null>; reads: () => number } {
  let n = 0;
  return {
    read: async () => answers[Math.min(n++, answers.length - 1)] ?? null,
    reads: () => n,
  };
}

describe('owner cache (ROUTE-2, OWN-4)', () => {
  it('the bound: an owner read from the store is used for exactly ttlMs, then read again', async () => {
    const clock = new FakeClock(1000);
    const cache = new OwnerCache({ clock });
    assert.equal(cache.ttlMs, OWNER_CACHE_TTL_MS);
    const store = counting(['node-a', 'node-c']);
    assert.equal(await cache.lookup(DEV, store.read), 'node-a');
    clock.advance(OWNER_CACHE_TTL_MS - 1);
    assert.equal(await cache.lookup(DEV, store.read), 'node-a');
    assert.equal(store.reads(), 1);
    clock.advance(1); // the device moved to node-c meanwhile: from here on, the new owner
    assert.equal(cache.get(DEV), undefined);
    assert.equal(await cache.lookup(DEV, store.read), 'node-c');
    assert.equal(store.reads(), 2);
  });

  it('concurrent misses share one read', async () => {
    const cache = new OwnerCache({ clock: new FakeClock() });
    const store = counting(['node-a']);
    const all = await Promise.all(Array.from({ length: 10 }, () => cache.lookup(DEV, store.read)));
    assert.deepEqual(new Set(all), new Set(['node-a']));
    assert.equal(store.reads(), 1);
  });

  it('no owner and failed reads are not remembered', async () => {
    const cache = new OwnerCache({ clock: new FakeClock() });
    const none = counting([null, 'node-b']);
    assert.equal(await cache.lookup(DEV, none.read), null);
    assert.equal(await cache.lookup(DEV, none.read), 'node-b', 'came online: routable at once');
    const other = '34020000001320000002';
    await assert.rejects(cache.lookup(other, () => Promise.reject(new Error('down'))));
    assert.equal(await cache.lookup(other, async () => 'node-a'), 'node-a');
  });

  it('forget(): the next lookup reads the store, and a read in flight stores nothing', async () => {
    const cache = new OwnerCache({ clock: new FakeClock() });
    cache.remember(DEV, 'node-a');
    cache.forget(DEV);
    assert.equal(cache.get(DEV), undefined);

    let release: (owner: string) => void = () => undefined;
    const slow = cache.lookup(DEV, () => new Promise<string>((r) => (release = r)));
    cache.forget(DEV); // e.g. this instance claimed the device while the read was in flight
    release('node-old');
    assert.equal(await slow, 'node-old', 'the caller that started the read gets its answer');
    assert.equal(cache.get(DEV), undefined, 'but it is not remembered');
  });

  it('remember() overrides with a fresh ttl; the oldest entry goes first when full; ttl 0 disables it', async () => {
    const clock = new FakeClock();
    const cache = new OwnerCache({ clock, maxEntries: 2 });
    cache.remember('d1', 'node-a');
    cache.remember('d2', 'node-a');
    cache.remember('d1', 'node-b'); // d1 is now the newest
    cache.remember('d3', 'node-a');
    assert.deepEqual([cache.get('d1'), cache.get('d2'), cache.get('d3'), cache.size], ['node-b', undefined, 'node-a', 2]);

    const off = new OwnerCache({ clock, ttlMs: 0 });
    const store = counting(['node-a']);
    await off.lookup(DEV, store.read);
    await off.lookup(DEV, store.read);
    assert.equal(store.reads(), 2);
  });

  it('FAIL-3: while the store is not connected nothing is answered from memory, and the entries are gone after', async () => {
    let up = true;
    const cache = new OwnerCache({ clock: new FakeClock(), available: () => up });
    cache.remember(DEV, 'node-a');
    assert.equal(cache.get(DEV), 'node-a');
    up = false;
    assert.equal(cache.get(DEV), undefined);
    await assert.rejects(cache.lookup(DEV, () => Promise.reject(new Error('redis down'))));
    cache.remember(DEV, 'node-a'); // e.g. a move reported meanwhile
    up = true;
    assert.equal(cache.get(DEV), undefined, 'Redis may have restarted empty: read it again');
    assert.equal(cache.size, 0);
  });
});
