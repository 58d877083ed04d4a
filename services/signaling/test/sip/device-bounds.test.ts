// SPEC SEC-3, one device against the real device side over UDP: a catalog message costs the channels
// it names, not the catalog the device already has; a catalog that would take the device over its
// channel cap is answered 403 and stores nothing; a device sending faster than its rate gets 503 with
// Retry-After while other devices are served. Bounds come from configuration (vms.limits.*).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.ts';
import { systemClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import type { DeviceRepository } from '../../src/devices/device-repository.port.ts';
import type { ChannelInput } from '../../src/devices/device.types.ts';
import { createDeviceEvents } from '../../src/events/device-events.ts';
import { startDeviceSide, type DeviceSide } from '../../src/sip/device-side.ts';
import { bodies, startFakeDevice, type FakeDevice } from './fake-device.ts';

const DEV = '34020000001320000001';
const DEV2 = '34020000001320000002';
const log = pino({ level: 'silent' });
const chan = (n: number): string => `340200000013${String(n).padStart(8, '0')}`;
const input = (n: number): ChannelInput => ({
  channelId: chan(n), name: `c${n}`, manufacturer: null, model: null, owner: null, civilCode: null, address: null,
  parentId: null, parental: false, status: 'ON', longitude: null, latitude: null, ptzType: null, extra: {},
});
const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

/** The memory store, counting every channel its read methods hand out. */
function countingStore(limits: { maxChannelsPerDevice: number }): { repo: DeviceRepository; channelsRead: () => number } {
  const inner = createMemoryDeviceRepository(limits);
  let read = 0;
  const count = <T>(v: T): T => {
    if (Array.isArray(v)) read += v.length;
    else if (v !== null && typeof v === 'object' && 'items' in v && Array.isArray(v.items)) read += v.items.length;
    else if (v !== null && typeof v === 'object' && 'channelId' in v) read += 1;
    return v;
  };
  const repo: DeviceRepository = {
    ...inner,
    listChannels: async (...a) => count(await inner.listChannels(...a)),
    listChannelsAfter: async (...a) => count(await inner.listChannelsAfter(...a)),
    getChannels: async (...a) => count(await inner.getChannels(...a)),
    getChannel: async (...a) => count(await inner.getChannel(...a)),
  };
  return { repo, channelsRead: () => read };
}

describe('device bounds over SIP', () => {
  let side: DeviceSide | undefined;
  const fakes: FakeDevice[] = [];
  afterEach(async () => {
    for (const f of fakes.splice(0)) await f.close();
    await side?.close();
  });

  async function start(env: Record<string, string>, repo: DeviceRepository) {
    const config = loadConfig([], { VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', ...env });
    const events = createDeviceEvents(log);
    events.on('catalogChanged', () => {}); // a listener (the cascade) makes the store diff each catalog
    side = await startDeviceSide({ sip: config.sip, devices: repo, events, clock: systemClock, log, utcOffsetMinutes: 480, userAgent: 'test', limits: config.limits });
    const device = async (id: string): Promise<FakeDevice> => {
      const d = await startFakeDevice(id, (side as DeviceSide).sipPort);
      fakes.push(d);
      assert.equal((await d.register()).status, 200);
      return d;
    };
    return { config, device };
  }

  it('an unsolicited catalog reads only the channels it names, however many the device has', async () => {
    const { repo, channelsRead } = countingStore({ maxChannelsPerDevice: 50_000 });
    const { device } = await start({}, repo);
    const dev = await device(DEV);
    await repo.replaceChannels(DEV, range(1, 20_000).map(input), Date.now());
    const before = channelsRead();
    const named = [...range(19_981, 20), ...range(30_000, 30)].map(chan); // 20 stored, 30 new
    assert.equal((await dev.send(bodies.catalogPage(DEV, 'unsolicited-1', 50, named))).status, 200);
    for (let i = 0; i < 100 && (await repo.getDevice(DEV))?.channelCount !== 20_030; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await repo.getDevice(DEV))?.channelCount, 20_030);
    const read = channelsRead() - before;
    assert.ok(read <= named.length, `${read} channels read from the store for a message naming ${named.length}`);
  });

  it('a catalog that would take a device over its channel cap is answered 403 and stores nothing', async () => {
    const { repo } = countingStore({ maxChannelsPerDevice: 100 });
    const { config, device } = await start({ VMS_LIMITS_DEVICE_MAX_CHANNELS: '100' }, repo);
    assert.equal(config.limits.deviceMaxChannels, 100);
    const dev = await device(DEV);
    const page = (ns: number[]): string => bodies.catalogPage(DEV, `u${ns[0]}`, ns.length, ns.map(chan));
    assert.equal((await dev.send(page(range(1, 80)))).status, 200);
    for (let i = 0; i < 100 && (await repo.getDevice(DEV))?.channelCount !== 80; i++) await new Promise((r) => setTimeout(r, 20));
    const over = await dev.send(page(range(75, 40))); // 6 stored + 34 new = 114 > 100
    assert.equal(over.status, 403);
    assert.equal((await repo.getDevice(DEV))?.channelCount, 80);
    assert.equal(await repo.getChannel(DEV, chan(100)), null);
    assert.equal((await dev.send(page(range(41, 40)))).status, 200, 'updates of stored channels still pass');
    const notify = `<?xml version="1.0" encoding="UTF-8"?>\r\n<Notify><CmdType>Catalog</CmdType><SN>9</SN><DeviceID>${DEV}</DeviceID><SumNum>30</SumNum><DeviceList Num="30">${range(200, 30)
      .map((n) => `<Item><DeviceID>${chan(n)}</DeviceID><Event>ADD</Event><Name>n</Name><Status>ON</Status></Item>`)
      .join('')}</DeviceList></Notify>`;
    assert.equal((await dev.send(notify)).status, 403, 'a Catalog Notify adding past the cap too');
  });

  it('a device over its message rate gets 503 + Retry-After; another device is still served', async () => {
    const { repo } = countingStore({ maxChannelsPerDevice: 100 });
    const { device } = await start({ VMS_LIMITS_DEVICE_MESSAGE_RATE: '1', VMS_LIMITS_DEVICE_MESSAGE_BURST: '5' }, repo);
    const noisy = await device(DEV);
    const quiet = await device(DEV2);
    const statuses: number[] = [];
    let refused;
    for (let sn = 1; sn <= 8; sn++) {
      const res = await noisy.send(bodies.keepalive(DEV, sn));
      statuses.push(res.status);
      if (res.status === 503) refused = res;
    }
    assert.deepEqual(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
    assert.ok(statuses.slice(5).every((s) => s === 503), statuses.join());
    assert.match(refused?.headers.get('Retry-After') ?? '', /^\d+$/);
    assert.equal((await quiet.send(bodies.keepalive(DEV2, 1))).status, 200);
    // a large body costs more: 5 tokens refilled… a 16 KB body needs 1 + 4
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await noisy.send(bodies.keepalive(DEV, 20))).status, 200, 'refilled at the configured rate');
  });

  it("messages naming a device from another flow get 401 and do not drain the real device's rate bucket", async () => {
    const { repo } = countingStore({ maxChannelsPerDevice: 100 });
    const { device } = await start({ VMS_LIMITS_DEVICE_MESSAGE_RATE: '1', VMS_LIMITS_DEVICE_MESSAGE_BURST: '5' }, repo);
    const real = await device(DEV);
    const spoofer = await startFakeDevice(DEV, (side as DeviceSide).sipPort); // never registered: another flow
    fakes.push(spoofer);
    for (let sn = 1; sn <= 10; sn++) assert.equal((await spoofer.send(bodies.keepalive(DEV, sn))).status, 401);
    const statuses: number[] = [];
    for (let sn = 1; sn <= 5; sn++) statuses.push((await real.send(bodies.keepalive(DEV, 100 + sn))).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200], 'the whole burst is still the real device’s');
  });
});
