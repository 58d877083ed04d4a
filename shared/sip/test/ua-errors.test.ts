// Pins the stack error catalog: code → SIP status (STYLE §2). Changing a row is an API change.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { SIP_STACK_ERROR_STATUS, SipRejectedError, SipTimeoutError, SipTransportError } from '../src/ua/errors.ts';
import { makeRequest, makeResponse } from './support/transaction-fixtures.ts';

it('maps every stack error code to its SIP status', () => {
  assert.deepEqual(SIP_STACK_ERROR_STATUS, {
    SIP_ERR_TIMEOUT: 408,
    SIP_ERR_TRANSPORT: 503,
    SIP_ERR_STACK_CLOSED: 503,
    SIP_ERR_REJECTED: 500,
    SIP_ERR_CANCELLED: 487,
    SIP_ERR_DIALOG_TERMINATED: 481,
    SIP_ERR_INVALID_STATE: 500,
    SIP_ERR_BAD_ARGUMENT: 500,
  });
  assert.equal(new SipTimeoutError('MESSAGE', 'udp:1.2.3.4:5060').sipStatus, 408);
  assert.equal(new SipTransportError('tcp:1.2.3.4:5060', new Error('ECONNREFUSED')).code, 'SIP_ERR_TRANSPORT');
  assert.equal(new SipRejectedError(makeResponse(makeRequest('INVITE'), 486)).sipStatus, 486, 'rejection carries the peer status');
});
