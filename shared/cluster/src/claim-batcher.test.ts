import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClaimBatcher } from './claim-batcher.ts';
import { FakeClock } from './clock.ts';
import { StoreClosedError } from './errors.ts';
import type { OwnershipClaim } from './ownership.port.ts';

interface Call {
  claims: readonly OwnershipClaim[];
  instanceId: string;
  settle: { resolve(): void; reject(err: unknown): void };
}

function setup(opts: { maxDelayMs?: number; maxBatch?: number } = {}) {
  const clock = new FakeClock(1000);
  const calls: Call[] = [];
  const batcher = new ClaimBatcher({
    clock,
    ...opts,
    sink: (claims, instanceId) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ claims, instanceId, settle: { resolve, reject } });
      }),
  });
  return { clock, calls, batcher };
}

const settledState = async (p: Promise<unknown>): Promise<string> => {
  const marker = Symbol('pending');
  const r = await Promise.race([p.then(() => 'resolved', () => 'rejected'), Promise.resolve(marker)]);
  return r === marker ? 'pending' : (r as string);
};

describe('ClaimBatcher (SPEC OWN-5)', () => {
  it('coalesces claims made within the window into one sink call', async () => {
    const { clock, calls, batcher } = setup({ maxDelayMs: 5 });
    const p1 = batcher.claim('d1', 'node-a', 90_000);
    clock.advance(3);
    const p2 = batcher.claim('d2', 'node-a', 90_000);
    assert.equal(calls.length, 0);
    assert.equal(batcher.pendingCount, 2);
    clock.advance(2); // window measured from the first claim
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.claims, [
      { deviceId: 'd1', ttlMs: 90_000 },
      { deviceId: 'd2', ttlMs: 90_000 },
    ]);
    assert.equal(await settledState(p1), 'pending', 'resolves only when the write is done');
    calls[0]?.settle.resolve();
    await Promise.all([p1, p2]);
    assert.equal(clock.pending, 0);
  });

  it('flushes at once when the batch reaches maxBatch, without waiting for the timer', () => {
    const { calls, batcher, clock } = setup({ maxBatch: 3, maxDelayMs: 50 });
    for (const d of ['a', 'b', 'c', 'd']) void batcher.claim(d, 'n', 1000).catch(() => undefined);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.claims.length, 3);
    assert.equal(batcher.pendingCount, 1);
    clock.advance(50);
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1]?.claims, [{ deviceId: 'd', ttlMs: 1000 }]);
  });

  it('collapses repeated claims of one device: one entry, last TTL, every caller settled', async () => {
    const { clock, calls, batcher } = setup();
    const a = batcher.claim('d1', 'n', 1000);
    const b = batcher.claim('d1', 'n', 2000);
    clock.advance(2);
    assert.deepEqual(calls[0]?.claims, [{ deviceId: 'd1', ttlMs: 2000 }]);
    calls[0]?.settle.resolve();
    await Promise.all([a, b]);
  });

  it('groups by instance id', () => {
    const { clock, calls, batcher } = setup();
    void batcher.claim('d1', 'n1', 1000);
    void batcher.claim('d2', 'n2', 1000);
    clock.advance(2);
    assert.deepEqual(
      calls.map((c) => c.instanceId),
      ['n1', 'n2'],
    );
  });

  it('rejects exactly the claims of a failed batch', async () => {
    const { clock, calls, batcher } = setup();
    const first = batcher.claim('d1', 'n', 1000);
    clock.advance(2);
    const second = batcher.claim('d2', 'n', 1000);
    clock.advance(2);
    const boom = new Error('redis down');
    calls[0]?.settle.reject(boom);
    calls[1]?.settle.resolve();
    await assert.rejects(first, (err) => err === boom);
    await second;
  });

  it('settles callers when the sink throws synchronously', async () => {
    const clock = new FakeClock();
    const batcher = new ClaimBatcher({
      clock,
      sink: () => {
        throw new RangeError('bad ttl');
      },
    });
    const p = batcher.claim('d', 'n', 1);
    clock.advance(2);
    await assert.rejects(p, RangeError);
  });

  it('drain() flushes and waits for batches in flight', async () => {
    const { calls, batcher } = setup();
    const p = batcher.claim('d1', 'n', 1000);
    let drained = false;
    const d = batcher.drain().then(() => (drained = true));
    assert.equal(calls.length, 1, 'drain flushes without waiting for the timer');
    await Promise.resolve();
    assert.equal(drained, false);
    assert.equal(batcher.inFlightCount, 1);
    calls[0]?.settle.reject(new Error('x'));
    await d;
    await assert.rejects(p);
    assert.equal(batcher.inFlightCount, 0);
  });

  it('close() rejects unsent claims, stops the timer, refuses new ones; idempotent', async () => {
    const { clock, calls, batcher } = setup();
    const p = batcher.claim('d1', 'n', 1000);
    batcher.close();
    batcher.close();
    await assert.rejects(p, StoreClosedError);
    assert.equal(clock.pending, 0);
    clock.advance(10);
    assert.equal(calls.length, 0);
    await assert.rejects(batcher.claim('d2', 'n', 1000), (err: StoreClosedError) => err.code === 'CLUSTER_ERR_CLOSED');
  });
});
