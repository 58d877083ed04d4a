import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from './clock.ts';
import { StoreClosedError } from './errors.ts';
import { createMemoryOwnershipStore } from './ownership.memory.ts';
import { ownershipTtlMs } from './ownership.port.ts';

describe('memory OwnershipStore with a fake clock', () => {
  it('expires a claim exactly at its TTL (OWN-2)', async () => {
    const clock = new FakeClock(0);
    const store = createMemoryOwnershipStore({ clock });
    await store.claim('d1', 'node-a', 1000);
    clock.advance(999);
    assert.equal(await store.ownerOf('d1'), 'node-a');
    clock.advance(1);
    assert.equal(await store.ownerOf('d1'), null);
  });

  it('renews the TTL on every claim (OWN-1)', async () => {
    const clock = new FakeClock(0);
    const store = createMemoryOwnershipStore({ clock });
    await store.claim('d1', 'node-a', 1000);
    clock.advance(800);
    await store.claimMany([{ deviceId: 'd1', ttlMs: 1000 }], 'node-a');
    clock.advance(800);
    assert.equal(await store.ownerOf('d1'), 'node-a');
  });

  it('an expired claim cannot be released by its old owner', async () => {
    const clock = new FakeClock(0);
    const store = createMemoryOwnershipStore({ clock });
    await store.claim('d1', 'node-a', 10);
    clock.advance(10);
    assert.equal(await store.releaseIfOwner('d1', 'node-a'), false);
  });

  it('rejects bad TTLs before storing anything', async () => {
    const store = createMemoryOwnershipStore();
    await assert.rejects(store.claim('d1', 'n', 0), RangeError);
    await assert.rejects(store.claimMany([{ deviceId: 'd1', ttlMs: 5 }, { deviceId: 'd2', ttlMs: 1.5 }], 'n'), RangeError);
    assert.equal(await store.ownerOf('d1'), null);
  });

  it('refuses calls after close()', async () => {
    const store = createMemoryOwnershipStore();
    await store.close();
    await store.close();
    await assert.rejects(store.ownerOf('d1'), StoreClosedError);
  });
});

describe('ownershipTtlMs (SPEC OWN-1)', () => {
  it('is keepalive interval × timeout count + one offline-scan period', () => {
    assert.equal(ownershipTtlMs({ keepaliveIntervalS: 60, keepaliveTimeoutCount: 3, offlineScanPeriodS: 30 }), 210_000);
    assert.equal(ownershipTtlMs({ keepaliveIntervalS: 0.5, keepaliveTimeoutCount: 3, offlineScanPeriodS: 0.25 }), 1750);
  });
});
