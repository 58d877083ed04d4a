/**
 * Behaviour every OwnershipStore must have (SPEC OWN-1..5), run by cluster-ownership.test.ts
 * against the memory store, a real Redis and a real Redis Cluster. Not a test file itself.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { OwnershipMove, OwnershipStore, StoreClosedError } from '@vms/cluster';

export interface OwnershipFixture {
  store: OwnershipStore;
  /** Lets time pass: a fake clock jumps, a real server is waited for. */
  advance(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Polls until `done` (notices arrive asynchronously: a microtask in memory, a message from Redis). */
async function waitUntil(done: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** `make` gets a unique key prefix so cases never see each other's keys. */
export function ownershipContract(label: string, make: (keyPrefix: string) => Promise<OwnershipFixture>): void {
  describe(`OwnershipStore contract: ${label}`, () => {
    let fx: OwnershipFixture;
    let store: OwnershipStore;
    beforeEach(async () => {
      fx = await make(`vms:test:${randomBytes(4).toString('hex')}:`);
      store = fx.store;
    });
    afterEach(async () => {
      await fx.close();
    });

    it('a device nobody claimed has no owner', async () => {
      assert.equal(await store.ownerOf('34020000001320000001'), null);
    });

    it('claim makes the instance the owner (OWN-1)', async () => {
      await store.claim('34020000001320000001', 'node-a', 60_000);
      assert.equal(await store.ownerOf('34020000001320000001'), 'node-a');
    });

    it('a claim from another instance moves the device (OWN-4)', async () => {
      await store.claim('d1', 'node-a', 60_000);
      await store.claim('d1', 'node-b', 60_000);
      assert.equal(await store.ownerOf('d1'), 'node-b');
    });

    it('claimIfVacant claims a vacant device, never overwrites a holder, and reports the owner', async () => {
      assert.equal(await store.claimIfVacant('d1', 'node-a', 60_000), 'node-a');
      assert.equal(await store.ownerOf('d1'), 'node-a');
      await store.claim('d1', 'node-b', 60_000); // the device moved meanwhile (OWN-4)
      assert.equal(await store.claimIfVacant('d1', 'node-a', 60_000), 'node-b');
      assert.equal(await store.ownerOf('d1'), 'node-b');
      await store.claimIfVacant('short', 'node-a', 200);
      await fx.advance(300);
      assert.equal(await store.ownerOf('short'), null, 'with the TTL given');
    });

    it('releaseIfOwner deletes only its own claim (OWN-3)', async () => {
      await store.claim('d1', 'node-b', 60_000);
      assert.equal(await store.releaseIfOwner('d1', 'node-a'), false, 'old owner must not delete the new claim');
      assert.equal(await store.ownerOf('d1'), 'node-b');
      assert.equal(await store.releaseIfOwner('d1', 'node-b'), true);
      assert.equal(await store.ownerOf('d1'), null);
      assert.equal(await store.releaseIfOwner('d1', 'node-b'), false, 'nothing left to release');
    });

    it('a claim expires after its TTL (OWN-2) and each claim renews it (OWN-1)', async () => {
      await store.claim('gone', 'node-a', 200);
      await store.claim('kept', 'node-a', 200);
      await fx.advance(120);
      await store.claim('kept', 'node-a', 200);
      await fx.advance(120);
      assert.equal(await store.ownerOf('gone'), null);
      assert.equal(await store.ownerOf('kept'), 'node-a');
    });

    it('claimMany writes every claim with its own TTL; ownersOf reads them back (OWN-5)', async () => {
      const ids = Array.from({ length: 1200 }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`);
      await store.claimMany(
        ids.map((deviceId, i) => ({ deviceId, ttlMs: i === 0 ? 200 : 60_000 })),
        'node-a',
      );
      await store.claim(ids[5] as string, 'node-b', 60_000);
      const owners = await store.ownersOf([...ids, 'never-claimed']);
      // ids[0] may already have expired when the machine is slow (200 ms TTL): count the others exactly
      assert.equal(ids.slice(1).filter((id) => owners.has(id)).length, ids.length - 1);
      assert.equal(owners.get(ids[5] as string), 'node-b');
      assert.equal(owners.get(ids[1199] as string), 'node-a');
      assert.equal(owners.has('never-claimed'), false);
      await fx.advance(300);
      assert.equal(await store.ownerOf(ids[0] as string), null, 'per-claim TTL honoured');
      assert.equal(await store.ownerOf(ids[1] as string), 'node-a');
    });

    it('renewMany renews its own claims, writes back vacant ones, leaves and reports another owner\'s (OWN-1, OWN-4, OWN-5)', async () => {
      // 1,200 devices: more than one script of 500 on a single server
      const ids = Array.from({ length: 1200 }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`);
      const ours = ids.slice(0, 400);
      const vacant = ids.slice(400, 800);
      const theirs = ids.slice(800);
      await store.claimMany(ours.map((deviceId) => ({ deviceId, ttlMs: 300 })), 'node-a');
      await store.claimMany(theirs.map((deviceId) => ({ deviceId, ttlMs: 60_000 })), 'node-b');
      const moved = await store.renewMany(ids, 'node-a', 60_000);
      assert.deepEqual([...moved.keys()].sort(), theirs);
      assert.ok([...moved.values()].every((owner) => owner === 'node-b'));
      await fx.advance(400); // past the 300 ms the first claims had
      const owners = await store.ownersOf(ids);
      assert.ok([...ours, ...vacant].every((id) => owners.get(id) === 'node-a'), 'renewed with the TTL given, vacant ones written');
      assert.ok(theirs.every((id) => owners.get(id) === 'node-b'), 'a renewal never moves a device');

      await store.claim('short', 'node-a', 60_000);
      assert.equal((await store.renewMany(['short'], 'node-a', 200)).size, 0);
      await fx.advance(300);
      assert.equal(await store.ownerOf('short'), null, 'the TTL is the one given, from now');
    });

    it('a claim that takes a device from another instance is announced to watchers; nothing else is (OWN-4)', async () => {
      const heard: OwnershipMove[] = [];
      const stop = store.watchMoves((m) => heard.push(m));
      await fx.advance(200); // the subscription is in place before the first notice
      await store.claim('d1', 'node-a', 60_000); // vacant: no move
      await store.claim('d1', 'node-a', 60_000); // same owner: no move
      await store.claimMany(['d2', 'd3'].map((deviceId) => ({ deviceId, ttlMs: 60_000 })), 'node-a');
      await store.claim('d1', 'node-b', 60_000); // moved
      await store.claimMany(['d2', 'd3', 'd4'].map((deviceId) => ({ deviceId, ttlMs: 60_000 })), 'node-c'); // d2, d3 moved
      await store.renewMany(['d1'], 'node-a', 60_000); // never moves: no notice
      assert.equal(await store.claimIfVacant('d1', 'node-a', 60_000), 'node-b');
      await waitUntil(() => heard.length >= 3);
      await fx.advance(200); // room for a notice that should not come
      const byDevice = [...heard].sort((x, y) => x.deviceId.localeCompare(y.deviceId));
      assert.deepEqual(byDevice, [
        { deviceId: 'd1', newOwner: 'node-b', previousOwner: 'node-a' },
        { deviceId: 'd2', newOwner: 'node-c', previousOwner: 'node-a' },
        { deviceId: 'd3', newOwner: 'node-c', previousOwner: 'node-a' },
      ]);
      stop();
      await store.claim('d1', 'node-a', 60_000);
      await fx.advance(200);
      assert.equal(heard.length, 3, 'nothing after unsubscribing');
    });

    it('empty batches are no-ops', async () => {
      await store.claimMany([], 'node-a');
      assert.equal((await store.ownersOf([])).size, 0);
      assert.equal((await store.renewMany([], 'node-a', 1000)).size, 0);
    });

    it('invalid TTLs are refused before any write', async () => {
      await assert.rejects(store.claim('d1', 'node-a', 0), RangeError);
      await assert.rejects(store.claimMany([{ deviceId: 'd1', ttlMs: 1000 }, { deviceId: 'd2', ttlMs: -5 }], 'node-a'), RangeError);
      await assert.rejects(store.renewMany(['d1'], 'node-a', 1.5), RangeError);
      assert.equal(await store.ownerOf('d1'), null);
    });

    it('device ids with key-special characters stay separate', async () => {
      await store.claim('a}b', 'node-a', 60_000);
      await store.claim('a', 'node-b', 60_000);
      assert.equal(await store.ownerOf('a}b'), 'node-a');
      assert.equal(await store.ownerOf('a'), 'node-b');
    });

    it('close() is idempotent and later calls fail with StoreClosedError', async () => {
      await store.close();
      await store.close();
      await assert.rejects(store.ownerOf('d1'), (err: StoreClosedError) => err.code === 'CLUSTER_ERR_CLOSED');
    });
  });
}
