// The pure parts of the per-device bounds (SPEC SEC-3), time passed in: the token bucket, the cost of
// a message and the catalog assembly cap (large bodies: manscdp-parse-pool.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManscdpCommand, type CatalogResponse } from '@vms/gb28181';
import { createCatalogAssembly } from './catalog-assembler.ts';
import { addressMatcher, createAddressBuckets, createHeldBuckets, messageCost } from './device-admission.ts';

/** The buckets as they were kept before, in a WeakMap by session: the reference the held ones must match. */
function createWeakMapBuckets(ratePerSec: number, burst: number) {
  const buckets = new WeakMap<object, { tokens: number; at: number }>();
  return {
    take(key: object, cost: number, now: number): boolean {
      let b = buckets.get(key);
      if (b === undefined) buckets.set(key, (b = { tokens: burst, at: now }));
      else if (now > b.at) {
        b.tokens = Math.min(burst, b.tokens + ((now - b.at) * ratePerSec) / 1000);
        b.at = now;
      }
      if (b.tokens < cost) return false;
      b.tokens -= cost;
      return true;
    },
  };
}

describe('per-device token bucket', () => {
  it('starts full, refuses past the burst, refills at the rate, never above the burst', () => {
    const b = createHeldBuckets(10, 5);
    const dev = { rateTokens: 0, rateAt: -1 };
    const other = { rateTokens: 0, rateAt: -1 };
    for (let i = 0; i < 5; i++) assert.equal(b.take(dev, 1, 1000), true);
    assert.equal(b.take(dev, 1, 1000), false);
    assert.equal(b.take(other, 1, 1000), true, 'buckets are per device');
    assert.equal(b.take(dev, 1, 1050), false, '0.5 token after 50 ms');
    assert.equal(b.take(dev, 1, 1100), true, 'one token after 100 ms');
    assert.equal(b.take(dev, 5, 1_000_000), true, 'a long pause refills to the burst only');
    assert.equal(b.take(dev, 1, 1_000_000), false);
    assert.equal(b.take(dev, 3, 1_000_000 + 250), false, 'a refused take takes nothing');
    assert.equal(b.take(dev, 2, 1_000_000 + 250), true);
  });

  it('kept on its holder (createHeldBuckets): the same decisions as the WeakMap buckets, a new holder full', () => {
    let state = 0x6b75_636b;
    const rand = (n: number): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    const weak = createWeakMapBuckets(10, 5);
    const held = createHeldBuckets(10, 5);
    const keys = [{}, {}, {}];
    const holders = keys.map(() => ({ rateTokens: 0, rateAt: -1 }));
    let now = 1000;
    for (let i = 0; i < 20_000; i++) {
      now += rand(4) === 0 ? rand(2000) : rand(30);
      const k = rand(keys.length);
      const cost = 1 + rand(3);
      assert.equal(held.take(holders[k]!, cost, now), weak.take(keys[k]!, cost, now), `step ${i}`);
      if (rand(500) === 0) {
        keys[k] = {}; // re-registered: a new session object
        holders[k] = { rateTokens: 0, rateAt: -1 };
      }
    }
    const fresh = { rateTokens: 0, rateAt: -1 };
    assert.deepEqual([1, 2, 3, 4, 5, 6].map(() => held.take(fresh, 1, 0)), [true, true, true, true, true, false], 'full (the burst) at the first take, at clock 0 too');
  });

  it('a message costs one token plus one per full 4 KiB of body', () => {
    assert.deepEqual([0, 300, 4095, 4096, 65_000].map(messageCost), [1, 1, 1, 2, 16]);
  });
});

describe('per-address buckets (senders not registered here)', () => {
  it('holds each address to its rate and burst, independently', () => {
    const b = createAddressBuckets(10, 3);
    assert.deepEqual([1, 2, 3, 4].map(() => b.take('10.0.0.1', 1, 0)), [true, true, true, false]);
    assert.equal(b.take('10.0.0.2', 1, 0), true, 'another address has its own bucket');
    assert.equal(b.take('10.0.0.1', 1, 99), false, '0.99 token refilled after 99 ms at 10/s');
    assert.equal(b.take('10.0.0.1', 1, 100), true);
  });

  it('remembers at most maxAddresses, forgetting the least recently used', () => {
    const b = createAddressBuckets(1, 1, 3);
    for (const a of ['a', 'b', 'c']) assert.equal(b.take(a, 1, 0), true);
    assert.equal(b.take('a', 1, 0), false, 'a is empty and now the most recently used');
    assert.equal(b.take('d', 1, 0), true);
    assert.equal(b.size, 3);
    assert.equal(b.take('a', 1, 0), false, 'a was kept (b, the least recently used, went)');
    assert.equal(b.take('b', 1, 0), true, 'b comes back with a full bucket');
    for (let i = 0; i < 10_000; i++) b.take(`spoofed-${i}`, 1, 0);
    assert.equal(b.size, 3);
  });
});

describe('addressMatcher (edge addresses)', () => {
  it('matches listed addresses and CIDR blocks, of either family, and nothing else', () => {
    const m = addressMatcher(['10.9.9.9', '10.244.0.0/16', 'fd00::/8']);
    assert.deepEqual(['10.9.9.9', '10.244.3.7', '10.245.0.1', 'fd12::1', '2001:db8::1', 'not-an-ip'].map(m), [true, true, false, true, false, false]);
    assert.equal(addressMatcher([])('10.9.9.9'), false);
  });
});

describe('catalog assembly cap', () => {
  const page = (ids: number[], sumNum: number): CatalogResponse => {
    const items = ids.map((n) => `<Item><DeviceID>340200000013100${String(n).padStart(5, '0')}</DeviceID><Status>ON</Status></Item>`).join('');
    const body = `<?xml version="1.0"?><Response><CmdType>Catalog</CmdType><SN>1</SN><DeviceID>34020000001320000001</DeviceID><SumNum>${sumNum}</SumNum><DeviceList Num="${ids.length}">${items}</DeviceList></Response>`;
    return parseManscdpCommand(Buffer.from(body)).body as CatalogResponse;
  };
  it('holds at most maxItems distinct items, however large the announced SumNum; known ids still update', () => {
    const a = createCatalogAssembly(3);
    assert.equal(a.add(page([1, 2], 1_000_000)), false);
    assert.equal(a.add(page([3, 4, 5], 1_000_000)), false);
    assert.equal(a.received, 3);
    a.add(page([1], 1_000_000));
    assert.equal(a.partial()?.items.length, 3);
  });
});
