// Issue 14, GB/T 28181-2022 §9.1.2.3 register redirect over loopback sockets: a device that follows
// redirects (X-GB-ver: 3.0, or allow-listed) is challenged, authenticated, then answered 302 with the
// shard placement picks; a 2016 device is served here whatever placement says; a device placed here is
// served; a refresh of a registration held here after placement moved is answered 403.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { buildAuthorization, getContacts, type SipResponse } from '@vms/sip';
import { placeDevice, compilePlacementRules, type Shard } from '@vms/routing';
import { loadConfig } from '../../src/config/load.ts';
import { systemClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import { createDeviceEvents } from '../../src/events/device-events.ts';
import { startDeviceSide, type DeviceSide } from '../../src/sip/device-side.ts';
import { createRegisterPlacement } from '../../src/sip/register-placement.ts';
import { REALM, SERVER_ID, startFakeDevice, type FakeDevice } from './fake-device.ts';

const PASSWORD = 'devpass1';
const log = pino({ level: 'silent' });
const SELF = 'shard-self';
const shard = (code: string, port: number, over: Partial<Shard> = {}): Shard => ({ code, sipHost: '127.0.0.2', sipPort: port, group: 'default', online: true, draining: false, ...over });

/** Device ids placed on `want` among `shards` (the test picks ids by the same pure decision). */
function deviceOn(shards: readonly Shard[], want: string, from = 0, prefix = '3402000000132'): string {
  const policy = compilePlacementRules([]);
  for (let i = from; i < from + 10_000; i++) {
    const id = `${prefix}${String(i).padStart(7, '0')}`;
    if (placeDevice(policy, shards, id)?.code === want) return id;
  }
  throw new Error('no device id found');
}

describe('register redirect (GB/T 28181-2022 §9.1.2.3)', () => {
  let side: DeviceSide;
  let shards: Shard[] = [];
  const devs: FakeDevice[] = [];

  before(async () => {
    const config = loadConfig([], {
      VMS_GB28181_SIP_HOST: '127.0.0.1',
      VMS_GB28181_SIP_PORT: '0',
      VMS_GB28181_SIP_PASSWORD: PASSWORD,
      VMS_PLACEMENT_REDIRECT: 'true',
      VMS_PLACEMENT_REDIRECT_ALLOW: '3402000000139',
    });
    side = await startDeviceSide({
      sip: config.sip,
      devices: createMemoryDeviceRepository(),
      events: createDeviceEvents(log),
      clock: systemClock,
      log,
      utcOffsetMinutes: 480,
      userAgent: 'test',
      placement: createRegisterPlacement({ settings: config.placement, selfCode: SELF, shards: () => shards }),
    });
    shards = [shard(SELF, side.sipPort, { sipHost: '127.0.0.1' }), shard('shard-b', 5071), shard('shard-c', 5072)];
  });

  after(async () => {
    for (const d of devs) await d.close();
    await side?.close();
  });

  async function registerAs(id: string, extra: Record<string, string> = {}): Promise<SipResponse> {
    const dev = await startFakeDevice(id, side.sipPort);
    devs.push(dev);
    const uri = `sip:${SERVER_ID}@127.0.0.1:${side.sipPort}`;
    const send = (authorization?: string): Promise<SipResponse> =>
      dev.stack.request({
        method: 'REGISTER',
        uri,
        headers: { From: `<sip:${id}@${REALM}>`, To: `<sip:${id}@${REALM}>`, Expires: 3600, ...extra, ...(authorization === undefined ? {} : { Authorization: authorization }) },
        target: { host: '127.0.0.1', port: side.sipPort, transport: 'udp' },
      });
    const challenge = await send();
    assert.equal(challenge.status, 401, 'challenged first: a redirect is given only to an authenticated device');
    return send(buildAuthorization(challenge.headers.get('WWW-Authenticate') ?? '', { username: id, password: PASSWORD, method: 'REGISTER', uri }));
  }

  it('X-GB-ver: 3.0 placed on another shard: 302 with Contact sip:<server id>@<shard> and Expires', async () => {
    const id = deviceOn(shards, 'shard-b');
    const res = await registerAs(id, { 'X-GB-ver': '3.0' });
    assert.equal(res.status, 302);
    assert.equal(getContacts(res)[0]?.uri.user, SERVER_ID);
    assert.equal(getContacts(res)[0]?.uri.host, '127.0.0.2');
    assert.equal(getContacts(res)[0]?.uri.port, 5071);
    assert.equal(res.headers.get('Expires'), '3600');
    assert.equal(side.flows.get(id), undefined, 'not registered here');
  });

  it('allow-listed prefix without X-GB-ver: redirected too', async () => {
    const id = deviceOn(shards, 'shard-c', 0, '3402000000139');
    const res = await registerAs(id);
    assert.equal(res.status, 302);
    assert.equal(getContacts(res)[0]?.uri.port, 5072);
  });

  it('a 2016 device (no X-GB-ver, not allow-listed) is served here though placement picks another shard', async () => {
    const id = deviceOn(shards, 'shard-b', 20_000);
    assert.equal((await registerAs(id, { 'X-GB-ver': '2.0' })).status, 200);
    assert.notEqual(side.flows.get(id), undefined);
  });

  it('a 2022 device placed here is served here', async () => {
    const id = deviceOn(shards, SELF, 30_000);
    assert.equal((await registerAs(id, { 'X-GB-ver': '3.0' })).status, 200);
    assert.notEqual(side.flows.get(id), undefined);
  });

  it('its refresh after this shard starts draining: 403 (back to the redirect server), then 302 from here', async () => {
    const id = deviceOn(shards, SELF, 40_000);
    assert.equal((await registerAs(id, { 'X-GB-ver': '3.0' })).status, 200);
    const saved = shards;
    shards = shards.map((s) => (s.code === SELF ? { ...s, draining: true } : s));
    try {
      assert.equal((await registerAs(id, { 'X-GB-ver': '3.0' })).status, 403);
      assert.equal(side.flows.get(id), undefined, 'the binding here is dropped');
      assert.equal((await registerAs(id, { 'X-GB-ver': '3.0' })).status, 302, 'at the redirect server: 302 to its new shard');
    } finally {
      shards = saved;
    }
  });
});
