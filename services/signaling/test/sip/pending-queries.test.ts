import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { FakeClock } from '../../src/core/clock.ts';
import { DeviceTimeoutError, ShuttingDownError } from '../../src/errors/catalog.ts';
import { PendingQueries, seedFromClock, snKey, type Assembly } from '../../src/sip/pending-queries.ts';

const DEV = '34020000001320000001';
const OTHER = '34020000001320000002';
const log = pino({ level: 'silent' });

/** Collects numbers until `want` arrived; partial = what came, when anything came. */
function counting(want: number): Assembly<number, number[]> & { got: number[] } {
  const got: number[] = [];
  return {
    got,
    add(n) {
      got.push(n);
      return got.length >= want;
    },
    partial: () => (got.length > 0 ? [...got] : undefined),
    result: () => [...got],
  };
}

const spec = (assembly: Assembly<number, number[]>, extra: Partial<{ firstTimeoutMs: number; nextTimeoutMs: number; maxTotalMs: number }> = {}) => ({
  deviceId: DEV,
  cmdType: 'Catalog',
  operation: 'catalog query',
  firstTimeoutMs: 1000,
  assembly,
  ...extra,
});

describe('PendingQueries', () => {
  it('hands out increasing SNs from a clock-derived seed and matches by SN, device and CmdType', async () => {
    const clock = new FakeClock(Date.UTC(2025, 5, 1));
    const p = new PendingQueries({ clock, log });
    const a = p.open(spec(counting(1)));
    const b = p.open(spec(counting(1)));
    assert.equal(a.sn, seedFromClock(clock.now()));
    assert.equal(b.sn, a.sn + 1);
    assert.equal(p.deliver(OTHER, 'Catalog', String(a.sn), 1), 'unmatched', 'another device with the same SN');
    assert.equal(p.deliver(DEV, 'DeviceInfo', String(a.sn), 1), 'unmatched', 'another CmdType');
    assert.equal(p.deliver(DEV, 'Catalog', '1', 1), 'unmatched', 'a device-chosen SN (sample 07 pushes SN 1)');
    assert.equal(p.deliver(DEV, 'Catalog', ` 00${a.sn}`, 7), 'matched', 'SNs compare as numbers');
    assert.deepEqual(await a.result, [7]);
    assert.equal(p.size, 1);
    assert.equal(p.deliver(DEV, 'Catalog', String(a.sn), 8), 'late', 'a reply after settling is late, not unsolicited');
    assert.equal(p.deliver(DEV, 'Catalog', 'abc', 8), 'unmatched');
    p.close();
    await assert.rejects(b.result, ShuttingDownError);
  });

  it('assembles several responses, re-arming the gap timer after each', async () => {
    const clock = new FakeClock(0);
    const p = new PendingQueries({ clock, log, snSeed: 100 });
    const h = p.open(spec(counting(3), { firstTimeoutMs: 1000, nextTimeoutMs: 300 }));
    clock.advance(900);
    assert.equal(p.deliver(DEV, 'Catalog', '100', 1), 'matched');
    clock.advance(250);
    assert.equal(p.deliver(DEV, 'Catalog', '100', 2), 'matched');
    clock.advance(250);
    assert.equal(p.deliver(DEV, 'Catalog', '100', 3), 'matched');
    assert.deepEqual(await h.result, [1, 2, 3]);
    assert.equal(clock.pending, 0, 'no timer left behind');
  });

  it('times out per phase: nothing came → DeviceTimeoutError(response); something came → partial result', async () => {
    const clock = new FakeClock(0);
    const p = new PendingQueries({ clock, log, snSeed: 5 });
    const none = p.open(spec(counting(2)));
    const some = p.open(spec(counting(2), { nextTimeoutMs: 200 }));
    p.deliver(DEV, 'Catalog', String(some.sn), 1);
    clock.advance(200);
    assert.deepEqual(await some.result, [1], 'partial kept when the gap timer fires');
    clock.advance(800);
    const err = await none.result.then(
      () => assert.fail('should time out'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof DeviceTimeoutError);
    assert.equal(err.phase, 'response');
    assert.equal(err.deviceId, DEV);
    assert.equal(p.size, 0);
  });

  it('bounds a slow trickle by maxTotalMs', async () => {
    const clock = new FakeClock(0);
    const p = new PendingQueries({ clock, log, snSeed: 9 });
    const h = p.open(spec(counting(100), { firstTimeoutMs: 500, nextTimeoutMs: 500, maxTotalMs: 1200 }));
    for (let i = 0; i < 5; i++) {
      clock.advance(400);
      p.deliver(DEV, 'Catalog', '9', i);
    }
    assert.deepEqual(await h.result, [0, 1], 'the wait ends at 1200 ms, before the page that arrives then');
  });

  it('fail() rejects with the caller’s error (request phase) and later replies are late', async () => {
    const clock = new FakeClock(0);
    const p = new PendingQueries({ clock, log, snSeed: 1 });
    const h = p.open(spec(counting(1)));
    const sipTimeout = new DeviceTimeoutError(DEV, 'catalog query', 'request');
    p.fail(h.sn, sipTimeout);
    await assert.rejects(h.result, (e) => e === sipTimeout);
    assert.equal(p.deliver(DEV, 'Catalog', String(h.sn), 1), 'late');
    p.fail(h.sn, sipTimeout); // no-op
  });

  it('a throwing assembly drops that body but keeps waiting', async () => {
    const clock = new FakeClock(0);
    const p = new PendingQueries({ clock, log, snSeed: 1 });
    let calls = 0;
    const h = p.open({
      ...spec(counting(1)),
      assembly: {
        add: () => {
          if (calls++ === 0) throw new Error('bad page');
          return true;
        },
        partial: () => undefined,
        result: () => [42],
      },
    });
    assert.equal(p.deliver(DEV, 'Catalog', String(h.sn), 1), 'matched');
    assert.equal(p.size, 1);
    p.deliver(DEV, 'Catalog', String(h.sn), 2);
    assert.deepEqual(await h.result, [42]);
  });

  it('after close, open() rejects at once', async () => {
    const p = new PendingQueries({ clock: new FakeClock(0), log });
    p.close();
    await assert.rejects(p.open(spec(counting(1))).result, ShuttingDownError);
  });

  it('snKey reads SNs as numbers and refuses the rest', () => {
    assert.equal(snKey('0101'), 101);
    assert.equal(snKey(' 7 '), 7);
    assert.equal(snKey('1796020507705'), 1796020507705, 'Ellean sends ms timestamps (sample 04)');
    assert.equal(snKey('-1'), null);
    assert.equal(snKey('1e3'), null);
    assert.equal(snKey(''), null);
  });
});
