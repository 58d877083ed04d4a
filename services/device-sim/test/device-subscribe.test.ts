// SUBSCRIBE / NOTIFY (GB/T 28181-2016 §9.11) and alarms against the tiny platform.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  buildCatalogQuery, buildManscdp, buildMobilePositionQuery, decodeAlarmNotify, decodeCatalogNotify, decodeMobilePositionNotify,
  decodeResultResponse, parseManscdp,
} from '@vms/gb28181';
import type { SimulatedDevice } from '../src/index.ts';
import { DEVICE_ID, registeredDevice } from './support/device.ts';
import { TestPlatform } from './support/platform.ts';

describe('subscriptions', () => {
  let platform: TestPlatform;
  let device: SimulatedDevice;
  before(async () => {
    platform = await TestPlatform.start();
    device = await registeredDevice(platform, { channels: 3, catalogPageSize: 2 });
  });
  after(async () => {
    await device.close();
    await platform.close();
  });

  it('Catalog: 200 with Result OK, then the catalog in NOTIFYs (Event ADD, paged, SumNum 3)', async () => {
    const { dialog, status, body } = await platform.subscribe(DEVICE_ID, 'Catalog', buildCatalogQuery({ sn: '77', deviceId: DEVICE_ID }), 60);
    assert.equal(status, 200);
    assert.deepEqual(decodeResultResponse(parseManscdp(body), 'Catalog'), { sn: '77', deviceId: DEVICE_ID, result: 'OK' });
    await platform.waitFor(() => platform.subscriptionNotifies.length >= 2, 'two catalog NOTIFYs');
    const notifies = platform.subscriptionNotifies.splice(0).map((n) => {
      assert.match(n.req.headers.get('Subscription-State') ?? '', /^active;expires=\d+$/);
      assert.equal(n.req.headers.get('Event'), 'Catalog');
      return decodeCatalogNotify(n.msg ?? assert.fail('empty NOTIFY'));
    });
    assert.deepEqual(notifies.map((n) => [n.sumNum, n.items.length]), [[3, 2], [3, 1]]);
    assert.deepEqual(notifies.flatMap((n) => n.items.map((i) => [i.deviceId, i.event])), device.channelIds.map((id) => [id, 'ADD']));
    assert.equal(device.subscriptions.at(-1)?.kind, 'Catalog');
    await dialog.request('SUBSCRIBE', { headers: { Event: 'Catalog', Expires: '0' }, body: buildCatalogQuery({ sn: '78', deviceId: DEVICE_ID }), contentType: 'Application/MANSCDP+xml' });
    await platform.waitFor(() => device.subscriptions.at(-1)?.active === false, 'un-SUBSCRIBE ends it');
  });

  it('MobilePosition: a NOTIFY every Interval seconds', async () => {
    const { dialog } = await platform.subscribe(DEVICE_ID, 'presence', buildMobilePositionQuery({ sn: '80', deviceId: DEVICE_ID, interval: '1' }));
    await platform.waitFor(() => platform.subscriptionNotifies.length >= 2, 'two positions', 3500);
    const p = decodeMobilePositionNotify(platform.subscriptionNotifies.splice(0)[0]?.msg ?? assert.fail('empty NOTIFY'));
    assert.equal(p.deviceId, DEVICE_ID);
    assert.match(p.longitude, /^116\.\d{6}$/);
    await dialog.destroy();
  });

  it('Alarm: with a subscription the alarm is a NOTIFY; without one, a MESSAGE', async () => {
    await device.raiseAlarm({ description: '越界', alarmType: '2' });
    const message = await platform.waitFor(() => platform.messagesOf('Alarm')[0], 'alarm MESSAGE');
    const a = decodeAlarmNotify(message.msg);
    assert.deepEqual([a.deviceId, a.alarmPriority, a.alarmMethod, a.alarmDescription, a.alarmType], [DEVICE_ID, '1', '2', '越界', '2']);

    const query = buildManscdp({ root: 'Query', cmdType: 'Alarm', sn: '90', deviceId: DEVICE_ID });
    const { dialog, status } = await platform.subscribe(DEVICE_ID, 'presence', query);
    assert.equal(status, 200);
    await device.raiseAlarm({ deviceId: device.channelIds[0] as string });
    const n = await platform.waitFor(() => platform.subscriptionNotifies.find((x) => x.msg?.cmdType === 'Alarm'), 'alarm NOTIFY');
    assert.equal(decodeAlarmNotify(n.msg ?? assert.fail('empty')).deviceId, device.channelIds[0]);
    assert.equal(platform.messagesOf('Alarm').length, 1, 'no second MESSAGE');
    await dialog.destroy();
  });

  it('a SUBSCRIBE for something else: 489 Bad Event', async () => {
    const query = buildManscdp({ root: 'Query', cmdType: 'PresetQuery', sn: '91', deviceId: DEVICE_ID });
    await assert.rejects(platform.subscribe(DEVICE_ID, 'presence', query), (e: unknown) => (e as { response?: { status: number } }).response?.status === 489);
  });
});
