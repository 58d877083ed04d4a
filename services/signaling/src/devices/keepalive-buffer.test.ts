import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { FakeClock } from '../core/clock.ts';
import { createKeepaliveBuffer } from './keepalive-buffer.ts';

describe('keepalive buffer', () => {
  it('keeps the newest time per device and writes one batch per period', async () => {
    const batches: Map<string, number>[] = [];
    const clock = new FakeClock();
    const buf = createKeepaliveBuffer({ flushIntervalMs: 1000, write: async (b) => void batches.push(new Map(b)), onError: () => {}, clock });
    buf.start();
    buf.record('a', 5);
    buf.record('a', 3);
    buf.record('b', 1);
    assert.equal(buf.pending('a'), 5);
    clock.advance(999);
    assert.equal(batches.length, 0);
    clock.advance(1);
    await tick();
    assert.deepEqual(batches, [new Map([['a', 5], ['b', 1]])]);
    assert.equal(buf.pending('a'), undefined);
    assert.equal(clock.pending, 1, 'the next period is armed');
    clock.advance(1000);
    await tick();
    assert.equal(batches.length, 1, 'nothing buffered, nothing written');
    await buf.close();
  });

  it('merges a failed batch back, newer values winning, and retries', async () => {
    let fail = true;
    const written: Map<string, number>[] = [];
    const errors: number[] = [];
    let release: () => void = () => {};
    const buf = createKeepaliveBuffer({
      flushIntervalMs: 1000,
      write: async (b) => {
        if (fail) {
          await new Promise<void>((r) => (release = r));
          throw new Error('db down');
        }
        written.push(new Map(b));
      },
      onError: (_e, size) => errors.push(size),
      clock: new FakeClock(),
    });
    buf.record('a', 1);
    buf.record('b', 1);
    const first = buf.flush();
    buf.record('a', 7); // arrives while the batch is in flight
    assert.equal(buf.pending('b'), 1, 'in-flight values stay visible');
    release();
    await first;
    assert.deepEqual(errors, [2]);
    fail = false;
    await buf.flush();
    assert.deepEqual(written, [new Map([['a', 7], ['b', 1]])]);
  });

  it('close stops the timer, writes the rest and is idempotent', async () => {
    const clock = new FakeClock();
    let writes = 0;
    const buf = createKeepaliveBuffer({ flushIntervalMs: 1000, write: async () => void writes++, onError: () => {}, clock });
    buf.start();
    buf.record('a', 1);
    await Promise.all([buf.close(), buf.close()]);
    assert.equal(clock.pending, 0);
    assert.equal(writes, 1);
    buf.start();
    assert.equal(clock.pending, 0, 'a closed buffer does not restart');
  });

  it('records 100k keepalives quickly (O(1) hot path)', () => {
    const buf = createKeepaliveBuffer({ flushIntervalMs: 1000, write: async () => {}, onError: () => {}, clock: new FakeClock() });
    const started = performance.now();
    for (let i = 0; i < 100_000; i++) buf.record(String(i % 10_000), i);
    assert.ok(performance.now() - started < 500);
    assert.equal(buf.size, 10_000);
  });
});
