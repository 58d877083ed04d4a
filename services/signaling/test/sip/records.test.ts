// RecordInfo assembly (sample 10 shape: answer's DeviceID is the device, items name both channels)
// and the TTL store results are fetched from by SN.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManscdpCommand, type RecordInfoResponse } from '@vms/gb28181';
import { RecordQueryNotFoundError } from '../../src/errors/catalog.ts';
import { createRecordAssembly } from '../../src/sip/record-assembler.ts';
import { createRecordResults } from '../../src/sip/record-results.ts';

const DEV = '34020000001320000001';

const item = (ch: number, hour: number): string =>
  `<Item><DeviceID>3402000000131000000${ch}</DeviceID><Name>ch${ch}_Record_${hour}</Name><FilePath>/record/20240101/${ch}/${hour}.mp4</FilePath>` +
  `<Address>Address</Address><StartTime>2024-01-01T0${hour}:00:00</StartTime><EndTime>2024-01-01T0${hour}:59:59</EndTime>` +
  `<Secrecy>0</Secrecy><Type>time</Type><RecorderID>${DEV}</RecorderID><FileSize>102400</FileSize></Item>`;

function page(sumNum: number, items: string[]): RecordInfoResponse {
  const body =
    `<?xml version="1.0" encoding="UTF-8"?>\r\n<Response><CmdType>RecordInfo</CmdType><SN>104</SN><DeviceID>${DEV}</DeviceID><Name>Cam-1</Name>` +
    `<SumNum>${sumNum}</SumNum><RecordList Num="${items.length}">${items.join('')}</RecordList></Response>`;
  return parseManscdpCommand(Buffer.from(body)).body as RecordInfoResponse;
}

describe('record assembly', () => {
  it('assembles SumNum items over several MESSAGEs, counting a resent item once', () => {
    const a = createRecordAssembly();
    assert.equal(a.add(page(5, [item(1, 0), item(2, 0)])), false);
    assert.deepEqual(a.snapshot(), { ...a.snapshot(), complete: false, total: 5 });
    assert.equal(a.snapshot().items.length, 2);
    assert.equal(a.add(page(5, [item(2, 0), item(1, 1)])), false, 'item(2, 0) again');
    assert.equal(a.add(page(5, [item(2, 1), item(1, 2)])), true);
    const r = a.result();
    assert.equal(r.items.length, 5);
    assert.deepEqual(r.items[0], {
      deviceId: '34020000001310000001',
      name: 'ch1_Record_0',
      filePath: '/record/20240101/1/0.mp4',
      address: 'Address',
      startTime: '2024-01-01T00:00:00',
      endTime: '2024-01-01T00:59:59',
      secrecy: 0,
      type: 'time',
      recorderId: DEV,
      fileSize: 102400,
    });
  });

  it('SumNum 0 without a RecordList completes empty; partial() is undefined before any page', () => {
    const a = createRecordAssembly();
    assert.equal(a.partial(), undefined);
    const body = `<?xml version="1.0"?><Response><CmdType>RecordInfo</CmdType><SN>1</SN><DeviceID>${DEV}</DeviceID><SumNum>0</SumNum></Response>`;
    assert.equal(a.add(parseManscdpCommand(Buffer.from(body)).body as RecordInfoResponse), true);
    assert.deepEqual(a.result().items, []);
  });
});

describe('record results by SN', () => {
  const base = { deviceId: DEV, channelId: '34020000001310000001', total: null, state: 'running' as const, complete: false, items: [], error: null };

  it('keeps results for the TTL, updates them in place, then forgets them', () => {
    const store = createRecordResults(1000);
    store.put({ ...base, sn: 'a-1' }, 0);
    store.put({ ...base, sn: 'a-2' }, 500);
    store.update('a-1', { state: 'done', total: 0, complete: true });
    assert.deepEqual(store.get('a-1', 999), { ...base, sn: 'a-1', state: 'done', total: 0, complete: true });
    assert.throws(() => store.get('a-1', 1000), RecordQueryNotFoundError);
    assert.equal(store.get('a-2', 1000).sn, 'a-2');
    assert.throws(() => store.get('nope', 0), RecordQueryNotFoundError);
    store.update('a-1', { state: 'failed' }); // expired: no-op
    assert.equal(store.size, 1);
  });
});
