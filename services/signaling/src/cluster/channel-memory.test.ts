import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../core/clock.ts';
import { ChannelMemory } from './channel-memory.ts';
import { OWNER_CACHE_TTL_MS } from './owner-cache.ts';

const CH = '34020000001310000001';
const DEV = '34020000001320000001';

describe('channel → device memory for the HTTP edge', () => {
  it('answers for as long as an owner-cache entry lives, from the lookup that produced it', () => {
    const clock = new FakeClock(1_000_000);
    const m = new ChannelMemory({ clock });
    assert.equal(m.get(CH), undefined);
    m.remember(CH, DEV);
    clock.advance(OWNER_CACHE_TTL_MS - 1);
    assert.equal(m.get(CH), DEV);
    clock.advance(1);
    assert.equal(m.get(CH), undefined);
    assert.equal(m.size, 0, 'an expired entry is dropped when read');
    m.remember(CH, DEV);
    m.remember(CH, '34020000001320000002'); // the channel moved: the newest lookup wins
    assert.equal(m.get(CH), '34020000001320000002');
  });

  it('stays bounded, dropping the oldest lookup; ttl 0 remembers nothing', () => {
    const clock = new FakeClock(0);
    const m = new ChannelMemory({ clock, maxEntries: 2 });
    m.remember('c1', 'd1');
    m.remember('c2', 'd2');
    m.remember('c1', 'd1'); // refreshed: now the newest
    m.remember('c3', 'd3');
    assert.deepEqual([m.get('c1'), m.get('c2'), m.get('c3')], ['d1', undefined, 'd3']);
    const off = new ChannelMemory({ clock, ttlMs: 0 });
    off.remember('c1', 'd1');
    assert.equal(off.get('c1'), undefined);
  });
});
