import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeviceRegistration } from './device.types.ts';
import type { DeviceRowFields } from './device-rows.ts';
import { createRegistrationBuffer, FLUSH_MS, MAX_PENDING, MAX_PENDING_WHILE_FAILING, registeredRow, RegistrationBacklogFullError } from './registration-buffer.ts';

/** A gb_device row of the embedded store (times as epoch milliseconds). */
type DeviceRow = DeviceRowFields<number>;

const reg = (deviceId: string, at: number, remotePort = 5060): DeviceRegistration => ({ deviceId, transport: 'UDP', remoteIp: '10.0.0.1', remotePort, expiresSec: 3600, at });

describe('registration write-behind (issue 11)', () => {
  it('registeredRow: a new device gets the schema defaults; a known one keeps its columns and keepalive_at never goes back', () => {
    assert.deepEqual(registeredRow(undefined, reg('34020000001320000001', 1000)), {
      device_id: '34020000001320000001', tenant_id: '000000', name: null, manufacturer: null, model: null, firmware: null,
      transport: 'UDP', charset: 'GB2312', password: null, remote_ip: '10.0.0.1', remote_port: 5060, registered_at: 1000,
      keepalive_at: 1000, expires_sec: 3600, online: 1, channel_count: 0, created_at: 1000, updated_at: 1000,
    });
    const known: DeviceRow = {
      ...registeredRow(undefined, reg('34020000001320000001', 1000)),
      tenant_id: 't1', name: 'Gate', charset: 'UTF-8', password: 'own', online: 0, channel_count: 7, keepalive_at: 9000,
    };
    const again = registeredRow(known, { ...reg('34020000001320000001', 5000, 6000), transport: 'TCP', expiresSec: 600 });
    assert.deepEqual(again, {
      ...known, transport: 'TCP', remote_port: 6000, registered_at: 5000, keepalive_at: 9000, expires_sec: 600, online: 1, updated_at: 5000,
    });
  });

  it('writes after FLUSH_MS or at MAX_PENDING, the latest registration per device, in one batch; flush() on demand', async () => {
    const batches: DeviceRegistration[][] = [];
    const buf = createRegistrationBuffer((b) => void batches.push([...b]), () => assert.fail('no error expected'));
    buf.add(reg('34020000001320000001', 1));
    buf.add(reg('34020000001320000001', 2));
    buf.add(reg('34020000001320000002', 3));
    assert.equal(buf.pending('34020000001320000001')?.at, 2);
    assert.equal(batches.length, 0);
    await new Promise((r) => setTimeout(r, FLUSH_MS + 50));
    assert.deepEqual(batches.map((b) => b.map((r) => [r.deviceId, r.at])), [[['34020000001320000001', 2], ['34020000001320000002', 3]]]);
    assert.equal(buf.size, 0);
    for (let i = 0; i < MAX_PENDING; i++) buf.add(reg(`3402000000132${String(i).padStart(7, '0')}`, i));
    assert.equal(batches.length, 2, 'written at once when full');
    assert.equal(batches[1]?.length, MAX_PENDING);
    buf.add(reg('34020000001320000009', 9));
    buf.flush();
    assert.equal(batches.length, 3);
    buf.flush();
    assert.equal(batches.length, 3, 'nothing pending: no write');
    buf.close();
  });

  it('a failed write keeps the batch (newer registrations win) and retries it; close() flushes', async () => {
    let fail = true;
    const written: DeviceRegistration[][] = [];
    const errors: number[] = [];
    const buf = createRegistrationBuffer(
      (b) => {
        if (fail) throw new Error('disk full');
        written.push([...b]);
      },
      (_err, size) => errors.push(size),
    );
    buf.add(reg('34020000001320000001', 1));
    buf.add(reg('34020000001320000002', 2));
    buf.flush();
    assert.deepEqual(errors, [2]);
    assert.equal(buf.size, 2);
    buf.add(reg('34020000001320000001', 5));
    fail = false;
    buf.close();
    assert.deepEqual(written.map((b) => b.map((r) => [r.deviceId, r.at]).sort()), [[['34020000001320000001', 5], ['34020000001320000002', 2]]]);
    assert.equal(buf.size, 0);
  });

  it('while writes fail: bounded (a new device refused past MAX_PENDING_WHILE_FAILING, a waiting one replaced), no write per REGISTER, retries back off; all written once the store heals', async () => {
    let fail = true;
    let attempts = 0;
    const attemptAt: number[] = [];
    const written: DeviceRegistration[] = [];
    const buf = createRegistrationBuffer(
      (b) => {
        attempts++;
        attemptAt.push(performance.now());
        if (fail) throw new Error('disk full');
        written.push(...b);
      },
      () => {},
    );
    const id = (i: number): string => `3402000000132${String(i).padStart(7, '0')}`;
    buf.add(reg(id(0), 0));
    buf.flush();
    assert.equal(attempts, 1);
    for (let i = 1; i < MAX_PENDING_WHILE_FAILING; i++) buf.add(reg(id(i), i));
    assert.equal(attempts, 1, 'no write of the whole backlog per REGISTER while failing (was one per add past MAX_PENDING)');
    assert.equal(buf.size, MAX_PENDING_WHILE_FAILING);
    assert.throws(() => buf.add(reg(id(MAX_PENDING_WHILE_FAILING), 1)), RegistrationBacklogFullError);
    buf.add(reg(id(7), 99)); // a device already waiting: replaced, not refused
    assert.equal(buf.size, MAX_PENDING_WHILE_FAILING);
    assert.equal(buf.pending(id(7))?.at, 99);
    // the retry timer: FLUSH_MS after the first failure, then doubling (a timer never fires early)
    while (attempts < 3) await new Promise((r) => setTimeout(r, 20));
    const [a0, a1, a2] = attemptAt as [number, number, number];
    assert.ok(a1 - a0 >= FLUSH_MS - 2, `first retry after ${a1 - a0} ms`);
    assert.ok(a2 - a1 >= 2 * FLUSH_MS - 2, `the second retry waits twice as long: ${a2 - a1} ms`);
    fail = false;
    buf.flush();
    assert.equal(written.length, MAX_PENDING_WHILE_FAILING);
    assert.equal(buf.size, 0);
    buf.add(reg(id(MAX_PENDING_WHILE_FAILING), 1)); // healed: accepted again, written as before
    assert.equal(buf.size, 1);
    buf.close();
    assert.equal(written.length, MAX_PENDING_WHILE_FAILING + 1);
  });
});
