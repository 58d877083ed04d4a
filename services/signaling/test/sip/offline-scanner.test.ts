import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { FakeClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import { createDeviceEvents, type DeviceEventMap } from '../../src/events/device-events.ts';
import { createDeviceFlows } from '../../src/sip/device-flows.ts';
import { createOfflineScanner, silentCutoff } from '../../src/sip/offline-scanner.ts';

const log = pino({ level: 'silent' });
const T0 = Date.UTC(2025, 5, 1);
const A = '34020000001320000001';
const B = '34020000001320000002';
const C = '34020000001320000003';
const flow = { transport: 'udp' as const, remoteAddress: '10.0.0.1', remotePort: 5060, localAddress: '10.0.0.5', localPort: 5060 };

async function fixture() {
  const clock = new FakeClock(T0);
  const devices = createMemoryDeviceRepository();
  const flows = createDeviceFlows();
  const events = createDeviceEvents(log);
  const offline: DeviceEventMap['offline'][] = [];
  events.on('offline', (e) => offline.push(e));
  for (const [deviceId, expiresSec] of [[A, 3600], [B, 3600], [C, 100]] as const) {
    await devices.registerDevice({ deviceId, transport: 'UDP', remoteIp: '10.0.0.1', remotePort: 5060, expiresSec, at: T0 });
    flows.register({ deviceId, flow, charset: 'GB2312', gbVersion: '2016', registeredAt: T0, expiresAt: T0 + expiresSec * 1000 });
  }
  // keepalive interval 60 s × 3 = 180 s online window, scan every 30 s
  const scanner = createOfflineScanner({ devices, flows, events, clock, log, keepaliveIntervalSec: 60, keepaliveTimeoutCount: 3, periodSec: 30, batch: 1 });
  return { clock, devices, flows, offline, scanner };
}

describe('offline scan', () => {
  it('cutoff = now − interval × count', () => {
    assert.equal(silentCutoff(1_000_000, 60, 3), 820_000);
  });

  it('expired registrations go offline first, silent devices after interval × count; keepalives keep them online', async () => {
    const f = await fixture();
    f.clock.advance(100_000); // C's registration (100 s) ends
    f.devices.touchKeepalive(A, f.clock.now());
    f.devices.touchKeepalive(B, f.clock.now());
    let out = await f.scanner.scanOnce();
    assert.deepEqual(out, { expired: [C], silent: [], reasserted: [] });
    assert.equal(f.flows.get(C), undefined, 'its flow is forgotten');

    f.clock.advance(150_000); // A keeps heartbeating; B last spoke 150 s ago
    f.devices.touchKeepalive(A, f.clock.now());
    assert.deepEqual(await f.scanner.scanOnce(), { expired: [], silent: [], reasserted: [] }, '150 s < 180 s');
    f.clock.advance(31_000);
    out = await f.scanner.scanOnce();
    assert.deepEqual(out, { expired: [], silent: [B], reasserted: [] }, 'batch size 1 still finds everything');
    assert.equal(f.flows.get(B)?.online, false, 'flow kept (registration still valid), online mirror cleared');
    assert.equal((await f.devices.getDevice(B))?.online, false);
    assert.equal((await f.devices.getDevice(A))?.online, true);
    assert.deepEqual(
      f.offline.map((e) => [e.deviceId, e.reason]),
      [
        [C, 'expired'],
        [B, 'keepalive-timeout'],
      ],
    );
    assert.deepEqual(await f.scanner.scanOnce(), { expired: [], silent: [], reasserted: [] }, 'reported once');
  });

  it('re-asserts devices it still hears after another instance marked them offline, once', async () => {
    const f = await fixture();
    const online: DeviceEventMap['online'][] = [];
    const events = createDeviceEvents(log);
    events.on('online', (e) => online.push(e));
    const scanner = createOfflineScanner({ devices: f.devices, flows: f.flows, events, clock: f.clock, log, keepaliveIntervalSec: 60, keepaliveTimeoutCount: 3, periodSec: 30, batch: 1 });
    // Another instance sharing the store marks A offline (its view of keepalive_at lagged).
    assert.deepEqual(await f.devices.markOffline([A]), [A]);
    f.devices.touchKeepalive(A, f.clock.now());
    f.devices.touchKeepalive(B, f.clock.now());
    const out = await scanner.scanOnce();
    assert.deepEqual(out.reasserted, [A]);
    assert.equal((await f.devices.getDevice(A))?.online, true);
    assert.deepEqual(online.map((e) => [e.deviceId, e.reason]), [[A, 'reasserted']]);
    assert.deepEqual((await scanner.scanOnce()).reasserted, [], 'nothing left to re-assert');
    assert.equal(online.length, 1);
    // A device whose mirror says offline (silent here) is not resurrected.
    f.flows.get(B)!.online = false;
    await f.devices.markOffline([B]);
    assert.deepEqual((await scanner.scanOnce()).reasserted, []);
    assert.equal((await f.devices.getDevice(B))?.online, false);
  });

  it('with a store no other instance writes (embedded), does not walk its online devices to re-assert them', async () => {
    const f = await fixture();
    let markOnlineCalls = 0;
    const devices = { ...f.devices, markOnline: (ids: readonly string[], at: number) => (markOnlineCalls++, f.devices.markOnline(ids, at)) };
    const scanner = createOfflineScanner({ devices, flows: f.flows, events: createDeviceEvents(log), clock: f.clock, log, keepaliveIntervalSec: 60, keepaliveTimeoutCount: 3, periodSec: 30, storeShared: false });
    f.devices.touchKeepalive(A, f.clock.now());
    f.devices.touchKeepalive(B, f.clock.now());
    assert.deepEqual(await scanner.scanOnce(), { expired: [], silent: [], reasserted: [] });
    assert.equal(markOnlineCalls, 0);
    // the same scan over a shared store walks them (and finds nothing here)
    const shared = createOfflineScanner({ devices, flows: f.flows, events: createDeviceEvents(log), clock: f.clock, log, keepaliveIntervalSec: 60, keepaliveTimeoutCount: 3, periodSec: 30 });
    assert.deepEqual((await shared.scanOnce()).reasserted, []);
    assert.ok(markOnlineCalls > 0);
  });

  it('runs every period on the timer and stops on close', async () => {
    const f = await fixture();
    f.scanner.start();
    f.clock.advance(181_000); // all silent; timers fire at 30 s steps
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 3; i++) {
      f.clock.advance(30_000);
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(f.offline.map((e) => e.deviceId).sort(), [A, B, C]);
    await f.scanner.close();
    await f.scanner.close();
    assert.equal(f.clock.pending, 0);
  });
});
