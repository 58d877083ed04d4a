import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseApiTime } from './gb-time.ts';

describe('parseApiTime', () => {
  it('keeps zone-less times as wall clock', () => {
    assert.equal(parseApiTime('2024-03-01 08:09:10', 480), '2024-03-01T08:09:10');
    assert.equal(parseApiTime('2024-03-01T08:09:10', 0), '2024-03-01T08:09:10');
    assert.equal(parseApiTime('2024-03-01T08:09:10.123', 0), '2024-03-01T08:09:10');
  });

  it('converts zoned ISO-8601 to the platform offset', () => {
    assert.equal(parseApiTime('2024-03-01T00:00:00Z', 480), '2024-03-01T08:00:00');
    assert.equal(parseApiTime('2024-03-01T08:00:00+08:00', 480), '2024-03-01T08:00:00');
    assert.equal(parseApiTime('2024-03-01T08:00:00+0800', 0), '2024-03-01T00:00:00');
    assert.equal(parseApiTime('2024-12-31T23:30:00-01:00', 60), '2025-01-01T01:30:00');
  });

  it('rejects malformed and impossible dates', () => {
    for (const bad of ['', '2024-02-30 00:00:00', '2023-02-29 00:00:00', '2024-13-01 00:00:00', '2024-01-01 24:00:00',
      '2024-01-01 00:60:00', '2024-01-01', '20240101000000', '2024-01-01 00:00:00+25:00', 'yesterday']) {
      assert.equal(parseApiTime(bad, 0), null, bad);
    }
    assert.equal(parseApiTime('2024-02-29 00:00:00', 0), '2024-02-29T00:00:00');
  });
});
