// Wire format of cascade events: hand-written messages, not ones the encoder produced (STYLE §10).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCascadeEvent, encodeCascadeEvent } from './cascade-codec.ts';
import { MAX_CASCADE_MESSAGE_BYTES, decodeRawRequest, encodeRawRequest, type CascadeEvent } from './cascade-event.ts';

const head = '"v":1,"id":"7d0f3c1e-0000-4000-8000-000000000001","origin":"signal-node-b","at":1767225600000';

describe('cascade event codec', () => {
  it('reads a catalog notify with the channel snapshot, keeping fields it does not model', () => {
    const text = `{${head},"kind":"notify.catalog","payload":{"event":"OFF","deviceId":"34020000001320000001",` +
      `"channel":{"deviceId":"34020000001310000001","name":"东门","status":"OFF","parentId":"34020000001320000001","extra":{"Online":"0"}}}}`;
    const r = decodeCascadeEvent(text);
    assert.ok(r.ok);
    assert.deepEqual(r.event, {
      v: 1,
      id: '7d0f3c1e-0000-4000-8000-000000000001',
      origin: 'signal-node-b',
      at: 1767225600000,
      kind: 'notify.catalog',
      payload: {
        event: 'OFF',
        deviceId: '34020000001320000001',
        channel: { deviceId: '34020000001310000001', name: '东门', status: 'OFF', parentId: '34020000001320000001', extra: { Online: '0' } },
      },
    });
  });

  it('reads an alarm with all its fields and a mobile position', () => {
    const alarm = `{${head},"kind":"notify.alarm","payload":{"deviceId":"34020000001320000001","alarm":{"deviceId":"34020000001340000001",` +
      `"alarmPriority":"1","alarmMethod":"5","alarmTime":"2026-01-01T08:00:00","alarmDescription":"intrusion","longitude":"116.397",` +
      `"latitude":"39.908","alarmType":"2","eventType":"1"}}}`;
    const a = decodeCascadeEvent(alarm);
    assert.ok(a.ok && a.event.kind === 'notify.alarm');
    assert.equal(a.event.payload.alarm.eventType, '1');
    const pos = `{${head},"kind":"notify.mobilePosition","payload":{"deviceId":"34020000001320000001","position":{"deviceId":"34020000001320000001",` +
      `"time":"2026-01-01T08:00:00","longitude":"0.0000","latitude":"0.0000","speed":"0.0"}}}`;
    const p = decodeCascadeEvent(pos);
    assert.ok(p.ok && p.event.kind === 'notify.mobilePosition');
    assert.equal(p.event.payload.position.longitude, '0.0000', 'coordinates stay strings');
  });

  it('control.upstream carries the raw request bytes (GB2312 body intact) as base64', () => {
    const raw = Buffer.concat([Buffer.from('MESSAGE sip:34020000001310000001@3402000000 SIP/2.0\r\n\r\n<Name>'), Buffer.from([0xb6, 0xab, 0xc3, 0xc5])]);
    const text = `{${head},"kind":"control.upstream","payload":{"platformId":"34010000002000000001","targetDeviceId":"34020000001310000001",` +
      `"request":"${raw.toString('base64')}"}}`;
    const r = decodeCascadeEvent(text);
    assert.ok(r.ok && r.event.kind === 'control.upstream');
    assert.deepEqual(decodeRawRequest(r.event.payload), raw);
    assert.equal(encodeRawRequest(raw), raw.toString('base64'));
  });

  it('response.upstream carries a decoded Response by value, items and nested values kept', () => {
    const e: CascadeEvent = {
      v: 1, id: 'x', origin: 'a', at: 1, kind: 'response.upstream',
      payload: { platformId: '34010000002000000001', deviceId: '34020000001320000001', cmdType: 'Catalog', response: { sn: '17', deviceId: '34020000001320000001', sumNum: 2, items: [{ deviceId: 'c1', name: '东门' }, { deviceId: 'c2' }] } },
    };
    assert.deepEqual(decodeCascadeEvent(encodeCascadeEvent(e)), { ok: true, event: e });
  });

  it('round-trips what it encodes', () => {
    const e: CascadeEvent = { v: 1, id: 'x', origin: 'a', at: 1, kind: 'notify.catalog', payload: { event: 'ADD', deviceId: 'd', channel: { deviceId: 'c', name: 'n' } } };
    assert.deepEqual(decodeCascadeEvent(encodeCascadeEvent(e)), { ok: true, event: e });
  });

  it('drops what it cannot read, with a stable reason', () => {
    const cases: Array<[string, string]> = [
      ['not json', 'json'],
      ['[1,2]', 'envelope'],
      [`{"v":2,"id":"x","origin":"a","at":1,"kind":"notify.alarm","payload":{}}`, 'version'],
      [`{"id":"x","origin":"a","at":1,"kind":"notify.alarm","payload":{}}`, 'version'],
      [`{"v":1,"origin":"a","at":1,"kind":"notify.alarm","payload":{}}`, 'envelope'],
      [`{"v":1,"id":"x","origin":"a","at":"1","kind":"notify.alarm","payload":{}}`, 'envelope'],
      [`{${head},"kind":"notify.unknown","payload":{}}`, 'kind'],
      [`{${head},"kind":"notify.catalog","payload":{"event":"MOVE","deviceId":"d","channel":{"deviceId":"c"}}}`, 'payload'],
      [`{${head},"kind":"notify.catalog","payload":{"event":"ADD","deviceId":"d","channel":{"name":"c"}}}`, 'payload'],
      [`{${head},"kind":"notify.alarm","payload":{"deviceId":"d","alarm":{"deviceId":"d","alarmPriority":"1"}}}`, 'payload'],
      [`{${head},"kind":"notify.alarm","payload":{"deviceId":"d","alarm":{"deviceId":"d","alarmPriority":"1","alarmMethod":"2","longitude":1}}}`, 'payload'],
      [`{${head},"kind":"notify.mobilePosition","payload":{"deviceId":"d","position":{"deviceId":"d","time":"t","longitude":"1"}}}`, 'payload'],
      [`{${head},"kind":"control.upstream","payload":{"platformId":"p","targetDeviceId":"d","request":"not base64!"}}`, 'payload'],
      [`{${head},"kind":"control.upstream","payload":null}`, 'payload'],
      [`{${head},"kind":"response.upstream","payload":{"platformId":"p","deviceId":"d","cmdType":"DeviceInfo","response":{"deviceId":"d"}}}`, 'payload'],
      [`{${head},"kind":"response.upstream","payload":{"platformId":"p","deviceId":"d","response":{"sn":"1"}}}`, 'payload'],
      [' '.repeat(MAX_CASCADE_MESSAGE_BYTES + 1), 'too-large'],
    ];
    for (const [text, reason] of cases) {
      const r = decodeCascadeEvent(text);
      assert.equal(r.ok, false, text.slice(0, 80));
      if (!r.ok) assert.equal(r.reason, reason, text.slice(0, 80));
    }
  });
});
