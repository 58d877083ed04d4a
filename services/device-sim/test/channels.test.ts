// Channel ids, fleet ids and synthetic records (hand-computed expectations).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildChannels, defaultChannelIds, deviceIdAt, pages, syntheticRecords } from '../src/channels.ts';
import { resolveDeviceOptions } from '../src/options.ts';

describe('ids', () => {
  it('channels: the device centre/industry code, type 131, its network digit, consecutive serials per device', () => {
    assert.deepEqual(defaultChannelIds('34020000001320000001', 3), ['34020000001310000001', '34020000001310000002', '34020000001310000003']);
    assert.deepEqual(defaultChannelIds('34020000001320000002', 3), ['34020000001310000004', '34020000001310000005', '34020000001310000006']);
    assert.deepEqual(defaultChannelIds('44010200001325000010', 1), ['44010200001315000010']);
  });
  it('fleet ids increment the serial digits', () => {
    assert.equal(deviceIdAt('34020000001320000001', 0), '34020000001320000001');
    assert.equal(deviceIdAt('34020000001320000001', 999), '34020000001320001000');
  });
  it('explicit channel ids win, names follow the device name', () => {
    const o = resolveDeviceOptions({
      server: { host: 'h', port: 1, id: '34020000002000000001' }, deviceId: '34020000001180000001', password: 'p', name: '仓库NVR',
      channelIds: ['34020000001310000101', '34020000001310000102'],
    });
    assert.deepEqual(buildChannels(o), [{ id: '34020000001310000101', name: '仓库NVR通道1' }, { id: '34020000001310000102', name: '仓库NVR通道2' }]);
  });
});

describe('syntheticRecords', () => {
  const o = resolveDeviceOptions({
    server: { host: 'h', port: 1, id: '34020000002000000001' }, deviceId: '34020000001320000001', password: 'p',
    recordSegmentS: 3600, maxRecords: 3, utcOffsetMinutes: 480,
  });
  const channel = { id: '34020000001310000001', name: 'c' };

  it('back-to-back files of recordSegmentS, the last cut at the end, local times in the given offset', () => {
    const r = syntheticRecords(o, { channel, start: new Date('2024-05-01T08:00:00+08:00'), end: new Date('2024-05-01T09:30:00+08:00') });
    assert.deepEqual(r.map((x) => [x.startTime, x.endTime, x.type, x.filePath]), [
      ['2024-05-01T08:00:00', '2024-05-01T09:00:00', 'time', '/record/34020000001310000001/20240501080000.ps'],
      ['2024-05-01T09:00:00', '2024-05-01T09:30:00', 'time', '/record/34020000001310000001/20240501090000.ps'],
    ]);
    assert.equal(r[1]?.fileSize, String(1800 * 256 * 1024));
  });
  it('at most maxRecords; none for an empty range; the query type carried back', () => {
    const day = syntheticRecords(o, { channel, start: new Date(0), end: new Date(86_400_000), type: 'alarm' });
    assert.deepEqual([day.length, day[0]?.type], [3, 'alarm']);
    assert.deepEqual(syntheticRecords(o, { channel, start: new Date(1000), end: new Date(1000) }), []);
  });
  it('pages: one empty page for nothing', () => {
    assert.deepEqual(pages([], 3), [[]]);
    assert.deepEqual(pages([1, 2, 3, 4], 3), [[1, 2, 3], [4]]);
  });
});
