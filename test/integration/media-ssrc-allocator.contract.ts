/**
 * Behaviour every SsrcAllocator must have (GB/T 28181 Annex F layout, unique per media node, release,
 * exhaustion, reserve, close), run by media-ssrc-allocator.test.ts against the in-memory adapter, a
 * real Redis and a real Redis Cluster. Not a test file itself.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { MediaError, SsrcAllocator } from '@vms/media';

export const SERVER_ID = '34020000002000000001'; // digits 4-8: "20000"

/** `make` gets a unique key prefix so cases never see each other's entries. */
export function ssrcAllocatorContract(label: string, make: (keyPrefix: string) => Promise<SsrcAllocator>): void {
  describe(`SsrcAllocator contract: ${label}`, () => {
    let a: SsrcAllocator;
    beforeEach(async () => {
      a = await make(`vms:test:${randomBytes(4).toString('hex')}:`);
    });
    afterEach(async () => {
      await a.close();
    });

    it('layout: purpose digit, domain digits 4-8 of the server id, 4-digit sequence from 0001', async () => {
      assert.equal(await a.allocate('zlm-a', 'live'), '0200000001');
      assert.equal(await a.allocate('zlm-a', 'live'), '0200000002');
      assert.equal(await a.allocate('zlm-a', 'playback'), '1200000001');
      assert.equal(await a.allocate('zlm-a', 'download'), '1200000002', 'download is a history stream too');
    });

    it('unique per node under concurrent calls; separate nodes have separate pools', async () => {
      const got = await Promise.all(Array.from({ length: 300 }, () => a.allocate('zlm-a', 'live')));
      assert.equal(new Set(got).size, 300);
      assert.ok(got.every((s) => /^020000\d{4}$/.test(s) && s !== '0200000000'));
      assert.equal(await a.allocate('zlm-b', 'live'), '0200000001');
      assert.deepEqual([await a.inUse('zlm-a'), await a.inUse('zlm-b'), await a.inUse('zlm-c')], [300, 1, 0]);
    });

    it('release frees once; a released SSRC is not reused until the sequence wraps', async () => {
      const first = await a.allocate('zlm-a', 'live');
      assert.equal(await a.release('zlm-a', first), true);
      assert.equal(await a.release('zlm-a', first), false, 'double release');
      assert.equal(await a.release('zlm-x', first), false, 'unknown node');
      assert.equal(await a.allocate('zlm-a', 'live'), '0200000002', 'moves on rather than reusing 0001 at once');
      assert.equal(await a.inUse('zlm-a'), 1);
    });

    it('9999 per purpose, then MEDIA_ERR_SSRC_EXHAUSTED; the history pool is separate; a release makes room', async () => {
      const all: string[] = [];
      for (let i = 0; i < 9999; i += 500) {
        all.push(...(await Promise.all(Array.from({ length: Math.min(500, 9999 - i) }, () => a.allocate('zlm-a', 'live')))));
      }
      assert.equal(new Set(all).size, 9999);
      assert.ok(!all.includes('0200000000') && all.includes('0200009999'));
      await assert.rejects(a.allocate('zlm-a', 'live'), (e: MediaError) => e.code === 'MEDIA_ERR_SSRC_EXHAUSTED');
      assert.equal(await a.allocate('zlm-a', 'playback'), '1200000001');
      assert.equal(await a.release('zlm-a', '0200004711'), true);
      assert.equal(await a.allocate('zlm-a', 'live'), '0200004711');
    });

    it('reserve marks a restored stream’s SSRC in use; allocate skips it; a malformed SSRC is a RangeError', async () => {
      assert.equal(await a.reserve('zlm-a', '0200000001'), true);
      assert.equal(await a.reserve('zlm-a', '0200000001'), false);
      assert.equal(await a.allocate('zlm-a', 'live'), '0200000002');
      await assert.rejects(async () => a.reserve('zlm-a', '2200000001'), RangeError);
      assert.equal(await a.release('zlm-a', '0200000001'), true, 'a reserved SSRC is released like an allocated one');
    });

    it('close: idempotent, later calls reject with MEDIA_ERR_CLOSED', async () => {
      await a.close();
      await a.close();
      await assert.rejects(a.allocate('zlm-a', 'live'), (e: MediaError) => e.code === 'MEDIA_ERR_CLOSED');
    });
  });
}
