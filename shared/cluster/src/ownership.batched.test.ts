import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from './clock.ts';
import { StoreClosedError } from './errors.ts';
import { withClaimBatching } from './ownership.batched.ts';
import { createMemoryOwnershipStore } from './ownership.memory.ts';
import type { OwnershipStore } from './ownership.port.ts';

function countingStore(inner: OwnershipStore): { store: OwnershipStore; batches: number[] } {
  const batches: number[] = [];
  return {
    batches,
    store: {
      ...inner,
      claimMany: async (claims, id) => {
        batches.push(claims.length);
        // simulate network latency so "claim in flight, then release" really overlaps
        await new Promise((r) => setImmediate(r));
        return inner.claimMany(claims, id);
      },
    },
  };
}

describe('withClaimBatching', () => {
  it('turns many claim() calls in one window into one claimMany()', async () => {
    const clock = new FakeClock();
    const { store, batches } = countingStore(createMemoryOwnershipStore({ clock }));
    const batched = withClaimBatching(store, { clock, maxDelayMs: 2 });
    const ps = Array.from({ length: 100 }, (_, i) => batched.claim(`d${i}`, 'node-a', 60_000));
    clock.advance(2);
    await Promise.all(ps);
    assert.deepEqual(batches, [100]);
    assert.equal(await batched.ownerOf('d99'), 'node-a');
  });

  it('release after a pending claim is ordered after it (OWN-3 is not undone by a late claim)', async () => {
    const clock = new FakeClock();
    const { store } = countingStore(createMemoryOwnershipStore({ clock }));
    const batched = withClaimBatching(store, { clock, maxDelayMs: 2 });
    const keepalive = batched.claim('d1', 'node-a', 60_000); // not flushed: timer not advanced
    const released = await batched.releaseIfOwner('d1', 'node-a');
    await keepalive;
    assert.equal(released, true);
    assert.equal(await batched.ownerOf('d1'), null);
  });

  it('rejects a bad TTL alone instead of failing its batch', async () => {
    const clock = new FakeClock();
    const batched = withClaimBatching(createMemoryOwnershipStore({ clock }), { clock });
    const good = batched.claim('d1', 'n', 1000);
    await assert.rejects(batched.claim('d2', 'n', -1), RangeError);
    clock.advance(2);
    await good;
  });

  it('close() rejects unsent claims and closes the wrapped store', async () => {
    const clock = new FakeClock();
    const inner = createMemoryOwnershipStore({ clock });
    const batched = withClaimBatching(inner, { clock });
    const p = batched.claim('d1', 'n', 1000);
    await batched.close();
    await assert.rejects(p, StoreClosedError);
    await assert.rejects(inner.ownerOf('d1'), StoreClosedError);
    await assert.rejects(batched.releaseIfOwner('d1', 'n'), StoreClosedError);
  });
});
