// SSRC allocation per media node: GB/T 28181 Annex F layout, uniqueness, release, exhaustion.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSsrcAllocator, ssrcDomainPart, type MediaError } from '../src/index.ts';

const SERVER_ID = '34020000002000000001'; // digits 4-8: "20000"

describe('SSRC allocator', () => {
  it('layout: purpose digit, domain digits 4-8, 4-digit sequence from 0001', () => {
    const a = createSsrcAllocator({ serverId: SERVER_ID });
    assert.equal(a.allocate('zlm-a', 'live'), '0200000001');
    assert.equal(a.allocate('zlm-a', 'live'), '0200000002');
    assert.equal(a.allocate('zlm-a', 'playback'), '1200000001');
    assert.equal(a.allocate('zlm-a', 'download'), '1200000002', 'download is a history stream too');
    assert.equal(ssrcDomainPart('4401060000'), '10600', 'a 10-digit realm works too');
    assert.throws(() => createSsrcAllocator({ serverId: '3402' }), RangeError);
  });

  it('unique per node; separate nodes have separate pools', () => {
    const a = createSsrcAllocator({ serverId: SERVER_ID });
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) seen.add(a.allocate('zlm-a', 'live'));
    assert.equal(seen.size, 500);
    assert.equal(a.allocate('zlm-b', 'live'), '0200000001');
    assert.deepEqual([a.inUse('zlm-a'), a.inUse('zlm-b'), a.inUse('zlm-c')], [500, 1, 0]);
  });

  it('release frees; a released SSRC is not reused until the sequence wraps', () => {
    const a = createSsrcAllocator({ serverId: SERVER_ID });
    const first = a.allocate('zlm-a', 'live');
    assert.equal(a.release('zlm-a', first), true);
    assert.equal(a.release('zlm-a', first), false, 'double release');
    assert.equal(a.release('zlm-x', first), false, 'unknown node');
    assert.equal(a.allocate('zlm-a', 'live'), '0200000002', 'moves on rather than reusing 0001 at once');
    assert.equal(a.inUse('zlm-a'), 1);
  });

  it('exhaustion after 9999 per purpose → MEDIA_ERR_SSRC_EXHAUSTED; a release makes room; sequence 0000 never used', () => {
    const a = createSsrcAllocator({ serverId: SERVER_ID });
    const all = Array.from({ length: 9999 }, () => a.allocate('zlm-a', 'live'));
    assert.equal(new Set(all).size, 9999);
    assert.ok(!all.includes('0200000000'));
    assert.equal(all.at(-1), '0200009999');
    assert.throws(() => a.allocate('zlm-a', 'live'), (e: MediaError) => e.code === 'MEDIA_ERR_SSRC_EXHAUSTED');
    assert.equal(a.allocate('zlm-a', 'playback'), '1200000001', 'the history pool is separate');
    a.release('zlm-a', '0200004711');
    assert.equal(a.allocate('zlm-a', 'live'), '0200004711');
  });

  it('reserve marks restored streams in use; allocate then skips them', () => {
    const a = createSsrcAllocator({ serverId: SERVER_ID });
    assert.equal(a.reserve('zlm-a', '0200000001'), true);
    assert.equal(a.reserve('zlm-a', '0200000001'), false);
    assert.equal(a.allocate('zlm-a', 'live'), '0200000002');
    assert.throws(() => a.reserve('zlm-a', '2200000001'), RangeError);
  });
});
