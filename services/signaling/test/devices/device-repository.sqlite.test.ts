import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { turnsDuring } from '@vms/harness';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteDeviceRepository, WRITE_CHUNK } from '../../src/devices/device-repository.sqlite.ts';
import type { ChannelInput } from '../../src/devices/device.types.ts';
import { ChannelLimitError } from '../../src/errors/catalog.ts';
import { FLUSH_MS } from '../../src/devices/registration-buffer.ts';
import { openEmbeddedStore } from '../../src/storage/embedded-store.sqlite.ts';
import { deviceRepositoryContract } from './device-repository.contract.ts';

deviceRepositoryContract('sqlite', async (limits) => {
  const dir = mkdtempSync(join(tmpdir(), 'vms-devices-'));
  const store = openEmbeddedStore(dir);
  const repo = createSqliteDeviceRepository({ db: store.db, ...limits });
  return {
    repo,
    async dispose() {
      await repo.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('sqlite device repository: registrations written behind (issue 11)', () => {
  const ID = '34020000001320000001';
  const reg = (at: number, remotePort = 5060) => ({ deviceId: ID, transport: 'UDP' as const, remoteIp: '10.0.0.1', remotePort, expiresSec: 3600, at });
  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), 'vms-devices-wb-'));
    const store = openEmbeddedStore(dir);
    return { dir, store, repo: createSqliteDeviceRepository({ db: store.db }) };
  };
  const rows = (db: ReturnType<typeof openEmbeddedStore>['db']): number => (db.prepare('SELECT COUNT(*) AS n FROM gb_device').get() as { n: number }).n;

  it('registerDevice after getDevice answers from the row just read; a write in between is seen (issue 11: one SELECT per REGISTER)', async () => {
    const { dir, store, repo } = open();
    try {
      await repo.provisionDevice({ deviceId: ID, charset: 'UTF-8', name: 'gate' }, 500);
      assert.equal((await repo.getDevice(ID))?.charset, 'UTF-8');
      const first = await repo.registerDevice(reg(1000));
      assert.deepEqual([first.charset, first.name, first.remotePort, first.online], ['UTF-8', 'gate', 5060, true]);
      // read, then the operator changes the device, then the REGISTER goes on: the change is in the answer
      await repo.getDevice(ID);
      await repo.provisionDevice({ deviceId: ID, charset: 'GB2312' }, 1500);
      const second = await repo.registerDevice(reg(2000, 5070));
      assert.deepEqual([second.charset, second.name, second.remotePort, second.registeredAt], ['GB2312', 'gate', 5070, 2000]);
      // another device read in between: read again, right either way
      await repo.getDevice(ID);
      await repo.getDevice('34020000001320000002');
      const third = await repo.registerDevice(reg(3000, 5080));
      assert.deepEqual([third.charset, third.remotePort, third.registeredAt], ['GB2312', 5080, 3000]);
    } finally {
      await repo.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('registrations in flight interleaved: each registerDevice answers from its own device\'s read (no second SELECT); a write forgets them', async () => {
    const { dir, store, repo } = open();
    const OTHER = '34020000001320000002';
    const nameInTable = (id: string, name: string): void => void store.db.prepare('UPDATE gb_device SET name = ? WHERE device_id = ?').run(name, id);
    try {
      await repo.provisionDevice({ deviceId: ID, name: 'a' }, 500);
      await repo.provisionDevice({ deviceId: OTHER, name: 'b' }, 500);
      await repo.getDevice(ID);
      await repo.getDevice(OTHER);
      // behind the repository's back (nothing else writes the embedded store): shows which row answers
      nameInTable(ID, 'a2');
      nameInTable(OTHER, 'b2');
      assert.equal((await repo.registerDevice(reg(1000))).name, 'a', 'the row read for this device, not read again');
      assert.equal((await repo.registerDevice({ ...reg(1000), deviceId: OTHER })).name, 'b');
      // taken once: the next registration reads again
      assert.equal((await repo.registerDevice(reg(2000))).name, 'a2');
      // a write between read and registration forgets every read
      await repo.getDevice(ID);
      nameInTable(ID, 'a3');
      await repo.markOffline([OTHER]);
      assert.equal((await repo.registerDevice(reg(3000))).name, 'a3');
    } finally {
      await repo.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one transaction per batch: the row is read back at once, written within FLUSH_MS', async () => {
    const { dir, store, repo } = open();
    try {
      const device = await repo.registerDevice(reg(1000));
      assert.deepEqual([device.online, device.remotePort, device.registeredAt, device.charset], [true, 5060, 1000, 'GB2312']);
      assert.equal(rows(store.db), 0, 'not written yet');
      assert.deepEqual((await repo.getDevice(ID))?.remotePort, 5060);
      await new Promise((r) => setTimeout(r, FLUSH_MS + 100));
      assert.equal(rows(store.db), 1);
    } finally {
      await repo.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the flushed row holds every column of the registration (a new device, then a known one re-registering)', async () => {
    const { dir, store, repo } = open();
    const COLS = 'device_id, tenant_id, transport, remote_ip, remote_port, registered_at, keepalive_at, expires_sec, online, created_at, updated_at';
    const row = (): unknown => store.db.prepare(`SELECT ${COLS} FROM gb_device WHERE device_id = ?`).get(ID);
    try {
      await repo.registerDevice({ deviceId: ID, transport: 'TCP', remoteIp: '10.0.0.7', remotePort: 5070, expiresSec: 1800, at: 1000 });
      await repo.countOnlineDevices(); // every other operation writes the pending registrations first
      assert.deepEqual({ ...(row() as object) }, {
        device_id: ID, tenant_id: '000000', transport: 'TCP', remote_ip: '10.0.0.7', remote_port: 5070,
        registered_at: 1000, keepalive_at: 1000, expires_sec: 1800, online: 1, created_at: 1000, updated_at: 1000,
      });
      repo.touchKeepalive(ID, 5000);
      await repo.markOffline([ID], { onlyIfKeepaliveBefore: 0 }); // writes the keepalive, leaves the device online
      await repo.registerDevice({ deviceId: ID, transport: 'UDP', remoteIp: '10.0.0.8', remotePort: 5080, expiresSec: 3600, at: 3000 });
      await repo.countOnlineDevices();
      assert.deepEqual({ ...(row() as object) }, {
        device_id: ID, tenant_id: '000000', transport: 'UDP', remote_ip: '10.0.0.8', remote_port: 5080,
        registered_at: 3000, keepalive_at: 5000, expires_sec: 3600, online: 1, created_at: 1000, updated_at: 3000,
      }, 'keepalive_at never goes back; created_at kept');
    } finally {
      await repo.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a later write is never overtaken: offline right after a registration stays offline; close() writes what is pending', async () => {
    const { dir, store, repo } = open();
    try {
      await repo.registerDevice(reg(1000));
      assert.deepEqual(await repo.markOffline([ID]), [ID]);
      await new Promise((r) => setTimeout(r, FLUSH_MS + 100));
      assert.equal((await repo.getDevice(ID))?.online, false);
      await repo.registerDevice(reg(2000, 6000));
      await repo.close();
      const again = createSqliteDeviceRepository({ db: store.db });
      assert.deepEqual([(await again.getDevice(ID))?.remotePort, (await again.getDevice(ID))?.online], [6000, true]);
      await again.close();
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sqlite device repository: a large catalog report does not hold the event loop (SPEC SEC-3)', () => {
  const ID = '34020000001320000001';
  const N = WRITE_CHUNK * 2 + 500;
  const chan = (n: number): string => `340200000013100${String(n).padStart(5, '0')}`;
  const channel = (n: number, name = 'Camera'): ChannelInput => ({
    channelId: chan(n),
    name,
    manufacturer: null,
    model: null,
    owner: null,
    civilCode: null,
    address: null,
    parentId: null,
    parental: false,
    status: 'ON',
    longitude: null,
    latitude: null,
    ptzType: null,
    extra: {},
  });
  const open = (maxChannelsPerDevice: number) => {
    const dir = mkdtempSync(join(tmpdir(), 'vms-devices-chunks-'));
    const store = openEmbeddedStore(dir);
    return { dir, store, repo: createSqliteDeviceRepository({ db: store.db, maxChannelsPerDevice }) };
  };

  it(`upsert and read of ${N} channels: written and read in chunks of ${WRITE_CHUNK}, the loop turns between them`, async () => {
    const { dir, store, repo } = open(50_000);
    try {
      await repo.registerDevice({ deviceId: ID, transport: 'UDP', remoteIp: '10.0.0.1', remotePort: 5060, expiresSec: 3600, at: 1000 });
      await repo.upsertChannels(ID, [channel(0, 'first')], 1000);
      const inputs = Array.from({ length: N }, (_, i) => channel(i, 'reported'));
      assert.ok((await turnsDuring(() => repo.upsertChannels(ID, inputs, 2000))) >= 2, 'the upsert yielded between chunks');
      assert.equal((await repo.getDevice(ID))?.channelCount, N);
      assert.equal((await repo.getChannel(ID, chan(0)))?.name, 'reported');
      let read: readonly unknown[] = [];
      const readTurns = await turnsDuring(async () => {
        read = await repo.getChannels(ID, inputs.map((c) => c.channelId));
      });
      assert.equal(read.length, N);
      assert.ok(readTurns >= 2, 'the read yielded between chunks');
    } finally {
      await repo.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a chunked report over the cap stores nothing', async () => {
    const { dir, store, repo } = open(N - 1);
    try {
      await repo.registerDevice({ deviceId: ID, transport: 'UDP', remoteIp: '10.0.0.1', remotePort: 5060, expiresSec: 3600, at: 1000 });
      await assert.rejects(
        repo.upsertChannels(ID, Array.from({ length: N }, (_, i) => channel(i)), 2000),
        ChannelLimitError,
      );
      assert.equal((await repo.getDevice(ID))?.channelCount, 0);
      assert.equal(await repo.getChannel(ID, chan(0)), null);
    } finally {
      await repo.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
