// The DeviceRepository contract: one suite, run against every implementation
// (memory: device-repository.memory.test.ts; SQLite: device-repository.sqlite.test.ts; MariaDB:
// test/integration/device-repository-mysql.test.ts).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ChannelLimitError, DeviceNotFoundError } from '../../src/errors/catalog.ts';
import type { DeviceRepository, DeviceRepositoryLimits } from '../../src/devices/device-repository.port.ts';
import { DEFAULT_TENANT, type ChannelInput, type DeviceRegistration } from '../../src/devices/device.types.ts';

export interface ContractSubject {
  readonly repo: DeviceRepository;
  /** Closes the repository and releases whatever the factory opened. */
  dispose(): Promise<void>;
}

const T0 = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
const dev = (n: number): string => `3402000000132000${String(n).padStart(4, '0')}`;
const chan = (n: number): string => `3402000000131000${String(n).padStart(4, '0')}`;

const reg = (deviceId: string, at = T0, extra: Partial<DeviceRegistration> = {}): DeviceRegistration => ({
  deviceId,
  transport: 'UDP',
  remoteIp: '192.168.1.64',
  remotePort: 5060,
  expiresSec: 3600,
  at,
  ...extra,
});

const channel = (channelId: string, extra: Partial<ChannelInput> = {}): ChannelInput => ({
  channelId,
  name: 'Camera 1',
  manufacturer: 'Hikvision',
  model: 'IP Camera',
  owner: 'Owner',
  civilCode: '340200',
  address: 'Address',
  parentId: null,
  parental: false,
  status: 'ON',
  longitude: null,
  latitude: null,
  ptzType: null,
  extra: {},
  ...extra,
});

/** The channel cap every subject is created with, so the cap itself is part of the contract. */
const CAP = 6;

export function deviceRepositoryContract(name: string, factory: (limits: DeviceRepositoryLimits) => Promise<ContractSubject>): void {
  describe(`DeviceRepository contract: ${name}`, () => {
    let subject: ContractSubject;
    let repo: DeviceRepository;
    beforeEach(async () => {
      subject = await factory({ maxChannelsPerDevice: CAP });
      repo = subject.repo;
    });
    afterEach(async () => {
      await subject.dispose();
    });

    it('register creates an unknown device in the default tenant, online', async () => {
      const d = await repo.registerDevice(reg(dev(1), T0, { transport: 'TCP', remotePort: 15060 }));
      assert.equal(d.deviceId, dev(1));
      assert.equal(d.tenantId, DEFAULT_TENANT);
      assert.equal(d.transport, 'TCP');
      assert.equal(d.charset, 'GB2312');
      assert.equal(d.password, null);
      assert.equal(d.remoteIp, '192.168.1.64');
      assert.equal(d.remotePort, 15060);
      assert.equal(d.expiresSec, 3600);
      assert.equal(d.registeredAt, T0);
      assert.equal(d.keepaliveAt, T0);
      assert.equal(d.online, true);
      assert.equal(d.channelCount, 0);
      assert.deepEqual(await repo.getDevice(dev(1)), d);
      assert.equal(await repo.getDevice(dev(2)), null);
    });

    it('register keeps provisioned tenant, name, password and charset', async () => {
      const p = await repo.provisionDevice({ deviceId: dev(1), tenantId: '100001', name: '南门', password: 'pw', charset: 'UTF-8' }, T0);
      assert.equal(p.online, false);
      assert.equal(p.name, '南门');
      const d = await repo.registerDevice(reg(dev(1), T0 + 1000, { remoteIp: '10.0.0.9' }));
      assert.equal(d.tenantId, '100001');
      assert.equal(d.name, '南门');
      assert.equal(d.password, 'pw');
      assert.equal(d.charset, 'UTF-8');
      assert.equal(d.remoteIp, '10.0.0.9');
      assert.equal(d.online, true);
      const q = await repo.provisionDevice({ deviceId: dev(1), password: null }, T0 + 2000);
      assert.equal(q.password, null);
      assert.equal(q.tenantId, '100001', 'fields not given stay');
    });

    it('updateDeviceInfo stores reported fields and rejects unknown devices', async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.updateDeviceInfo(dev(1), { name: 'IPC', manufacturer: 'Dahua', model: 'DH-1', firmware: 'V2.8' }, T0 + 1);
      const d = await repo.getDevice(dev(1));
      assert.deepEqual([d?.name, d?.manufacturer, d?.model, d?.firmware], ['IPC', 'Dahua', 'DH-1', 'V2.8']);
      await assert.rejects(repo.updateDeviceInfo(dev(9), { name: 'x' }, T0), DeviceNotFoundError);
    });

    it('lists devices by tenant and online flag, ordered and paged', async () => {
      for (const n of [5, 3, 1, 4, 2]) await repo.registerDevice(reg(dev(n)));
      await repo.provisionDevice({ deviceId: dev(6), tenantId: '100001' }, T0);
      await repo.provisionDevice({ deviceId: dev(3), tenantId: '100001' }, T0);
      const all = await repo.listDevices({ page: 1, size: 10 });
      assert.deepEqual(all.items.map((d) => d.deviceId), [1, 2, 3, 4, 5, 6].map(dev));
      assert.equal(all.total, 6);
      const page2 = await repo.listDevices({ tenantId: DEFAULT_TENANT, page: 2, size: 2 });
      assert.deepEqual(page2.items.map((d) => d.deviceId), [dev(4), dev(5)]);
      assert.deepEqual([page2.total, page2.page, page2.size], [4, 2, 2]);
      const other = await repo.listDevices({ tenantId: '100001', online: false, page: 1, size: 10 });
      assert.deepEqual(other.items.map((d) => d.deviceId), [dev(6)]);
      const prefixed = await repo.listDevices({ idPrefix: dev(3).slice(0, 19), page: 1, size: 10 });
      assert.deepEqual([prefixed.items.map((d) => d.deviceId), prefixed.total], [[dev(1), dev(2), dev(3), dev(4), dev(5), dev(6)], 6], 'ids 1..6 share 19 digits');
      const one = await repo.listDevices({ idPrefix: dev(3), page: 1, size: 10 });
      assert.deepEqual(one.items.map((d) => d.deviceId), [dev(3)]);
      const ofTenant = await repo.listDevices({ idPrefix: '3402', tenantId: '100001', page: 1, size: 10 });
      assert.deepEqual(ofTenant.items.map((d) => d.deviceId), [dev(3), dev(6)]);
      assert.equal((await repo.listDevices({ idPrefix: '3403', page: 1, size: 10 })).total, 0);
      const beyond = await repo.listDevices({ page: 9, size: 10 });
      assert.deepEqual([beyond.items.length, beyond.total], [0, 6]);
      assert.equal(await repo.countOnlineDevices(), 5);
    });

    it('keepalive moves keepaliveAt forward only, is visible at once, and ignores unknown devices', async () => {
      await repo.registerDevice(reg(dev(1)));
      repo.touchKeepalive(dev(1), T0 + 60_000);
      repo.touchKeepalive(dev(1), T0 + 30_000);
      repo.touchKeepalive(dev(9), T0 + 60_000);
      const d = await repo.getDevice(dev(1));
      assert.equal(d?.keepaliveAt, T0 + 60_000);
      assert.equal(d?.online, true);
      assert.equal((await repo.listDevices({ page: 1, size: 10 })).items[0]?.keepaliveAt, T0 + 60_000);
      assert.equal(await repo.getDevice(dev(9)), null);
    });

    it('keepalive does not bring an offline device back online', async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.markOffline([dev(1)]);
      repo.touchKeepalive(dev(1), T0 + 1000);
      assert.equal((await repo.getDevice(dev(1)))?.online, false);
    });

    it('markOnline / markOffline report only real transitions', async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.registerDevice(reg(dev(2)));
      await repo.provisionDevice({ deviceId: dev(3) }, T0);
      assert.deepEqual(await repo.markOffline([dev(2), dev(1), dev(3), dev(9)]), [dev(1), dev(2)]);
      assert.deepEqual(await repo.markOffline([dev(1)]), []);
      assert.deepEqual(await repo.markOnline([dev(1), dev(9)], T0 + 5000), [dev(1)]);
      assert.deepEqual(await repo.markOnline([dev(1)], T0 + 6000), []);
      const d = await repo.getDevice(dev(1));
      assert.equal(d?.online, true);
      // An online device is left untouched: the owner re-asserts all its devices every offline scan, and
      // that must neither cost a write per device nor stand in for a keepalive the device never sent.
      assert.equal(d?.keepaliveAt, T0 + 5000);
      assert.deepEqual(await repo.markOnline([], T0), []);
      assert.deepEqual(await repo.markOffline([]), []);
    });

    it('markOnline of many ids with few or none offline (the owner re-asserting its devices every scan)', async () => {
      const ids = [1, 2, 3, 4, 5, 6].map(dev);
      for (const id of ids) await repo.registerDevice(reg(id));
      assert.deepEqual(await repo.markOnline(ids, T0 + 1000), [], 'none offline');
      assert.deepEqual(await repo.markOffline([dev(5), dev(2)]), [dev(2), dev(5)]);
      await repo.provisionDevice({ deviceId: dev(8) }, T0); // offline, not asked about
      assert.deepEqual(await repo.markOnline([...ids, dev(9)], T0 + 2000), [dev(2), dev(5)], 'fewer offline rows than ids');
      assert.equal((await repo.getDevice(dev(8)))?.online, false);
      assert.equal((await repo.getDevice(dev(5)))?.online, true);
      assert.deepEqual(await repo.markOnline(ids, T0 + 3000), []);
    });

    it('offline scan finds silent online devices, oldest first, and a keepalive wins the race', async () => {
      await repo.registerDevice(reg(dev(1), T0));
      await repo.registerDevice(reg(dev(2), T0 - 5000));
      await repo.registerDevice(reg(dev(3), T0 + 100_000));
      await repo.registerDevice(reg(dev(4), T0 - 1000));
      await repo.markOffline([dev(4)]);
      const cutoff = T0 + 50_000;
      assert.deepEqual(await repo.findSilentDevices(cutoff, 10), [dev(2), dev(1)]);
      assert.deepEqual(await repo.findSilentDevices(cutoff, 1), [dev(2)]);
      repo.touchKeepalive(dev(2), T0 + 60_000); // arrives between scan and update
      assert.deepEqual(await repo.findSilentDevices(cutoff, 10), [dev(1)]);
      assert.deepEqual(await repo.markOffline([dev(1), dev(2)], { onlyIfKeepaliveBefore: cutoff }), [dev(1)]);
      assert.equal((await repo.getDevice(dev(2)))?.online, true);
    });

    it('replaceChannels makes the catalog exactly the given channels', async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.replaceChannels(dev(1), [channel(chan(2)), channel(chan(1)), channel(chan(3))], T0);
      await repo.replaceChannels(
        dev(1),
        [
          channel(chan(3), { name: '大门口 枪机', status: 'OFF', longitude: 121.4737, latitude: 31.2304, ptzType: 1, parental: true, parentId: dev(1), extra: { SafetyWay: '0', IPAddress: '10.0.0.2' } }),
          channel(chan(4)),
          channel(chan(4), { name: 'duplicate, later wins' }),
        ],
        T0 + 1000,
      );
      const page = await repo.listChannels(dev(1), { page: 1, size: 10 });
      assert.deepEqual(page.items.map((c) => c.channelId), [chan(3), chan(4)]);
      assert.equal(page.total, 2);
      const c3 = page.items[0];
      assert.equal(c3?.deviceId, dev(1));
      assert.equal(c3?.name, '大门口 枪机');
      assert.equal(c3?.status, 'OFF');
      assert.equal(c3?.longitude, 121.4737);
      assert.equal(c3?.latitude, 31.2304);
      assert.equal(c3?.ptzType, 1);
      assert.equal(c3?.parental, true);
      assert.equal(c3?.parentId, dev(1));
      assert.deepEqual(c3?.extra, { SafetyWay: '0', IPAddress: '10.0.0.2' });
      assert.equal(c3?.updatedAt, T0 + 1000);
      assert.equal(page.items[1]?.name, 'duplicate, later wins');
      assert.equal((await repo.getDevice(dev(1)))?.channelCount, 2);
      assert.deepEqual(await repo.getChannel(dev(1), chan(3)), c3);
      assert.equal(await repo.getChannel(dev(1), chan(1)), null);
      await repo.replaceChannels(dev(1), [], T0 + 2000);
      assert.equal((await repo.listChannels(dev(1), { page: 1, size: 10 })).total, 0);
      assert.equal((await repo.getDevice(dev(1)))?.channelCount, 0);
      await assert.rejects(repo.replaceChannels(dev(9), [channel(chan(1))], T0), DeviceNotFoundError);
    });

    it('upsertChannels and removeChannels apply catalog notifications', async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.upsertChannels(dev(1), [channel(chan(1)), channel(chan(2))], T0);
      await repo.upsertChannels(dev(1), [channel(chan(2), { status: 'OFF' }), channel(chan(3))], T0 + 1);
      await repo.removeChannels(dev(1), [chan(1), chan(9)], T0 + 2);
      const page = await repo.listChannels(dev(1), { page: 1, size: 10 });
      assert.deepEqual(page.items.map((c) => [c.channelId, c.status]), [[chan(2), 'OFF'], [chan(3), 'ON']]);
      assert.equal((await repo.getDevice(dev(1)))?.channelCount, 2);
      await assert.rejects(repo.upsertChannels(dev(9), [channel(chan(1))], T0), DeviceNotFoundError);
      await repo.removeChannels(dev(9), [chan(1)], T0);
    });

    it('pages channels in channel id order', async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.replaceChannels(dev(1), [5, 1, 4, 2, 3].map((n) => channel(chan(n))), T0);
      const p = await repo.listChannels(dev(1), { page: 2, size: 2 });
      assert.deepEqual(p.items.map((c) => c.channelId), [chan(3), chan(4)]);
      assert.deepEqual([p.total, p.page, p.size], [5, 2, 2]);
      assert.equal((await repo.listChannels(dev(2), { page: 1, size: 2 })).total, 0);
    });

    it('reads named channels and keyset pages, touching only what they name', async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.registerDevice(reg(dev(2)));
      await repo.replaceChannels(dev(1), [5, 1, 4, 2, 3].map((n) => channel(chan(n))), T0);
      await repo.upsertChannels(dev(2), [channel(chan(1))], T0);
      const named = await repo.getChannels(dev(1), [chan(4), chan(9), chan(1), chan(4)]);
      assert.deepEqual(named.map((c) => c.channelId).sort(), [chan(1), chan(4)]);
      assert.ok(named.every((c) => c.deviceId === dev(1)));
      assert.deepEqual(await repo.getChannels(dev(3), [chan(1)]), []);
      assert.deepEqual(await repo.getChannels(dev(1), []), []);
      const first = await repo.listChannelsAfter(dev(1), null, 2);
      assert.deepEqual(first.map((c) => c.channelId), [chan(1), chan(2)]);
      const next = await repo.listChannelsAfter(dev(1), chan(2), 2);
      assert.deepEqual(next.map((c) => c.channelId), [chan(3), chan(4)]);
      assert.deepEqual((await repo.listChannelsAfter(dev(1), chan(4), 2)).map((c) => c.channelId), [chan(5)]);
      assert.deepEqual(await repo.listChannelsAfter(dev(1), chan(5), 2), []);
      assert.deepEqual((await repo.listChannelsAfter(dev(1), '0', 10)).length, 5);
      await repo.upsertChannels(dev(1), [channel(chan(0))], T0 + 1); // a new id lands in order
      assert.deepEqual((await repo.listChannelsAfter(dev(1), null, 1)).map((c) => c.channelId), [chan(0)]);
      assert.deepEqual((await repo.listChannels(dev(1), { page: 1, size: 2 })).items.map((c) => c.channelId), [chan(0), chan(1)]);
    });

    it(`refuses to take a device over its channel cap (${CAP}), storing nothing; updates and removals keep the count`, async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.upsertChannels(dev(1), [1, 2, 3, 4].map((n) => channel(chan(n))), T0);
      await assert.rejects(repo.upsertChannels(dev(1), [3, 5, 6, 7].map((n) => channel(chan(n), { name: 'over' })), T0 + 1), ChannelLimitError);
      assert.equal((await repo.getDevice(dev(1)))?.channelCount, 4);
      assert.equal((await repo.getChannel(dev(1), chan(3)))?.name, 'Camera 1', 'nothing of the refused batch stored');
      assert.equal(await repo.getChannel(dev(1), chan(5)), null);
      // updates of stored ids do not count against the cap; an id given twice counts once
      await repo.upsertChannels(dev(1), [1, 2, 3, 4, 5, 6, 6].map((n) => channel(chan(n), { name: 'updated' })), T0 + 2);
      assert.equal((await repo.getDevice(dev(1)))?.channelCount, CAP);
      await repo.removeChannels(dev(1), [chan(6), chan(6), chan(9)], T0 + 3);
      assert.equal((await repo.getDevice(dev(1)))?.channelCount, CAP - 1);
      await repo.upsertChannels(dev(1), [channel(chan(7))], T0 + 4);
      assert.equal((await repo.listChannels(dev(1), { page: 1, size: 10 })).total, CAP);
      await assert.rejects(repo.replaceChannels(dev(1), [1, 2, 3, 4, 5, 6, 7].map((n) => channel(chan(n))), T0 + 5), ChannelLimitError);
      assert.equal((await repo.getDevice(dev(1)))?.channelCount, CAP);
      await repo.replaceChannels(dev(1), [1, 2].map((n) => channel(chan(n))), T0 + 6);
      assert.equal((await repo.getDevice(dev(1)))?.channelCount, 2);
    });

    it('finds the device of a channel; with duplicates the most recently updated wins', async () => {
      await repo.registerDevice(reg(dev(1)));
      await repo.registerDevice(reg(dev(2)));
      await repo.upsertChannels(dev(2), [channel(chan(1))], T0);
      await repo.upsertChannels(dev(1), [channel(chan(1))], T0);
      assert.equal(await repo.findChannelDevice(chan(1)), dev(1), 'tie: smallest device id');
      await repo.upsertChannels(dev(2), [channel(chan(1))], T0 + 1);
      assert.equal(await repo.findChannelDevice(chan(1)), dev(2));
      await repo.removeChannels(dev(2), [chan(1)], T0 + 2);
      assert.equal(await repo.findChannelDevice(chan(1)), dev(1));
      assert.equal(await repo.findChannelDevice(chan(9)), null);
    });

    it('takes 10k keepalives without waiting on storage', async () => {
      for (let n = 1; n <= 100; n++) await repo.registerDevice(reg(dev(n)));
      const started = performance.now();
      for (let i = 0; i < 10_000; i++) repo.touchKeepalive(dev((i % 100) + 1), T0 + i);
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 250, `10k keepalives took ${elapsed.toFixed(1)} ms`);
      assert.equal((await repo.getDevice(dev(100)))?.keepaliveAt, T0 + 9_999);
    });

    it('close is idempotent', async () => {
      await Promise.all([repo.close(), repo.close()]);
      await repo.close();
    });
  });
}
