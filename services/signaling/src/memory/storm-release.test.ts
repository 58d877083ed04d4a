// When the heap is given back after a registration storm (issue 11 target 3): the pure policy, and its
// wiring to the device events and a clock (a counted collection stands in for V8's).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { FakeClock } from '../core/clock.ts';
import { createDeviceEvents } from '../events/device-events.ts';
import { COMPACT_MAX_USED_BYTES, exposeCollector, MAX_RELEASE_MS, MAX_ROUNDS, startHeapRelease, WINDOW_MS } from './heap-release.ts';
import { DEFAULT_STORM_RELEASE, StormRelease } from './storm-release.ts';

const P = DEFAULT_STORM_RELEASE;

/** Feeds one count per second from `start`; the instants (ms) at which the policy said release. */
function run(s: StormRelease, counts: readonly number[], start = 0): number[] {
  const at: number[] = [];
  counts.forEach((n, i) => {
    const now = start + (i + 1) * 1000;
    if (s.observe(now, n)) at.push(now);
  });
  return at;
}
const seconds = (n: number, perSecond: number): number[] => Array.from({ length: n }, () => perSecond);

describe('storm release policy', () => {
  it('releases twice: 3 s into the calm, and once the storm has been over for Timer J', () => {
    assert.equal(P.quietMs, 32_000); // RFC 3261 §17.2.2: 64·T1 = 32 s, the storm's last transactions ended
    const s = new StormRelease();
    // 30 s at 3,500/s (100,000 devices), then nothing for a minute
    const at = run(s, [...seconds(30, 3500), ...seconds(60, 0)]);
    // the first calm window ends at 31 s, so calm since 31 s: releases at 31 + 3 and 31 + 32 s, and only then
    assert.deepEqual(at, [34_000, 63_000]);
  });

  it('calls the steady re-registrations after a storm calm', () => {
    const s = new StormRelease();
    // 1,000,000 devices: 3,000/s, then each re-registers every 3600 s (278/s, under a tenth of the peak)
    const at = run(s, [...seconds(40, 3000), ...seconds(60, 278)]);
    assert.deepEqual(at, [41_000 + 3000, 41_000 + 32_000]);
  });

  it('never releases on a steady rate, however many registrations it adds up to', () => {
    const s = new StormRelease();
    assert.deepEqual(run(s, seconds(600, 278)), []);
    // nor when it only dips by half now and then
    assert.deepEqual(run(s, Array.from({ length: 600 }, (_, i) => (i % 10 === 0 ? 140 : 278)), 600_000), []);
  });

  it('keeps too small a storm to V8', () => {
    const s = new StormRelease();
    assert.deepEqual(run(s, [...seconds(4, 1000), ...seconds(100, 0)]), []); // 4,000 < minRegistrations
  });

  it('starts the quiet period again when registrations pick up before it ends', () => {
    const s = new StormRelease();
    // storm, 20 s calm (the early release only), a second burst, then calm for good: counted from its end
    const at = run(s, [...seconds(10, 2000), ...seconds(20, 0), ...seconds(5, 2000), ...seconds(60, 0)]);
    assert.deepEqual(at, [14_000, 36_000 + 3000, 36_000 + 32_000]);
  });

  it('gives back at most once per minIntervalMs, and needs a new storm for the next', () => {
    const s = new StormRelease({ ...P, quietMs: 5000, minIntervalMs: 60_000 });
    const first = run(s, [...seconds(10, 1000), ...seconds(10, 0)]);
    assert.deepEqual(first, [14_000, 16_000]);
    // calm goes on: nothing more without a new storm
    assert.deepEqual(run(s, seconds(120, 0), 20_000), []);
    // a second storm right away waits for the interval since the first release
    const s2 = new StormRelease({ ...P, quietMs: 5000, minIntervalMs: 60_000 });
    const at = run(s2, [...seconds(10, 1000), ...seconds(10, 0), ...seconds(10, 1000), ...seconds(60, 0)]);
    assert.deepEqual(at, [14_000, 16_000, 76_000]);
  });
});

describe('heap release wiring', () => {
  it('counts REGISTERs (not keepalives) per second and collects while the heap still shrinks', async () => {
    const clock = new FakeClock(0);
    const events = createDeviceEvents(pino({ level: 'silent' }));
    let collections = 0;
    const compacting: boolean[] = [];
    // what each collection leaves committed: frees nothing committed, then compacts 400 → 200 → 150, then < 2 %
    const committed = [400, 400, 200, 150, 148, 147, 146];
    const heap = startHeapRelease({
      events,
      clock,
      log: pino({ level: 'silent' }),
      collect: async (c) => {
        collections++;
        compacting.push(c?.compact === true);
      },
      heapCommitted: () => committed[Math.min(collections, committed.length - 1)] as number,
      heapUsed: () => 70 * 2 ** 20, // the live heap of 100,000 devices
      policy: { ...P, minRegistrations: 100, quietMs: 3000 },
    });
    const second = async (registers: number, keepalives: number): Promise<void> => {
      for (let i = 0; i < registers; i++) events.emit('uplink', { deviceId: `3402000000132000${String(i).padStart(4, '0')}`, at: clock.now(), kind: 'register' });
      for (let i = 0; i < keepalives; i++) events.emit('uplink', { deviceId: '34020000001320000001', at: clock.now(), kind: 'keepalive' });
      clock.advance(WINDOW_MS);
      await new Promise((r) => setImmediate(r));
    };
    for (let i = 0; i < 5; i++) await second(50, 0); // a storm of 250
    for (let i = 0; i < 10; i++) await second(0, 500); // keepalives only: calm for the policy
    // 400 (first: frees), 200 (-50 %), 150 (-25 %), 148 (-1.3 %: stop)
    assert.equal(collections, 4);
    assert.deepEqual(compacting, [false, true, false, false], 'the second round evacuates every page');
    assert.equal(heap.releases, 1);
    for (let i = 0; i < 10; i++) await second(0, 500);
    assert.equal(collections, 4, 'no new storm, no new collection');
    await heap.close();
    await heap.close();
    assert.equal(clock.pending, 0, 'close() leaves no timer');
  });
});

/**
 * A heap release on a fake clock after a 20-registration storm (minRegistrations 10, quiet 1 s), its
 * windows turned `windows` times; `collect` and the heap's figures are the test's.
 */
async function releaseAfterStorm(
  o: Pick<Parameters<typeof startHeapRelease>[0], 'collect' | 'heapCommitted' | 'heapUsed'> & { windows: number; clock?: FakeClock },
): Promise<void> {
  const clock = o.clock ?? new FakeClock(0);
  const events = createDeviceEvents(pino({ level: 'silent' }));
  const heap = startHeapRelease({
    events,
    clock,
    log: pino({ level: 'silent' }),
    collect: o.collect,
    heapCommitted: o.heapCommitted,
    ...(o.heapUsed === undefined ? {} : { heapUsed: o.heapUsed }),
    policy: { ...P, minRegistrations: 10, quietMs: 1000 },
  });
  for (let i = 0; i < 20; i++) events.emit('uplink', { deviceId: '34020000001320000001', at: 0, kind: 'register' });
  for (let i = 0; i < o.windows; i++) {
    clock.advance(WINDOW_MS);
    await new Promise((r) => setImmediate(r));
  }
  await heap.close();
}

describe('heap release rounds', () => {
  it(`stops at MAX_ROUNDS (${MAX_ROUNDS}) however much each round gives back`, async () => {
    let collections = 0;
    await releaseAfterStorm({
      collect: async () => {
        collections++;
      },
      heapCommitted: () => 1000 / 2 ** collections, // halves every round
      windows: 5,
    });
    assert.equal(collections, MAX_ROUNDS);
  });
});

describe('heap release on a large live heap', () => {
  it(`never compacts fully over COMPACT_MAX_USED_BYTES (${COMPACT_MAX_USED_BYTES / 2 ** 20} MB in objects)`, async () => {
    const compacting: boolean[] = [];
    await releaseAfterStorm({
      collect: async (c) => {
        compacting.push(c?.compact === true);
      },
      heapCommitted: () => 4000 - 100 * compacting.length, // 2.5 % a round: goes on
      heapUsed: () => COMPACT_MAX_USED_BYTES + 1, // 1,000,000 devices
      windows: 3,
    });
    assert.ok(compacting.length >= 3);
    assert.ok(compacting.every((c) => !c));
  });
});

describe('heap release time budget', () => {
  it(`starts no new round once the release has taken MAX_RELEASE_MS (${MAX_RELEASE_MS} ms)`, async () => {
    const clock = new FakeClock(0);
    let collections = 0;
    await releaseAfterStorm({
      clock,
      collect: async () => {
        collections++;
        await Promise.resolve();
        clock.advance(MAX_RELEASE_MS * 0.6); // each collection a long pause (1,000,000 devices)
      },
      heapCommitted: () => 1000 / 2 ** collections,
      windows: 3,
    });
    assert.equal(collections, 2); // 0.6 of the budget, 1.2: stop
  });
});

describe('exposeCollector', () => {
  it("gives V8's full collection without exposing gc to the main context", async () => {
    const collect = exposeCollector();
    assert.ok(collect !== null);
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
    let garbage: object | null = { payload: new Array(1000).fill('x') };
    const ref = new WeakRef(garbage);
    garbage = null;
    // a turn first: WeakRef targets are kept until the end of the job that created or read them
    await new Promise((r) => setImmediate(r));
    await collect();
    assert.equal(ref.deref(), undefined);
    await collect({ compact: true }); // V8's own flag: accepted, and off again after
    await collect();
  });
});
