// GB time formats, with explicit UTC offsets (China +480) so results do not depend on the host zone.
import assert from 'node:assert/strict';
import { formatGbDateHeader, formatGbTime, gbDateHeaderFormatter, fromSdpTime, parseGbTime, toSdpTime } from '../src/index.ts';
import { test, throwsGb } from './support.ts';

const CN = 480;
// 2024-01-01T00:00:00+08:00 = 2023-12-31T16:00:00Z = 1704038400 s
const NEW_YEAR_CN = new Date(Date.UTC(2023, 11, 31, 16, 0, 0));

test('formatGbTime writes local time without zone', () => {
  assert.equal(formatGbTime(NEW_YEAR_CN, CN), '2024-01-01T00:00:00');
  assert.equal(formatGbTime(NEW_YEAR_CN, 0), '2023-12-31T16:00:00');
  assert.equal(formatGbDateHeader(new Date(Date.UTC(2026, 10, 30, 6, 35, 6, 7)), 0), '2026-11-30T06:35:06.007');
});

test('parseGbTime reads GB, space-separated and ISO-8601 forms', () => {
  const want = NEW_YEAR_CN.getTime();
  assert.equal(parseGbTime('2024-01-01T00:00:00', CN).getTime(), want);
  assert.equal(parseGbTime('2024-01-01 00:00:00', CN).getTime(), want);
  assert.equal(parseGbTime(' 2024-01-01T00:00:00.000 ', CN).getTime(), want);
  assert.equal(parseGbTime('2023-12-31T16:00:00Z').getTime(), want);
  assert.equal(parseGbTime('2024-01-01T00:00:00+08:00', 0).getTime(), want); // explicit zone wins
  assert.equal(parseGbTime('2024-01-01T00:00:00+0800').getTime(), want);
  assert.equal(parseGbTime('2023-12-31T15:00:00-01:00').getTime(), want);
  assert.equal(parseGbTime('2024-01-01T00:00:00.5Z').getUTCMilliseconds(), 500);
  // without offset: host local time, same as the Date constructor
  assert.equal(parseGbTime('2024-06-01T12:30:00').getTime(), new Date(2024, 5, 1, 12, 30, 0).getTime());
});

test('formatting and parsing are inverse for a given offset', () => {
  for (const t of [0, 1704038400000, 1719835199000, 4102444800000]) {
    const d = new Date(t);
    assert.equal(parseGbTime(formatGbTime(d, CN), CN).getTime(), t);
  }
});

test('bad times are refused with GB_ERR_TIME', () => {
  for (const bad of ['2024-13-01T00:00:00', '2024-02-30T00:00:00', '2024-01-01T24:00:00', '2024-01-01', 'yesterday', '0024-01-01T00:00:00', '']) {
    throwsGb(() => parseGbTime(bad, CN), 'GB_ERR_TIME');
  }
  throwsGb(() => formatGbTime(new Date(NaN)), 'GB_ERR_TIME');
  assert.equal(parseGbTime('2024-02-29T00:00:00', 0).toISOString(), '2024-02-29T00:00:00.000Z'); // leap day
});

test('SDP t= times are seconds since 1970', () => {
  assert.equal(toSdpTime(NEW_YEAR_CN), '1704038400');
  assert.equal(toSdpTime(new Date(1704038400999)), '1704038400');
  assert.equal(fromSdpTime('1289475977').toISOString(), '2010-11-11T11:46:17.000Z'); // SPVMN History template
  throwsGb(() => fromSdpTime('-1'), 'GB_ERR_TIME');
});

test('gbDateHeaderFormatter writes what formatGbDateHeader does, across seconds, offsets and back in time', () => {
  for (const offset of [CN, 0, -300]) {
    const format = gbDateHeaderFormatter(offset);
    const start = Date.UTC(2026, 11, 31, 15, 59, 58, 990);
    for (const t of [start, start + 5, start + 9, start + 10, start + 99, start + 100, start + 1009, start + 2500, start + 60_000, start - 86_400_000, start]) {
      assert.equal(format(t), formatGbDateHeader(new Date(t), offset), `${t} at ${offset}`);
    }
  }
});
