// The device side end to end in one process: our SIP stack as the device, the real handlers,
// the memory store. Covers REGISTER/digest, keepalive, queries matched by SN, multi-MESSAGE answers,
// PTZ bytes, unsolicited reports, alarms, unregister. Timeouts are shortened, the clock is real.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.ts';
import { systemClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import type { DeviceRepository } from '../../src/devices/device-repository.port.ts';
import { DeviceOfflineError, DeviceTimeoutError, RecordQueryNotFoundError, StorageError } from '../../src/errors/catalog.ts';
import { createDeviceEvents, type DeviceEventMap, type DeviceEvents } from '../../src/events/device-events.ts';
import { startDeviceSide, type DeviceSide } from '../../src/sip/device-side.ts';
import { bodies, startFakeDevice, type FakeDevice } from './fake-device.ts';

const PASSWORD = 'devpass1';
const DEV = '34020000001320000001';
const DEV_TCP = '34020000001320000002';
const DEV_SILENT = '34020000001320000003';
const CH1 = '34020000001310000001';
const CH2 = '34020000001310000002';
const CH3 = '34020000001310000003';
const log = pino({ level: 'silent' });

type Seen = { [K in keyof DeviceEventMap]: DeviceEventMap[K][] };

describe('device side over SIP', () => {
  let side: DeviceSide;
  let devices: DeviceRepository;
  let events: DeviceEvents;
  const seen: Seen = { online: [], offline: [], catalogChanged: [], alarm: [], mobilePosition: [], mediaStatus: [], snapshotFinished: [], upgradeResult: [], uplink: [] };
  let dev: FakeDevice;
  let deviceReads = 0;
  /** The store refuses this many channel replacements (as MySQL past its statement deadline would). */
  let refusedReplaces = 0;
  /** The store refuses device reads while set (as MySQL past its statement deadline, or its gate after one, would). */
  let refuseDeviceReads = false;

  before(async () => {
    const config = loadConfig([], { VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', VMS_GB28181_SIP_PASSWORD: PASSWORD });
    const store = createMemoryDeviceRepository();
    devices = {
      ...store,
      getDevice: (deviceId) => {
        deviceReads++;
        if (refuseDeviceReads) return Promise.reject(new StorageError('get device', { cause: Object.assign(new Error('timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' }) }));
        return store.getDevice(deviceId);
      },
      replaceChannels: (...args) => {
        if (refusedReplaces > 0) {
          refusedReplaces--;
          return Promise.reject(new StorageError('replace channels', { cause: Object.assign(new Error('timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' }) }));
        }
        return store.replaceChannels(...args);
      },
    };
    events = createDeviceEvents(log);
    for (const name of Object.keys(seen) as (keyof Seen)[]) {
      events.on(name, (e) => {
        (seen[name] as unknown[]).push(e);
      });
    }
    side = await startDeviceSide({
      sip: config.sip,
      devices,
      events,
      clock: systemClock,
      log,
      utcOffsetMinutes: 480,
      userAgent: 'test',
      timeouts: { requestMs: 1500, deviceInfoMs: 400, deviceStatusMs: 400, catalogFirstMs: 1000, catalogNextMs: 500, recordFirstMs: 1000, recordNextMs: 300 },
    });
    dev = await startFakeDevice(DEV, side.sipPort);
  });

  after(async () => {
    await dev?.close();
    await side?.close();
    await side?.close();
  });

  it('REGISTER: 401 challenge, then 200 with the GB Date header; the device is online', async () => {
    const res = await dev.register({ password: PASSWORD });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('Date') ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
    assert.equal(res.headers.get('Expires'), '3600');
    assert.match(res.headers.get('Contact') ?? '', new RegExp(`^<sip:${DEV}@127\\.0\\.0\\.1:${dev.stack.port}`));
    const stored = await devices.getDevice(DEV);
    assert.deepEqual([stored?.online, stored?.transport, stored?.remotePort, stored?.expiresSec], [true, 'UDP', dev.stack.port, 3600]);
    assert.deepEqual(seen.online.map((e) => [e.deviceId, e.reason]), [[DEV, 'register']]);
    assert.deepEqual(seen.uplink.map((e) => e.kind), ['register']);
    const again = await dev.register({ password: PASSWORD });
    assert.equal(again.status, 200);
    assert.equal(seen.online.length, 1, 'a refresh is not a new online event');
  });

  it('issue 11: a registration reads the device from the store once, on the authenticated leg (the challenge needs no read when the platform has a password)', async () => {
    const before = deviceReads;
    const res = await dev.register({ password: PASSWORD });
    assert.equal(res.status, 200);
    assert.equal(deviceReads - before, 1);
  });

  it('wrong password: 403; unknown device keepalive: 404; non-GB id: 400', async () => {
    const intruder = await startFakeDevice('34020000001320000099', side.sipPort);
    try {
      assert.equal((await intruder.register({ password: 'guess' })).status, 403);
      assert.equal((await intruder.send(bodies.keepalive(intruder.id))).status, 404);
      assert.equal(await devices.getDevice(intruder.id), null);
    } finally {
      await intruder.close();
    }
    const odd = await startFakeDevice('admin', side.sipPort);
    try {
      assert.equal((await odd.register({ password: PASSWORD })).status, 400);
    } finally {
      await odd.close();
    }
  });

  it('keepalive: 200, keepalive time recorded, back online after an offline scan', async () => {
    const before = (await devices.getDevice(DEV))?.keepaliveAt ?? 0;
    await new Promise((r) => setTimeout(r, 5));
    assert.equal((await dev.send(bodies.keepalive(DEV))).status, 200);
    assert.ok(((await devices.getDevice(DEV))?.keepaliveAt ?? 0) > before);
    assert.equal(seen.uplink.at(-1)?.kind, 'keepalive');
    // As the offline scan would do it:
    await devices.markOffline([DEV]);
    const session = side.flows.get(DEV);
    assert.ok(session);
    session.online = false;
    assert.equal((await dev.send(bodies.keepalive(DEV, 2))).status, 200);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await devices.getDevice(DEV))?.online, true);
    assert.deepEqual(seen.online.at(-1), { ...seen.online.at(-1), deviceId: DEV, reason: 'keepalive' });
    // Lower-case CmdType takes the full parser and counts as well (devices vary the case).
    const lower = bodies.keepalive(DEV, 3).replace('Keepalive', 'keepalive');
    assert.equal((await dev.send(lower)).status, 200);
  });

  it('malformed body: 400, the device stays registered', async () => {
    assert.equal((await dev.send('<Notify><SN>1</SN>')).status, 400);
    assert.ok(side.flows.get(DEV));
  });

  it('catalog sync: query by SN, answer in two MESSAGEs (SumNum 3), channels replaced, progress done', async () => {
    await devices.replaceChannels(DEV, [], Date.now());
    dev.onMessage(async ({ msg }) => {
      if (msg.cmdType !== 'Catalog') return;
      await dev.send(bodies.catalogPage(DEV, msg.sn, 3, [CH1, CH2]));
      await dev.send(bodies.catalogPage(DEV, msg.sn, 3, [CH3]));
    });
    const started = await side.control.syncCatalog(DEV);
    assert.equal(started.state, 'running');
    const joined = await side.control.syncCatalog(DEV);
    assert.equal(joined.startedAt, started.startedAt, 'a second POST joins the running sync');
    const query = await dev.next('Catalog');
    assert.equal(query.msg.root, 'Query');
    assert.equal(query.request.uri.user, DEV);
    assert.match(query.request.headers.get('From') ?? '', /^<sip:34020000002000000001@3402000000>/);
    await waitUntil(async () => (await side.control.catalogProgress(DEV)).state === 'done');
    const progress = await side.control.catalogProgress(DEV);
    assert.deepEqual({ ...progress, startedAt: 0, finishedAt: 0 }, { deviceId: DEV, state: 'done', total: 3, received: 3, startedAt: 0, finishedAt: 0, partial: false, error: null });
    const channels = await devices.listChannels(DEV, { page: 1, size: 10 });
    assert.deepEqual(channels.items.map((c) => [c.channelId, c.ptzType, c.status]), [[CH1, 1, 'ON'], [CH2, 1, 'ON'], [CH3, 1, 'ON']]);
    assert.deepEqual(seen.catalogChanged.map((e) => [e.source, e.complete, e.channels.length]), [['sync', true, 3]]);
    dev.onMessage(() => {});
  });

  it('catalog sync that stops after the first page: partial result kept, flagged', async () => {
    dev.onMessage(async ({ msg }) => {
      if (msg.cmdType === 'Catalog') await dev.send(bodies.catalogPage(DEV, msg.sn, 4, [CH1]));
    });
    await side.control.syncCatalog(DEV);
    await waitUntil(async () => (await side.control.catalogProgress(DEV)).state !== 'running', 3000);
    const p = await side.control.catalogProgress(DEV);
    assert.deepEqual([p.state, p.partial, p.total, p.received], ['done', true, 4, 1]);
    assert.equal((await devices.listChannels(DEV, { page: 1, size: 10 })).total, 3, 'nothing deleted on a partial answer');
    dev.onMessage(() => {});
  });

  it('catalog sync whose store refuses the write twice: stored on the third attempt, nothing lost', async () => {
    await devices.replaceChannels(DEV, [], Date.now());
    dev.onMessage(async ({ msg }) => {
      if (msg.cmdType === 'Catalog') await dev.send(bodies.catalogPage(DEV, msg.sn, 2, [CH1, CH2]));
    });
    refusedReplaces = 2;
    await side.control.syncCatalog(DEV);
    await waitUntil(async () => (await side.control.catalogProgress(DEV)).state !== 'running', 4000);
    const p = await side.control.catalogProgress(DEV);
    assert.deepEqual([p.state, p.error, p.received], ['done', null, 2]);
    assert.equal(refusedReplaces, 0);
    assert.deepEqual((await devices.listChannels(DEV, { page: 1, size: 10 })).items.map((c) => c.channelId), [CH1, CH2]);
    dev.onMessage(() => {});
  });

  it('catalog answer while the store cannot read (channel cap check): answered 200 and stored, not answered 503 and lost', async () => {
    await devices.replaceChannels(DEV, [], Date.now());
    const answers: number[] = [];
    dev.onMessage(async ({ msg }) => {
      if (msg.cmdType !== 'Catalog') return;
      refuseDeviceReads = true;
      try {
        answers.push((await dev.send(bodies.catalogPage(DEV, msg.sn, 2, [CH1, CH2]))).status);
      } finally {
        refuseDeviceReads = false;
      }
    });
    await side.control.syncCatalog(DEV);
    await waitUntil(async () => answers.length === 1 && (await side.control.catalogProgress(DEV)).state !== 'running', 4000);
    const p = await side.control.catalogProgress(DEV);
    assert.deepEqual(answers, [200]);
    assert.deepEqual([p.state, p.error, p.received], ['done', null, 2]);
    assert.deepEqual((await devices.listChannels(DEV, { page: 1, size: 10 })).items.map((c) => c.channelId), [CH1, CH2]);
    dev.onMessage(() => {});
  });

  it('catalog sync whose store keeps refusing: failed after four attempts, the stored channels untouched', async () => {
    dev.onMessage(async ({ msg }) => {
      if (msg.cmdType === 'Catalog') await dev.send(bodies.catalogPage(DEV, msg.sn, 1, [CH3]));
    });
    refusedReplaces = 10;
    const t0 = Date.now();
    await side.control.syncCatalog(DEV);
    await waitUntil(async () => (await side.control.catalogProgress(DEV)).state !== 'running', 8000);
    const p = await side.control.catalogProgress(DEV);
    assert.equal(p.state, 'failed');
    assert.match(p.error ?? '', /storage operation failed/);
    assert.equal(refusedReplaces, 6, 'one attempt and three retries, then no more');
    assert.ok(Date.now() - t0 >= 4000, 'the retries are spread over 4.25 s');
    assert.deepEqual((await devices.listChannels(DEV, { page: 1, size: 10 })).items.map((c) => c.channelId), [CH1, CH2]);
    refusedReplaces = 0;
    dev.onMessage(() => {});
  });

  it('PTZ: DeviceControl to the channel with the Annex A.3 bytes', async () => {
    await side.control.ptz({ deviceId: DEV, channelId: CH1 }, 'left', 128);
    const { msg, request } = await dev.next('DeviceControl');
    assert.equal(request.uri.user, CH1);
    assert.equal(msg.deviceId, CH1);
    // A5 0F 01 | 02 (left) | 80 pan speed | 00 tilt | 00 zoom/addr | (A5+0F+01+02+80) mod 256 = 37
    assert.equal(msg.fields['PTZCmd'], 'A50F010280000037');
    await side.control.ptz({ deviceId: DEV, channelId: CH1 }, 'zoomin', 0xf0);
    // A5 0F 01 | 10 (zoom in) | 00 | 00 | F0 (zoom speed 15 << 4) | A5+0F+01+10+F0 = 0x1B5 → B5
    assert.equal((await dev.next('DeviceControl')).msg.fields['PTZCmd'], 'A50F01100000F0B5');
    await side.control.deviceControl(DEV, 'guard');
    assert.equal((await dev.next('DeviceControl')).msg.fields['GuardCmd'], 'SetGuard');
  });

  it('DeviceInfo and DeviceStatus: answered by SN, stored, mapped', async () => {
    dev.onMessage(async ({ msg }) => {
      if (msg.cmdType === 'DeviceInfo') await dev.send(bodies.deviceInfo(DEV, msg.sn));
      if (msg.cmdType === 'DeviceStatus') await dev.send(bodies.deviceStatus(DEV, msg.sn));
    });
    assert.deepEqual(await side.control.queryDeviceInfo(DEV), {
      deviceId: DEV,
      deviceName: 'Superdock',
      manufacturer: 'StrawberryInno',
      model: 'test',
      firmware: '1.0',
      channelCount: 2,
    });
    await waitUntil(async () => (await devices.getDevice(DEV))?.manufacturer === 'StrawberryInno');
    assert.deepEqual(await side.control.queryDeviceStatus(DEV), {
      deviceId: DEV,
      online: true,
      status: 'OK',
      encoding: true,
      recording: false,
      deviceTime: '2025-06-01T08:00:00',
      alarms: [],
    });
    dev.onMessage(() => {});
  });

  it('a device that does not answer: DeviceTimeoutError (response phase)', async () => {
    await assert.rejects(side.control.queryDeviceInfo(DEV), (e) => e instanceof DeviceTimeoutError && e.phase === 'response');
  });

  it('RecordInfo: SN returned at once, result assembled from three MESSAGEs, fetched by SN', async () => {
    dev.onMessage(async ({ msg }) => {
      if (msg.cmdType !== 'RecordInfo') return;
      await dev.send(bodies.recordPage(DEV, CH1, msg.sn, 5, [0, 1]));
      await dev.send(bodies.recordPage(DEV, CH1, msg.sn, 5, [2, 3]));
      await dev.send(bodies.recordPage(DEV, CH1, msg.sn, 5, [4]));
    });
    const { sn } = await side.control.queryRecords({ deviceId: DEV, channelId: CH1 }, { start: '2025-06-01T00:00:00', end: '2025-06-01T23:59:59' });
    assert.match(sn, /^[0-9a-f]{8}-\d+$/);
    const query = (await dev.next('RecordInfo')).msg;
    assert.equal(query.deviceId, CH1);
    assert.deepEqual([query.fields['StartTime'], query.fields['EndTime'], query.fields['Type']], ['2025-06-01T00:00:00', '2025-06-01T23:59:59', 'all']);
    assert.equal(sn.split('-')[1], query.sn, 'the API SN carries the command SN');
    await waitUntil(async () => (await side.control.recordResult(sn)).state === 'done');
    const result = await side.control.recordResult(sn);
    assert.deepEqual([result.complete, result.total, result.items.length, result.error], [true, 5, 5, null]);
    assert.deepEqual(result.items.map((i) => i.startTime), ['00', '01', '02', '03', '04'].map((h) => `2025-06-01T${h}:00:00`));
    await assert.rejects(side.control.recordResult('ffffffff-1'), RecordQueryNotFoundError);
    dev.onMessage(() => {});
  });

  it('unsolicited DeviceInfo and Catalog right after REGISTER are stored (sample 07); alarms are events and acknowledged', async () => {
    assert.equal((await dev.send(bodies.deviceInfo(DEV, 1).replace('Superdock', 'Pushed'))).status, 200);
    assert.equal((await dev.send(bodies.catalogPage(DEV, 1, 1, ['34020000001310000009']))).status, 200);
    await waitUntil(async () => (await devices.getDevice(DEV))?.name === 'Pushed');
    assert.ok(await devices.getChannel(DEV, '34020000001310000009'));
    assert.equal(seen.catalogChanged.at(-1)?.source, 'report');
    assert.equal((await dev.send(bodies.alarm(DEV, 77))).status, 200);
    const ack = await dev.next('Alarm');
    assert.deepEqual([ack.msg.root, ack.msg.sn, ack.msg.fields['Result']], ['Response', '77', 'OK']);
    assert.equal(seen.alarm.at(-1)?.alarm.alarmMethod, '2');
  });

  it('TCP: register and query over the device’s own connection', async () => {
    const tcp = await startFakeDevice(DEV_TCP, side.sipPort, 'tcp');
    try {
      assert.equal((await tcp.register({ password: PASSWORD })).status, 200);
      assert.equal((await devices.getDevice(DEV_TCP))?.transport, 'TCP');
      tcp.onMessage(async ({ msg }) => {
        if (msg.cmdType === 'DeviceStatus') await tcp.send(bodies.deviceStatus(DEV_TCP, msg.sn));
      });
      assert.equal((await side.control.queryDeviceStatus(DEV_TCP)).status, 'OK');
      assert.equal(tcp.received[0]?.request.headers.get('Via')?.startsWith('SIP/2.0/TCP'), true);
    } finally {
      await tcp.close();
    }
  });

  it('a device that stopped listening: the MESSAGE times out in the request phase', async () => {
    const silent = await startFakeDevice(DEV_SILENT, side.sipPort);
    assert.equal((await silent.register({ password: PASSWORD })).status, 200);
    await silent.close();
    await assert.rejects(side.control.ptz({ deviceId: DEV_SILENT, channelId: CH1 }, 'stop', 0), (e) => e instanceof DeviceTimeoutError && e.phase === 'request');
  });

  it('after a restart (no flow in memory) a registration the store holds online is not taken over: 401, then REGISTER binds it again (SEC-1)', async () => {
    side.flows.forget(DEV);
    const uplinks = seen.uplink.length;
    const refused = await dev.send(bodies.keepalive(DEV, 9));
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('WWW-Authenticate') ?? '', /^Digest realm="3402000000", nonce="[0-9a-f]{32}"/);
    assert.equal(side.flows.get(DEV), undefined);
    assert.equal(seen.uplink.length, uplinks, 'no uplink: no ownership claim');
    assert.equal((await dev.register({ password: PASSWORD })).status, 200);
    assert.equal((await dev.send(bodies.keepalive(DEV, 10))).status, 200);
    assert.equal(side.flows.get(DEV)?.flow.remotePort, dev.stack.port);
  });

  it('unregister: offline event, flow forgotten, controls refused with 4601', async () => {
    const res = await dev.register({ password: PASSWORD, expires: 0 });
    assert.equal(res.status, 200);
    assert.equal((await devices.getDevice(DEV))?.online, false);
    assert.deepEqual(seen.offline.map((e) => [e.deviceId, e.reason]), [[DEV, 'unregister']]);
    assert.equal(seen.uplink.at(-1)?.kind, 'unregister');
    await assert.rejects(side.control.ptz({ deviceId: DEV, channelId: CH1 }, 'stop', 0), DeviceOfflineError);
    assert.equal((await dev.send(bodies.keepalive(DEV))).status, 404);
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
