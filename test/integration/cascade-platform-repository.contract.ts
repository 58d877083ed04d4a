/**
 * Behaviour every PlatformRepository must have (SPEC CASC-2), run by
 * cascade-platform-repository.test.ts against the memory repository and a real MariaDB. Not a test
 * file itself.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { upstreamPlatform, type CascadeError, type PlatformRepository, type SharedChannel, type UpstreamPlatform } from '@vms/cascade';

export interface PlatformRepositoryFixture {
  repo: PlatformRepository;
  close(): Promise<void>;
}

export const LOCAL_ID = '34020000002000000001';
export const UP1 = '34010000002000000001';
export const UP2 = '35010000002000000001';
const NVR1 = '34020000001180000001';
const NVR2 = '34020000001180000002';

export const platform = (serverId: string, over: Partial<UpstreamPlatform> = {}): UpstreamPlatform =>
  upstreamPlatform({ serverId, host: '10.1.2.3', localId: LOCAL_ID, password: 'pw', ...over });

const ch = (deviceId: string, channelId: string, over: Partial<SharedChannel> = {}): SharedChannel => ({
  deviceId,
  channelId,
  catalogGroupId: null,
  parentId: null,
  ...over,
});
const code = (c: string) => (e: CascadeError) => e.code === c;

export function platformRepositoryContract(label: string, make: () => Promise<PlatformRepositoryFixture>): void {
  describe(`PlatformRepository contract: ${label}`, () => {
    let fx: PlatformRepositoryFixture;
    let repo: PlatformRepository;
    beforeEach(async () => {
      fx = await make();
      repo = fx.repo;
    });
    afterEach(async () => {
      await fx.close();
    });

    it('starts empty', async () => {
      assert.deepEqual(await repo.listAll(), []);
      assert.deepEqual(await repo.listEnabled(), []);
      assert.equal(await repo.get(UP1), null);
      assert.deepEqual(await repo.listChannels(UP1), []);
      assert.deepEqual(await repo.sharesOf(NVR1, '34020000001310000001'), []);
    });

    it('stores every field and reads it back unchanged; lists ordered by server id, enabled only where asked', async () => {
      const full = platform(UP2, {
        tenantId: 'tenant_B-01', // V006 (SPEC SEC-2)
        name: '省厅平台 "A"',
        domain: 'gb.example.org',
        host: 'fd00::7',
        port: 15060,
        transport: 'tcp',
        password: 'päss;wörd',
        registerExpiresS: 600,
        keepaliveIntervalS: 30,
        maxKeepaliveFailures: 5,
        charset: 'UTF-8',
        enabled: false,
        catalog: { groupId: '34020000002150000001', groupName: '东区' },
      });
      await repo.upsert(full);
      await repo.upsert(platform(UP1));
      assert.deepEqual(await repo.get(UP2), full);
      assert.deepEqual((await repo.listAll()).map((p) => p.serverId), [UP1, UP2]);
      assert.deepEqual((await repo.listEnabled()).map((p) => p.serverId), [UP1]);
      assert.deepEqual(await repo.get(UP1), platform(UP1));
      assert.equal((await repo.get(UP1))?.tenantId, '000000', 'the default tenant');
      await repo.upsert({ ...full, tenantId: '100001' });
      assert.equal((await repo.get(UP2))?.tenantId, '100001', 'an upsert may move it (the API decides who may)');
      await assert.rejects(repo.upsert({ ...full, tenantId: 'x'.repeat(13) }), code('CASCADE_ERR_INVALID_PLATFORM'));
    });

    it('upsert replaces the record; an invalid one is refused and nothing changes', async () => {
      await repo.upsert(platform(UP1));
      await repo.upsert(platform(UP1, { host: '10.9.9.9', enabled: false }));
      assert.deepEqual([(await repo.get(UP1))?.host, (await repo.get(UP1))?.enabled], ['10.9.9.9', false]);
      await assert.rejects(repo.upsert({ ...platform(UP1), port: 0 }), code('CASCADE_ERR_INVALID_PLATFORM'));
      assert.equal((await repo.get(UP1))?.port, 5060);
    });

    it('shares channels with a placement, lists them ordered, updates placement on re-share, unshares', async () => {
      await repo.upsert(platform(UP1));
      await repo.shareChannels(UP1, [ch(NVR2, '34020000001310000009'), ch(NVR1, '34020000001310000002'), ch(NVR1, '34020000001310000001')]);
      await repo.shareChannels(UP1, [ch(NVR1, '34020000001310000002', { parentId: '34020000002160000001', catalogGroupId: '34020000002150000001' })]);
      assert.deepEqual(await repo.listChannels(UP1), [
        ch(NVR1, '34020000001310000001'),
        ch(NVR1, '34020000001310000002', { parentId: '34020000002160000001', catalogGroupId: '34020000002150000001' }),
        ch(NVR2, '34020000001310000009'),
      ]);
      assert.equal(await repo.unshareChannels(UP1, [ch(NVR1, '34020000001310000001'), ch(NVR1, '34020000001310000077')]), 1);
      assert.deepEqual((await repo.listChannels(UP1)).map((c) => c.channelId), ['34020000001310000002', '34020000001310000009']);
    });

    it('replaceChannels swaps the whole list; large lists work', async () => {
      await repo.upsert(platform(UP1));
      await repo.shareChannels(UP1, [ch(NVR1, 'old-1'), ch(NVR1, 'old-2')]);
      const many = Array.from({ length: 1201 }, (_, i) => ch(NVR2, `3402000000131${String(i).padStart(7, '0')}`));
      await repo.replaceChannels(UP1, many);
      const listed = await repo.listChannels(UP1);
      assert.equal(listed.length, 1201);
      assert.ok(listed.every((c) => c.deviceId === NVR2));
      await repo.replaceChannels(UP1, []);
      assert.deepEqual(await repo.listChannels(UP1), []);
    });

    it('sharesOf: every platform receiving a channel, with its placement there, ordered by platform', async () => {
      await repo.upsert(platform(UP2));
      await repo.upsert(platform(UP1, { enabled: false }));
      await repo.shareChannels(UP2, [ch(NVR1, '34020000001310000001')]);
      await repo.shareChannels(UP1, [ch(NVR1, '34020000001310000001', { parentId: 'p1' }), ch(NVR1, '34020000001310000002')]);
      assert.deepEqual(await repo.sharesOf(NVR1, '34020000001310000001'), [
        { ...ch(NVR1, '34020000001310000001', { parentId: 'p1' }), platformId: UP1 },
        { ...ch(NVR1, '34020000001310000001'), platformId: UP2 },
      ]);
    });

    it('sharesOfDevice: the shares of one device only, by channel then platform, at most `limit`', async () => {
      await repo.upsert(platform(UP2));
      await repo.upsert(platform(UP1, { enabled: false }));
      await repo.shareChannels(UP2, [ch(NVR1, '34020000001310000002'), ch(NVR1, '34020000001310000001'), ch(NVR2, '34020000001310000001')]);
      await repo.shareChannels(UP1, [ch(NVR1, '34020000001310000001', { parentId: 'p1' })]);
      assert.deepEqual(await repo.sharesOfDevice(NVR1, 10), [
        { ...ch(NVR1, '34020000001310000001', { parentId: 'p1' }), platformId: UP1 },
        { ...ch(NVR1, '34020000001310000001'), platformId: UP2 },
        { ...ch(NVR1, '34020000001310000002'), platformId: UP2 },
      ]);
      assert.deepEqual((await repo.sharesOfDevice(NVR1, 2)).map((s) => [s.channelId, s.platformId]), [
        ['34020000001310000001', UP1],
        ['34020000001310000001', UP2],
      ]);
      assert.deepEqual(await repo.sharesOfDevice('34020000001180000099', 10), []);
    });

    it('sharesOfDevice follows every write: none stored yet, shared, replaced, unshared, the platform removed', async () => {
      assert.deepEqual(await repo.sharesOfDevice(NVR1, 10), [], 'nothing shared yet');
      await repo.upsert(platform(UP1));
      assert.deepEqual(await repo.sharesOfDevice(NVR1, 10), []);
      await repo.shareChannels(UP1, [ch(NVR1, 'c1')]);
      assert.deepEqual((await repo.sharesOfDevice(NVR1, 10)).map((s) => s.channelId), ['c1']);
      await repo.replaceChannels(UP1, [ch(NVR1, 'c2')]);
      assert.deepEqual((await repo.sharesOfDevice(NVR1, 10)).map((s) => s.channelId), ['c2']);
      assert.equal(await repo.unshareChannels(UP1, [{ deviceId: NVR1, channelId: 'c2' }]), 1);
      assert.deepEqual(await repo.sharesOfDevice(NVR1, 10), []);
      await repo.replaceChannels(UP1, [ch(NVR1, 'c3')]);
      assert.deepEqual((await repo.sharesOfDevice(NVR1, 10)).map((s) => s.channelId), ['c3']);
      await repo.remove(UP1);
      assert.deepEqual(await repo.sharesOfDevice(NVR1, 10), []);
    });

    it('forgetChannels: one channel or a whole device, on every platform', async () => {
      await repo.upsert(platform(UP1));
      await repo.upsert(platform(UP2));
      for (const p of [UP1, UP2]) await repo.shareChannels(p, [ch(NVR1, 'c1'), ch(NVR1, 'c2'), ch(NVR2, 'c1')]);
      assert.equal(await repo.forgetChannels(NVR1, 'c1'), 2);
      assert.equal(await repo.forgetChannels(NVR1), 2);
      assert.deepEqual((await repo.listChannels(UP1)).map((c) => [c.deviceId, c.channelId]), [[NVR2, 'c1']]);
      assert.equal(await repo.forgetChannels('34020000001180000099'), 0);
    });

    it('unknown platform: sharing is refused (even an empty list); bad channels are refused all-or-nothing', async () => {
      await assert.rejects(repo.shareChannels(UP1, [ch(NVR1, 'c1')]), code('CASCADE_ERR_PLATFORM_NOT_FOUND'));
      await assert.rejects(repo.shareChannels(UP1, []), code('CASCADE_ERR_PLATFORM_NOT_FOUND'));
      await assert.rejects(repo.replaceChannels(UP1, []), code('CASCADE_ERR_PLATFORM_NOT_FOUND'));
      await repo.upsert(platform(UP1));
      await assert.rejects(repo.shareChannels(UP1, [ch(NVR1, 'c1'), ch(NVR1, 'bad id')]), code('CASCADE_ERR_INVALID_CHANNEL'));
      await assert.rejects(repo.replaceChannels(UP1, [ch(NVR1, 'c1', { catalogGroupId: '12' })]), code('CASCADE_ERR_INVALID_CHANNEL'));
      assert.deepEqual(await repo.listChannels(UP1), []);
    });

    it('remove drops the platform and its channel list', async () => {
      await repo.upsert(platform(UP1));
      await repo.shareChannels(UP1, [ch(NVR1, 'c1')]);
      assert.equal(await repo.remove(UP1), true);
      assert.equal(await repo.remove(UP1), false);
      assert.deepEqual(await repo.sharesOf(NVR1, 'c1'), []);
      await repo.upsert(platform(UP1));
      assert.deepEqual(await repo.listChannels(UP1), [], 'a re-created platform starts with no channels');
    });

    it('close is idempotent; later calls reject with CASCADE_ERR_CLOSED', async () => {
      await repo.close();
      await repo.close();
      await assert.rejects(repo.listEnabled(), code('CASCADE_ERR_CLOSED'));
      await assert.rejects(repo.sharesOf(NVR1, 'c1'), code('CASCADE_ERR_CLOSED'));
    });
  });
}
