import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { DeviceRegistration } from '../../src/devices/device.types.ts';
import { createRegistrationUpsert, UPSERT_ROWS } from '../../src/devices/registration-upsert.sqlite.ts';
import { openEmbeddedStore } from '../../src/storage/embedded-store.sqlite.ts';

// The one-row upsert the flush ran before (issue 11): the reference the multi-row statements must equal.
const ONE_ROW =
  'INSERT INTO gb_device (device_id, tenant_id, transport, remote_ip, remote_port, registered_at, keepalive_at, expires_sec, online, created_at, updated_at) ' +
  "VALUES (?, '000000', ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT (device_id) DO UPDATE SET " +
  'transport = excluded.transport, remote_ip = excluded.remote_ip, remote_port = excluded.remote_port, registered_at = excluded.registered_at, ' +
  'keepalive_at = MAX(COALESCE(keepalive_at, excluded.keepalive_at), excluded.keepalive_at), expires_sec = excluded.expires_sec, ' +
  'online = 1, updated_at = excluded.updated_at';

const id = (n: number): string => `3402000000132${String(n).padStart(7, '0')}`;
const reg = (n: number, at: number, transport: 'UDP' | 'TCP' = 'UDP'): DeviceRegistration => ({ deviceId: id(n), transport, remoteIp: `10.0.${n % 250}.1`, remotePort: 5000 + n, expiresSec: 600 + n, at });

describe('registration upsert, several rows per statement (issue 11)', () => {
  it('leaves every row as the one-row upsert does: new devices, known ones (other columns kept, keepalive_at never back), a device twice in a batch, every batch size', () => {
    const dirs = [mkdtempSync(join(tmpdir(), 'vms-upsert-a-')), mkdtempSync(join(tmpdir(), 'vms-upsert-b-'))];
    const [multi, single] = dirs.map((d) => openEmbeddedStore(d)) as [ReturnType<typeof openEmbeddedStore>, ReturnType<typeof openEmbeddedStore>];
    try {
      // known devices: provisioned with a name, a password and a keepalive ahead of the later registrations
      for (const s of [multi, single]) {
        const provision = s.db.prepare("INSERT INTO gb_device (device_id, name, password, charset, keepalive_at, online, created_at, updated_at) VALUES (?, 'cam', 'pw', 'UTF-8', ?, 0, 1, 1)");
        for (let n = 0; n < 40; n += 3) provision.run(id(n), n % 2 === 0 ? 999_999 : null);
      }
      const upsert = createRegistrationUpsert(multi.db);
      const oneRow = single.db.prepare(ONE_ROW);
      const sizes = [1, 2, 3, 4, 5, 17, 21, 64, 65, 90, 151];
      let at = 1000;
      for (const size of sizes) {
        at += 1000;
        // overlapping ids batch to batch; the last two rows repeat an earlier device of the same batch with a later time
        const batch = Array.from({ length: size }, (_, i) => reg((i * 7 + size) % 200, at + i, i % 2 === 0 ? 'UDP' : 'TCP'));
        if (size > 2) batch.push(reg((size) % 200, at + 5000, 'TCP'), reg(((size - 1) * 7 + size) % 200, at + 6000));
        multi.db.transaction(() => upsert(batch))();
        single.db.transaction(() => {
          for (const r of batch) oneRow.run(r.deviceId, r.transport, r.remoteIp, r.remotePort, r.at, r.at, r.expiresSec, r.at, r.at);
        })();
      }
      const all = (s: typeof multi): unknown[] => s.db.prepare('SELECT * FROM gb_device ORDER BY device_id').all();
      const got = all(multi);
      assert.ok(got.length > 150);
      assert.deepEqual(got, all(single));
      // the provisioned columns survived, the keepalive ahead too
      assert.deepEqual(multi.db.prepare('SELECT name, password, charset, keepalive_at, online FROM gb_device WHERE device_id = ?').get(id(0)), {
        name: 'cam',
        password: 'pw',
        charset: 'UTF-8',
        keepalive_at: 999_999,
        online: 1,
      });
    } finally {
      multi.close();
      single.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });

  it('sizes largest first, down to one row (any batch fits)', () => {
    assert.deepEqual([...UPSERT_ROWS].sort((a, b) => b - a), [...UPSERT_ROWS]);
    assert.equal(UPSERT_ROWS.at(-1), 1);
  });
});
