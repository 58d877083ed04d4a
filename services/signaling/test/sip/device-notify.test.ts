// NOTIFY from devices outside any dialog (some devices send their subscription NOTIFYs so; GB/T 28181
// §9.11): taken from the device's bound flow only (SPEC SEC-1), decoded within the MESSAGE bounds, and
// turned into alarm / position events; bodies from sample 15's templates with real values put in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { createSipStack, type SipResponse, type SipStack } from '@vms/sip';
import { loadConfig } from '../../src/config/load.ts';
import { systemClock } from '../../src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import { createDeviceEvents, type DeviceEventMap } from '../../src/events/device-events.ts';
import { startDeviceSide, type DeviceSide } from '../../src/sip/device-side.ts';
import { REALM, SERVER_ID, startFakeDevice, type FakeDevice } from './fake-device.ts';

const DEV = '34020000001320000011';
const STRANGER = '34020000001320000012';
const log = pino({ level: 'silent' });

/** Sample 15, SPVMN official tool template, `${alarmdeviceID}` filled in. */
const ALARM = (id: string): string =>
  `<?xml version="1.0"?>\r\n<Notify>\r\n<CmdType>Alarm</CmdType>\r\n<SN>100</SN>\r\n<DeviceID>${id}</DeviceID>\r\n<AlarmPriority>4</AlarmPriority>\r\n<AlarmTime>2009-12-04T16:23:32</AlarmTime>\r\n<AlarmMethod>2</AlarmMethod>\r\n</Notify>\r\n`;
/** Sample 15, lunasaw template, with values where the Java expressions were. */
const POSITION = (id: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\r\n<Notify>\r\n<CmdType>MobilePosition</CmdType>\r\n<SN>383451</SN>\r\n<DeviceID>${id}</DeviceID>\r\n<Time>2026-12-01T10:00:00</Time>\r\n<Longitude>116.397128</Longitude>\r\n<Latitude>39.916527</Latitude>\r\n<Speed>0.0</Speed>\r\n<Direction>90</Direction>\r\n<Altitude>50</Altitude>\r\n</Notify>\r\n`;

describe('device NOTIFY outside a dialog', () => {
  let side: DeviceSide;
  let dev: FakeDevice;
  let other: SipStack;
  const alarms: DeviceEventMap['alarm'][] = [];
  const positions: DeviceEventMap['mobilePosition'][] = [];

  before(async () => {
    const config = loadConfig([], { VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0' });
    const events = createDeviceEvents(log);
    events.on('alarm', (e) => alarms.push(e));
    events.on('mobilePosition', (e) => positions.push(e));
    side = await startDeviceSide({ sip: config.sip, devices: createMemoryDeviceRepository(), events, clock: systemClock, log, utcOffsetMinutes: 480, userAgent: 'test' });
    dev = await startFakeDevice(DEV, side.sipPort);
    assert.equal((await dev.register()).status, 200);
    other = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
  });
  after(async () => {
    await dev?.close();
    await other?.close();
    await side?.close();
  });

  const notify = (stack: SipStack, from: string, body: string): Promise<SipResponse> =>
    stack.request({
      method: 'NOTIFY',
      uri: `sip:${SERVER_ID}@${REALM}`,
      headers: { From: `<sip:${from}@${REALM}>;tag=n1`, To: `<sip:${SERVER_ID}@${REALM}>`, Event: 'presence', 'Subscription-State': 'active;expires=3600' },
      ...(body === '' ? {} : { body, contentType: 'Application/MANSCDP+xml' }),
      target: { host: '127.0.0.1', port: side.sipPort, transport: 'udp' },
    });

  it('an alarm and a position from the registered device: 200, events with the body’s values', async () => {
    assert.equal((await notify(dev.stack, DEV, ALARM(DEV))).status, 200);
    assert.deepEqual(
      alarms.map((a) => [a.deviceId, a.via, a.alarm.alarmPriority, a.alarm.alarmMethod, a.alarm.alarmTime]),
      [[DEV, 'notify', '4', '2', '2009-12-04T16:23:32']],
    );
    assert.equal((await notify(dev.stack, DEV, POSITION(DEV))).status, 200);
    assert.deepEqual(positions.map((p) => [p.deviceId, p.position.longitude, p.position.latitude, p.position.direction]), [[DEV, '116.397128', '39.916527', '90']]);
  });

  it('refuses another flow naming the device (403), an unregistered sender (404), a bad body (400); an empty final NOTIFY is 200', async () => {
    const before = alarms.length;
    assert.equal((await notify(other, DEV, ALARM(DEV))).status, 403);
    assert.equal((await notify(other, STRANGER, ALARM(STRANGER))).status, 404);
    assert.equal((await notify(dev.stack, DEV, '<Notify><CmdType>Alarm</CmdType>')).status, 400);
    assert.equal((await notify(dev.stack, DEV, '')).status, 200);
    assert.equal(alarms.length, before, 'nothing emitted for a refused NOTIFY');
  });
});
