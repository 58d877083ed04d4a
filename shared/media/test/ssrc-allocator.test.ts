// SSRC allocation per media node, in-memory adapter: GB/T 28181 Annex F layout, uniqueness, release,
// exhaustion. The same behaviour on Redis (and across two instances) is pinned by
// test/integration/media-ssrc-allocator.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemorySsrcAllocator, ssrcDomainPart, type MediaError } from '../src/index.ts';

const SERVER_ID = '34020000002000000001'; // digits 4-8: "20000"

describe('SSRC allocator', () => {
  it('layout: purpose digit, domain digits 4-8, 4-digit sequence from 0001', async () => {
    const a = createMemorySsrcAllocator({ serverId: SERVER_ID });
    assert.equal(await a.allocate('zlm-a', 'live'), '0200000001');
    assert.equal(await a.allocate('zlm-a', 'live'), '0200000002');
    assert.equal(await a.allocate('zlm-a', 'playback'), '1200000001');
    assert.equal(await a.allocate('zlm-a', 'download'), '1200000002', 'download is a history stream too');
    assert.equal(ssrcDomainPart('4401060000'), '10600', 'a 10-digit realm works too');
    assert.throws(() => createMemorySsrcAllocator({ serverId: '3402' }), RangeError);
  });

  it('unique per node; separate nodes have separate pools', async () => {
    const a = createMemorySsrcAllocator({ serverId: SERVER_ID });
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) seen.add(await a.allocate('zlm-a', 'live'));
    assert.equal(seen.size, 500);
    assert.equal(await a.allocate('zlm-b', 'live'), '0200000001');
    assert.deepEqual([await a.inUse('zlm-a'), await a.inUse('zlm-b'), await a.inUse('zlm-c')], [500, 1, 0]);
  });

  it('release frees; a released SSRC is not reused until the sequence wraps', async () => {
    const a = createMemorySsrcAllocator({ serverId: SERVER_ID });
    const first = await a.allocate('zlm-a', 'live');
    assert.equal(await a.release('zlm-a', first), true);
    assert.equal(await a.release('zlm-a', first), false, 'double release');
    assert.equal(await a.release('zlm-x', first), false, 'unknown node');
    assert.equal(await a.allocate('zlm-a', 'live'), '0200000002', 'moves on rather than reusing 0001 at once');
    assert.equal(await a.inUse('zlm-a'), 1);
  });

  it('exhaustion after 9999 per purpose → MEDIA_ERR_SSRC_EXHAUSTED; a release makes room; sequence 0000 never used', async () => {
    const a = createMemorySsrcAllocator({ serverId: SERVER_ID });
    const all: string[] = [];
    for (let i = 0; i < 9999; i++) all.push(await a.allocate('zlm-a', 'live'));
    assert.equal(new Set(all).size, 9999);
    assert.ok(!all.includes('0200000000'));
    assert.equal(all.at(-1), '0200009999');
    await assert.rejects(a.allocate('zlm-a', 'live'), (e: MediaError) => e.code === 'MEDIA_ERR_SSRC_EXHAUSTED');
    assert.equal(await a.allocate('zlm-a', 'playback'), '1200000001', 'the history pool is separate');
    await a.release('zlm-a', '0200004711');
    assert.equal(await a.allocate('zlm-a', 'live'), '0200004711');
  });

  it('close: later calls reject with MEDIA_ERR_CLOSED', async () => {
    const a = createMemorySsrcAllocator({ serverId: SERVER_ID });
    await a.close();
    await a.close();
    await assert.rejects(a.allocate('zlm-a', 'live'), (e: MediaError) => e.code === 'MEDIA_ERR_CLOSED');
  });

  it('reserve marks restored streams in use; allocate then skips them', async () => {
    const a = createMemorySsrcAllocator({ serverId: SERVER_ID });
    assert.equal(await a.reserve('zlm-a', '0200000001'), true);
    assert.equal(await a.reserve('zlm-a', '0200000001'), false);
    assert.equal(await a.allocate('zlm-a', 'live'), '0200000002');
    await assert.rejects(async () => a.reserve('zlm-a', '2200000001'), RangeError);
  });
});
