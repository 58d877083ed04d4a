/**
 * Behaviour every MediaNodeRegistry must have (SPEC §9), run by media-node-registry.test.ts against
 * the memory registry and a real MariaDB. Not a test file itself.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { MediaError, MediaNode, MediaNodeRegistry } from '@vms/media';

export interface MediaNodeRegistryFixture {
  registry: MediaNodeRegistry;
  close(): Promise<void>;
}

export const mediaNode = (id: string, over: Partial<MediaNode> = {}): MediaNode => ({
  id,
  apiBaseUrl: 'http://10.0.0.21:80',
  secret: '035c73f7-bb6b-4889-a715-d9eb2d1925cc',
  rtpPortRange: { min: 30000, max: 30500 },
  sdpIp: '10.0.0.21',
  streamIp: 'media-1.example.com',
  hookBaseUrl: 'http://10.0.0.11:8080/vms/webhook',
  enabled: true,
  weight: 1,
  httpPort: 80,
  rtspPort: 554,
  rtmpPort: 1935,
  ...over,
});

export function mediaNodeRegistryContract(label: string, make: () => Promise<MediaNodeRegistryFixture>): void {
  describe(`MediaNodeRegistry contract: ${label}`, () => {
    let fx: MediaNodeRegistryFixture;
    let registry: MediaNodeRegistry;
    beforeEach(async () => {
      fx = await make();
      registry = fx.registry;
    });
    afterEach(async () => {
      await fx.close();
    });

    it('starts empty', async () => {
      assert.deepEqual(await registry.listAll(), []);
      assert.deepEqual(await registry.listEnabled(), []);
      assert.equal(await registry.get('zlm-a'), null);
    });

    it('stores every field and reads it back unchanged', async () => {
      const n = mediaNode('zlm-a', {
        apiBaseUrl: 'https://zlm-a.internal:8443/media',
        secret: 'päss wörd/+=',
        rtpPortRange: { min: 40000, max: 40999 },
        sdpIp: '203.0.113.7',
        streamIp: 'fd00::21',
        hookBaseUrl: '',
        enabled: false,
        weight: 7,
        httpPort: 8080,
        rtspPort: 8554,
        rtmpPort: 11935,
      });
      await registry.upsert(n);
      assert.deepEqual(await registry.get('zlm-a'), n);
    });

    it('upsert replaces the node with the same id', async () => {
      await registry.upsert(mediaNode('zlm-a'));
      await registry.upsert(mediaNode('zlm-a', { weight: 3, secret: 'rotated', enabled: false }));
      const all = await registry.listAll();
      assert.equal(all.length, 1);
      assert.deepEqual([all[0]?.weight, all[0]?.secret, all[0]?.enabled], [3, 'rotated', false]);
    });

    it('listEnabled skips disabled nodes; both lists are ordered by id', async () => {
      for (const id of ['zlm-c', 'zlm-a', 'zlm-b']) await registry.upsert(mediaNode(id, { enabled: id !== 'zlm-b' }));
      assert.deepEqual((await registry.listAll()).map((n) => n.id), ['zlm-a', 'zlm-b', 'zlm-c']);
      assert.deepEqual((await registry.listEnabled()).map((n) => n.id), ['zlm-a', 'zlm-c']);
    });

    it('ids are case-sensitive, as ZLM sends mediaServerId', async () => {
      await registry.upsert(mediaNode('Zlm-A', { weight: 1 }));
      await registry.upsert(mediaNode('zlm-a', { weight: 2 }));
      assert.equal((await registry.get('Zlm-A'))?.weight, 1);
      assert.equal((await registry.get('zlm-a'))?.weight, 2);
    });

    it('remove says whether a node was there', async () => {
      await registry.upsert(mediaNode('zlm-a'));
      assert.equal(await registry.remove('zlm-a'), true);
      assert.equal(await registry.remove('zlm-a'), false);
      assert.equal(await registry.get('zlm-a'), null);
    });

    it('an invalid node is refused before it is stored', async () => {
      await assert.rejects(
        registry.upsert(mediaNode('zlm-a', { rtpPortRange: { min: 31000, max: 30000 }, secret: '' })),
        (e: MediaError) => e.code === 'MEDIA_ERR_INVALID_NODE',
      );
      assert.deepEqual(await registry.listAll(), []);
    });

    it('after close every call rejects with MEDIA_ERR_CLOSED; close is idempotent', async () => {
      await registry.close();
      await registry.close();
      await assert.rejects(registry.listEnabled(), (e: MediaError) => e.code === 'MEDIA_ERR_CLOSED');
      await assert.rejects(registry.upsert(mediaNode('zlm-a')), (e: MediaError) => e.code === 'MEDIA_ERR_CLOSED');
    });
  });
}
