import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { methodLabel, registrationResult, statusLabel } from './labels.ts';

describe('metric labels stay bounded', () => {
  it('maps unknown methods and impossible statuses to "other"', () => {
    assert.equal(methodLabel('MESSAGE'), 'MESSAGE');
    assert.equal(methodLabel('register'), 'other', 'methods are case-sensitive (RFC 3261 §7.1)');
    assert.equal(methodLabel('34020000001320000001'), 'other');
    assert.equal(statusLabel(200), '200');
    assert.equal(statusLabel(699), '699');
    for (const s of [99, 700, 200.5, Number.NaN]) assert.equal(statusLabel(s), 'other');
  });

  it('reads a REGISTER response as a registration result', () => {
    assert.deepEqual(
      [100, 200, 401, 403, 400, 404, 503].map(registrationResult),
      [null, 'accepted', 'challenged', 'forbidden', 'rejected', 'rejected', 'error'],
    );
  });
});
