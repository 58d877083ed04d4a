// Pins the error catalog: codes, transience and SIP status are a public contract.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CASCADE_ERROR_INFO, CascadeError, CascadeSendError, isCascadeError } from './errors.ts';
import { toStoreError } from './platform/store-errors.ts';

describe('cascade error catalog', () => {
  it('has exactly these codes, transient flags and SIP statuses', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(CASCADE_ERROR_INFO).map(([k, v]) => [k, [v.transient, v.sipStatus]])),
      {
        CASCADE_ERR_INVALID_PLATFORM: [false, 500],
        CASCADE_ERR_INVALID_CHANNEL: [false, 500],
        CASCADE_ERR_PLATFORM_NOT_FOUND: [false, 404],
        CASCADE_ERR_STORE_UNAVAILABLE: [true, 503],
        CASCADE_ERR_STORE_QUERY: [false, 500],
        CASCADE_ERR_SEND: [true, 408],
        CASCADE_ERR_ARGUMENT: [false, 400],
        CASCADE_ERR_CLOSED: [false, 503],
        CASCADE_ERR_CHANNEL_NOT_SHARED: [false, 404],
        CASCADE_ERR_BAD_OFFER: [false, 400],
        CASCADE_ERR_UNSUPPORTED_OFFER: [false, 488],
        CASCADE_ERR_NOT_LEADER: [true, 503],
        CASCADE_ERR_SOURCE_UNAVAILABLE: [true, 480],
        CASCADE_ERR_SOURCE_TIMEOUT: [true, 504],
        CASCADE_ERR_MEDIA: [true, 500],
        CASCADE_ERR_SESSION_GONE: [false, 481],
      },
    );
  });

  it('classes follow the table; driver errors map by code, never by message', () => {
    const e = new CascadeSendError(2);
    assert.ok(e instanceof CascadeError && isCascadeError(e));
    assert.deepEqual([e.code, e.transient, e.sipStatus, e.sentPages, e.name], ['CASCADE_ERR_SEND', true, 408, 2, 'CascadeSendError']);
    assert.equal(isCascadeError(new Error('x')), false);
    const map = (err: unknown) => toStoreError(err, 'op').code;
    assert.equal(map({ code: 'ECONNREFUSED' }), 'CASCADE_ERR_STORE_UNAVAILABLE');
    assert.equal(map({ code: 'ER_SOMETHING', fatal: true }), 'CASCADE_ERR_STORE_UNAVAILABLE');
    assert.equal(map({ code: 'ER_NO_REFERENCED_ROW_2', message: 'ECONNREFUSED' }), 'CASCADE_ERR_PLATFORM_NOT_FOUND');
    assert.equal(map({ code: 'ER_NO_SUCH_TABLE' }), 'CASCADE_ERR_STORE_QUERY');
    assert.equal(map(new CascadeError('CASCADE_ERR_CLOSED', 'c')), 'CASCADE_ERR_CLOSED');
  });
});
