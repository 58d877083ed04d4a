import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchableDeviceId, createLookupBatcher, LookupQueueFullError, type LookupBatcherOptions } from '../src/index.ts';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A store whose fetches finish when the test says so; it records every batch of keys. Values are `v:<key>`, keys starting with 'x' are absent. */
function manualStore() {
  const batches: string[][] = [];
  const finishers: ((fail?: Error) => void)[] = [];
  const fetch = (keys: readonly string[]) =>
    new Promise<ReadonlyMap<string, string>>((resolve, reject) => {
      batches.push([...keys]);
      finishers.push((fail) => (fail === undefined ? resolve(new Map(keys.filter((k) => !k.startsWith('x')).map((k) => [k, `v:${k}`]))) : reject(fail)));
    });
  return { fetch, batches, finish: (i: number, fail?: Error) => finishers[i]?.(fail) };
}

function batcher(store: ReturnType<typeof manualStore>, o: Partial<LookupBatcherOptions<string, string | null>> = {}) {
  return createLookupBatcher<string, string | null>({ fetch: store.fetch, absent: () => null, ...o });
}

describe('lookup batcher', () => {
  it('fetches a lone lookup at once, and those arriving meanwhile together in the next batch', async () => {
    const store = manualStore();
    const b = batcher(store, { maxInFlight: 1 });
    const first = b.load('a');
    assert.deepEqual(store.batches, [['a']], 'no timer, no tick: the first lookup goes at once');
    const rest = ['b', 'c', 'd'].map((k) => b.load(k));
    assert.equal(store.batches.length, 1, 'the others wait for the batch in flight');
    assert.equal(b.queued, 3);
    store.finish(0);
    assert.equal(await first, 'v:a');
    await tick();
    assert.deepEqual(store.batches[1], ['b', 'c', 'd']);
    store.finish(1);
    assert.deepEqual(await Promise.all(rest), ['v:b', 'v:c', 'v:d']);
    assert.equal(b.inFlight, 0);
  });

  it('answers a key the fetch did not find with absent(key)', async () => {
    const store = manualStore();
    const b = createLookupBatcher<string, string>({ fetch: store.fetch, absent: (k) => `none:${k}` });
    const p = b.load('x1');
    store.finish(0);
    assert.equal(await p, 'none:x1');
  });

  it('fetches a key asked twice while waiting once, and answers both callers', async () => {
    const store = manualStore();
    const b = batcher(store, { maxInFlight: 1 });
    const first = b.load('a');
    const twice = [b.load('b'), b.load('c'), b.load('b'), b.load('x9'), b.load('x9')];
    store.finish(0);
    await first;
    await tick();
    assert.deepEqual(store.batches[1], ['b', 'c', 'x9']);
    store.finish(1);
    assert.deepEqual(await Promise.all(twice), ['v:b', 'v:c', 'v:b', null, null]);
  });

  it('a key asked while it is in flight waits for the next batch (that fetch may predate the caller’s write)', async () => {
    const store = manualStore();
    const b = batcher(store, { maxInFlight: 1 });
    const first = b.load('a');
    const again = b.load('a');
    assert.deepEqual(store.batches, [['a']]);
    store.finish(0);
    await first;
    await tick();
    assert.deepEqual(store.batches, [['a'], ['a']]);
    store.finish(1);
    assert.equal(await again, 'v:a');
  });

  it('keeps at most maxBatch keys per fetch and maxInFlight fetches at once', async () => {
    const store = manualStore();
    const b = batcher(store, { maxBatch: 3, maxInFlight: 2 });
    const all = Array.from({ length: 10 }, (_, i) => b.load(`k${i}`));
    assert.deepEqual(store.batches.map((k) => k.length), [1, 1], 'two in flight, at once');
    assert.equal(b.inFlight, 2);
    store.finish(0);
    await tick();
    assert.deepEqual(store.batches.map((k) => k.length), [1, 1, 3]);
    for (let i = 1; i < 5; i++) {
      store.finish(i);
      await tick();
    }
    assert.deepEqual(store.batches.map((k) => k.length), [1, 1, 3, 3, 2]);
    assert.deepEqual(store.batches.flat(), Array.from({ length: 10 }, (_, i) => `k${i}`), 'in arrival order, each once');
    assert.deepEqual(await Promise.all(all), Array.from({ length: 10 }, (_, i) => `v:k${i}`));
  });

  it('refuses a lookup at once beyond maxQueued waiting callers, with the code the caller chose', async () => {
    const store = manualStore();
    const b = batcher(store, { maxInFlight: 1, maxQueued: 2, queueFullCode: 'VMS_MYSQL_QUEUE_FULL' });
    const first = b.load('a');
    const waiting = [b.load('b'), b.load('b')];
    await assert.rejects(b.load('c'), (err: unknown) => err instanceof LookupQueueFullError && err.code === 'VMS_MYSQL_QUEUE_FULL');
    assert.equal(b.queued, 2, 'the refused lookup holds no place');
    store.finish(0);
    await first;
    await tick();
    assert.deepEqual(store.batches, [['a'], ['b']], 'the refused key is never fetched');
    assert.equal(b.queued, 0);
    const later = b.load('c');
    store.finish(1);
    await tick();
    store.finish(2);
    assert.deepEqual(await Promise.all([...waiting, later]), ['v:b', 'v:b', 'v:c'], 'room again once the batch went');
  });

  it('a failed fetch rejects exactly its own callers; the next batch still goes', async () => {
    const store = manualStore();
    const b = batcher(store, { maxInFlight: 2 });
    const one = b.load('a');
    const two = b.load('b');
    const waiting = [b.load('c'), b.load('d')];
    const boom = new Error('connection lost');
    store.finish(0, boom);
    await assert.rejects(one, (err) => err === boom);
    await tick();
    assert.deepEqual(store.batches[2], ['c', 'd']);
    store.finish(1);
    store.finish(2);
    assert.equal(await two, 'v:b');
    assert.deepEqual(await Promise.all(waiting), ['v:c', 'v:d']);
  });

  it('a fetch that throws instead of rejecting fails its batch the same way', async () => {
    const boom = new Error('bad statement');
    const b = createLookupBatcher<string, string>({
      fetch: () => {
        throw boom;
      },
      absent: () => '',
    });
    await assert.rejects(b.load('a'), (err) => err === boom);
    assert.equal(b.inFlight, 0);
  });

  it('refuses bounds that would block every lookup', () => {
    const store = manualStore();
    for (const bad of [{ maxBatch: 0 }, { maxInFlight: 0 }, { maxQueued: 0 }, { maxBatch: 1.5 }]) assert.throws(() => batcher(store, bad), RangeError);
  });
});

describe('batchableDeviceId', () => {
  it('takes digits-only ids (GB/T 28181), refuses what a collation would match otherwise', () => {
    assert.equal(batchableDeviceId('34020000001320000001'), true);
    for (const id of ['', 'abc', 'ABC', '3402000000132000000 ', ' 1', '1'.repeat(65)]) assert.equal(batchableDeviceId(id), false, JSON.stringify(id));
  });
});
