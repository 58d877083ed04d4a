// SPEC SEC-1 end to end over loopback sockets (our SIP stack as devices and attacker, the real device
// side, memory store): what an attacker on another port reproduced against a running cluster — a
// keepalive moving a device, a captured REGISTER answer replayed (Expires: 0, another device id,
// another instance) — and the Expires cap.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { buildAuthorization, getContacts, type SipResponse } from '@vms/sip';
import { loadConfig } from '../../src/config/load.ts';
import { systemClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import type { DeviceRepository } from '../../src/devices/device-repository.port.ts';
import { createDeviceEvents, type DeviceEvents } from '../../src/events/device-events.ts';
import { startDeviceSide, type DeviceSide } from '../../src/sip/device-side.ts';
import { bodies, REALM, SERVER_ID, startFakeDevice, type FakeDevice } from './fake-device.ts';

const PASSWORD = 'devpass1';
const DEV = '34020000001320000031';
const OTHER = '34020000001320000032';
const log = pino({ level: 'silent' });

async function startSide(devices: DeviceRepository, events: DeviceEvents): Promise<DeviceSide> {
  const config = loadConfig([], { VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', VMS_GB28181_SIP_PASSWORD: PASSWORD });
  return startDeviceSide({ sip: config.sip, devices, events, clock: systemClock, log, utcOffsetMinutes: 480, userAgent: 'test', timeouts: { requestMs: 1500, deviceStatusMs: 1000 } });
}

/** A REGISTER sent by hand: `from` names the device, `authorization` as given (captured or computed). */
function register(sender: FakeDevice, port: number, o: { id?: string; expires?: number; authorization?: string } = {}): Promise<SipResponse> {
  const from = `<sip:${o.id ?? sender.id}@${REALM}>`;
  const headers: Record<string, string | number> = { From: from, To: from, Expires: o.expires ?? 3600 };
  if (o.authorization !== undefined) headers['Authorization'] = o.authorization;
  return sender.stack.request({ method: 'REGISTER', uri: `sip:${SERVER_ID}@127.0.0.1:${port}`, headers, target: { host: '127.0.0.1', port, transport: 'udp' } });
}

/** REGISTER → 401 → the device's answer, sent; returns the Authorization it used (what a sniffer captures). */
async function registerCapturing(dev: FakeDevice, port: number, expires = 3600): Promise<string> {
  const challenge = await register(dev, port, { expires });
  assert.equal(challenge.status, 401);
  const authorization = buildAuthorization(challenge.headers.get('WWW-Authenticate') ?? '', {
    username: dev.id,
    password: PASSWORD,
    method: 'REGISTER',
    uri: `sip:${SERVER_ID}@127.0.0.1:${port}`,
  });
  assert.equal((await register(dev, port, { expires, authorization })).status, 200);
  return authorization;
}

describe('SEC-1 device trust over SIP', () => {
  let devices: DeviceRepository;
  let events: DeviceEvents;
  let side: DeviceSide;
  let dev: FakeDevice;
  let attacker: FakeDevice;
  const uplinks: string[] = [];

  before(async () => {
    devices = createMemoryDeviceRepository();
    events = createDeviceEvents(log);
    events.on('uplink', (e) => void uplinks.push(`${e.deviceId}:${e.kind}`));
    side = await startSide(devices, events);
    dev = await startFakeDevice(DEV, side.sipPort);
    attacker = await startFakeDevice(DEV, side.sipPort); // same id in From, another port
  });

  after(async () => {
    await dev?.close();
    await attacker?.close();
    await side?.close();
  });

  it('a keepalive naming the device from another port: 401, nothing recorded; controls still reach the device', async () => {
    assert.equal((await dev.register({ password: PASSWORD })).status, 200);
    const keepaliveAt = (await devices.getDevice(DEV))?.keepaliveAt;
    const before = uplinks.length;
    const res = await attacker.send(bodies.keepalive(DEV));
    assert.equal(res.status, 401);
    assert.match(res.headers.get('WWW-Authenticate') ?? '', /^Digest realm="3402000000", nonce="[0-9a-f]{32}", algorithm=MD5, qop="auth"$/);
    assert.equal(uplinks.length, before, 'no uplink event: no ownership claim or renewal');
    assert.equal((await devices.getDevice(DEV))?.keepaliveAt, keepaliveAt, 'no keepalive recorded');
    assert.equal(side.flows.get(DEV)?.flow.remotePort, dev.stack.port);

    dev.onMessage(async ({ msg }) => {
      if (msg.cmdType === 'DeviceStatus') await dev.send(bodies.deviceStatus(DEV, msg.sn));
    });
    attacker.onMessage(() => assert.fail('a control reached the attacker'));
    assert.equal((await side.control.queryDeviceStatus(DEV)).status, 'OK');
    assert.equal(attacker.received.length, 0);
    assert.equal((await dev.send(bodies.keepalive(DEV, 2))).status, 200, 'the device itself is still answered');
  });

  it('a forged Response from another port is not taken as the device’s answer', async () => {
    attacker.onMessage(() => {});
    dev.onMessage(() => {}); // the real device stays silent this time
    const query = side.control.queryDeviceStatus(DEV);
    const { msg } = await dev.next('DeviceStatus');
    assert.equal((await attacker.send(bodies.deviceStatus(DEV, msg.sn))).status, 401);
    await assert.rejects(query, (e: Error) => e.name === 'DeviceTimeoutError');
  });

  it('a captured REGISTER answer replayed from another port with Expires: 0: 401 stale, the device stays online', async () => {
    const captured = await registerCapturing(dev, side.sipPort);
    const replay = await register(attacker, side.sipPort, { expires: 0, authorization: captured });
    assert.equal(replay.status, 401);
    assert.match(replay.headers.get('WWW-Authenticate') ?? '', /stale=true/);
    assert.equal((await devices.getDevice(DEV))?.online, true);
    assert.equal(side.flows.get(DEV)?.flow.remotePort, dev.stack.port);
    const asOther = await register(attacker, side.sipPort, { id: OTHER, authorization: captured });
    assert.equal(asOther.status, 401, 'nor for another device id');
    assert.equal(await devices.getDevice(OTHER), null);
  });

  it('the device’s own REGISTER from a new port (NAT rebinding) moves the binding there', async () => {
    const moved = await startFakeDevice(DEV, side.sipPort);
    try {
      assert.equal((await moved.send(bodies.keepalive(DEV))).status, 401, 'a keepalive from the new port does not');
      assert.equal((await moved.register({ password: PASSWORD })).status, 200);
      assert.equal(side.flows.get(DEV)?.flow.remotePort, moved.stack.port);
      assert.equal((await moved.send(bodies.keepalive(DEV, 3))).status, 200);
      assert.equal((await dev.send(bodies.keepalive(DEV, 4))).status, 401, 'the old port no longer speaks for it');
      assert.equal((await dev.register({ password: PASSWORD })).status, 200);
    } finally {
      await moved.close();
    }
  });

  it('Expires above the cap is granted 3600 (header and Contact); below the minimum: 423 with Min-Expires', async () => {
    const res = await dev.register({ password: PASSWORD, expires: 4_294_967_295 });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Expires'), '3600');
    assert.equal(getContacts(res)[0]?.params.get('expires'), '3600');
    assert.equal((await devices.getDevice(DEV))?.expiresSec, 3600);
    const brief = await dev.register({ password: PASSWORD, expires: 5 });
    assert.equal(brief.status, 423);
    assert.equal(brief.headers.get('Min-Expires'), '60');
    assert.equal((await dev.register({ password: PASSWORD, expires: 120 })).headers.get('Expires'), '120');
  });

  it('an answer accepted by one instance is refused by another (nonces are per process)', async () => {
    const other = await startSide(createMemoryDeviceRepository(), createDeviceEvents(log));
    const fresh = await startFakeDevice(OTHER, side.sipPort);
    try {
      const captured = await registerCapturing(fresh, side.sipPort);
      // same device, same port, same Authorization (its digest uri names the first instance's port, so
      // the replay goes to the second instance under the first one's Request-URI, as a UDP balancer would)
      const from = `<sip:${OTHER}@${REALM}>`;
      const replay = await fresh.stack.request({
        method: 'REGISTER',
        uri: `sip:${SERVER_ID}@127.0.0.1:${side.sipPort}`,
        headers: { From: from, To: from, Expires: 3600, Authorization: captured },
        target: { host: '127.0.0.1', port: other.sipPort, transport: 'udp' },
      });
      assert.equal(replay.status, 401);
      assert.doesNotMatch(replay.headers.get('WWW-Authenticate') ?? '', /stale/);
      assert.equal(other.flows.get(OTHER), undefined);
    } finally {
      await fresh.close();
      await other.close();
    }
  });
});
