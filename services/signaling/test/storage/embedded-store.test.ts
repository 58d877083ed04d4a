// The embedded store of a single instance: survives a reopen (keepalives buffered at close included),
// refuses a second opener of the same directory, refuses a schema newer than this build, and keeps
// every keepalive write chunk small enough not to hold the event loop.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqlitePlatformRepository } from '../../src/cascade/platform-repository.sqlite.ts';
import { createSqliteDeviceRepository, WRITE_CHUNK } from '../../src/devices/device-repository.sqlite.ts';
import { StorageError } from '../../src/errors/catalog.ts';
import { DataDirInUseError, EMBEDDED_DB_FILE, openEmbeddedStore } from '../../src/storage/embedded-store.sqlite.ts';
import { EMBEDDED_MIGRATIONS } from '../../src/storage/embedded-schema.sqlite.ts';

const root = mkdtempSync(join(tmpdir(), 'vms-embedded-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => join(root, String(++dirs)); // not created: the store creates it

const T0 = Date.UTC(2025, 0, 1);
const DEV = '34020000001320000001';
const reg = (deviceId: string, at = T0) => ({ deviceId, transport: 'UDP' as const, remoteIp: '10.0.0.2', remotePort: 5060, expiresSec: 3600, at });

describe('embedded store (SQLite in the data directory)', () => {
  it('creates the directory, applies the schema once, and keeps devices, channels and keepalives across a reopen', async () => {
    const dir = freshDir();
    const s1 = openEmbeddedStore(dir);
    assert.deepEqual(s1.applied, EMBEDDED_MIGRATIONS.map((m) => m.version));
    assert.equal(s1.file, join(dir, EMBEDDED_DB_FILE));
    const r1 = createSqliteDeviceRepository({ db: s1.db, keepaliveFlushMs: 60_000 });
    await r1.registerDevice(reg(DEV));
    await r1.provisionDevice({ deviceId: DEV, name: 'gate', password: 'pw' }, T0 + 1);
    await r1.replaceChannels(DEV, [{ channelId: '34020000001310000001', name: 'c1', manufacturer: null, model: null, owner: null, civilCode: null, address: null, parentId: null, parental: false, status: 'ON', longitude: 1.5, latitude: null, ptzType: 1, extra: { Secrecy: '0' } }], T0 + 2);
    r1.touchKeepalive(DEV, T0 + 5000); // buffered (flush period 60 s): written by close()
    await r1.close();
    s1.close();
    s1.close(); // idempotent

    const s2 = openEmbeddedStore(dir);
    assert.deepEqual(s2.applied, [], 'schema already current');
    const r2 = createSqliteDeviceRepository({ db: s2.db });
    const d = await r2.getDevice(DEV);
    assert.deepEqual([d?.name, d?.password, d?.keepaliveAt, d?.channelCount, d?.online], ['gate', 'pw', T0 + 5000, 1, true]);
    const c = await r2.getChannel(DEV, '34020000001310000001');
    assert.deepEqual([c?.name, c?.longitude, c?.ptzType, c?.extra], ['c1', 1.5, 1, { Secrecy: '0' }]);
    await r2.close();
    s2.close();
  });

  it('a second opener of the same directory is refused while the first holds it, and opens once it is closed', () => {
    const dir = freshDir();
    const s1 = openEmbeddedStore(dir);
    assert.throws(() => openEmbeddedStore(dir), (err: unknown) => err instanceof DataDirInUseError && err instanceof StorageError && /in use by another instance/.test(err.message));
    s1.close();
    openEmbeddedStore(dir).close();
  });

  it('a database written by a newer build is refused, not downgraded', () => {
    const dir = freshDir();
    openEmbeddedStore(dir).close();
    const raw = new Database(join(dir, EMBEDDED_DB_FILE));
    raw.pragma(`user_version = ${(EMBEDDED_MIGRATIONS.at(-1)?.version ?? 0) + 1}`);
    raw.close();
    assert.throws(() => openEmbeddedStore(dir), (err: unknown) => err instanceof StorageError && /newer than this build/.test(err.message));
  });

  it('upgrades a version-1 file in place: a platform stored before V006 joins the default tenant', async () => {
    const dir = freshDir();
    openEmbeddedStore(dir).close(); // creates the directory
    rmSync(join(dir, EMBEDDED_DB_FILE));
    const raw = new Database(join(dir, EMBEDDED_DB_FILE));
    raw.exec(EMBEDDED_MIGRATIONS[0]?.sql ?? '');
    raw.pragma('user_version = 1');
    raw
      .prepare(
        'INSERT INTO upstream_platform (server_id, name, domain, host, port, transport, password, register_expires_s, keepalive_interval_s, keepalive_max_failures, enabled, charset, local_id) ' +
          "VALUES ('34010000002000000001', 'up', '3401000000', '10.1.2.3', 5060, 'UDP', '', 3600, 60, 3, 1, 'GB2312', '34020000002000000001')",
      )
      .run();
    raw.close();
    const s = openEmbeddedStore(dir);
    assert.deepEqual(s.applied, EMBEDDED_MIGRATIONS.slice(1).map((m) => m.version));
    const platforms = createSqlitePlatformRepository(s.db);
    assert.deepEqual([(await platforms.get('34010000002000000001'))?.tenantId, (await platforms.get('34010000002000000001'))?.name], ['000000', 'up']);
    await platforms.close();
    s.close();
  });

  it('a path that cannot be a directory is a StorageError naming it', () => {
    assert.throws(() => openEmbeddedStore('/dev/null/data'), (err: unknown) => err instanceof StorageError && /\/dev\/null\/data/.test(err.message));
  });

  it('a big keepalive batch is written in chunks of WRITE_CHUNK with the event loop turning between them', async () => {
    const s = openEmbeddedStore(freshDir());
    const repo = createSqliteDeviceRepository({ db: s.db, keepaliveFlushMs: 60_000 });
    const n = WRITE_CHUNK * 3 + 7;
    const ids = Array.from({ length: n }, (_, i) => `3402000000132${String(i).padStart(7, '0')}`);
    for (const id of ids) await repo.registerDevice(reg(id));
    for (const id of ids) repo.touchKeepalive(id, T0 + 1000);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const commits: number[] = [];
    const counter = s.db.prepare('SELECT COUNT(*) AS n FROM gb_device WHERE keepalive_at = ?');
    const sampler = setInterval(() => commits.push((counter.get(T0 + 1000) as { n: number }).n), 0);
    await repo.findSilentDevices(0, 1); // flushes the buffer
    clearInterval(ticker);
    clearInterval(sampler);
    assert.equal((counter.get(T0 + 1000) as { n: number }).n, n, 'every keepalive written');
    assert.ok(commits.some((k) => k > 0 && k < n), `partial progress seen between chunks: ${commits.join(',')}`);
    assert.ok(commits.every((k) => k % WRITE_CHUNK === 0 || k === n), 'whole chunks only');
    assert.ok(turns > 0);
    await repo.close();
    s.close();
  });
});
