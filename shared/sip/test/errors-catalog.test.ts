// Pins the package's one error catalog (STYLE 2): every code and the SIP status it maps to, the class
// hierarchy, and the status table. Changing a row is an API change: expectations are written by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  reasonPhrase, SIP_ERROR_STATUS, SipError, SipParseError, SipRejectedError, SipStackError, SipStatus, sipStatusForError,
  SipTimeoutError, SipTransportError,
} from '../src/index.ts';
import { makeRequest, makeResponse } from './support/transaction-fixtures.ts';

describe('error catalog', () => {
  it('maps every code to its SIP status', () => {
    assert.deepEqual({ ...SIP_ERROR_STATUS }, {
      // message layer
      SIP_ERR_START_LINE: 400,
      SIP_ERR_VERSION: 505,
      SIP_ERR_URI: 400,
      SIP_ERR_HEADER: 400,
      SIP_ERR_HEADER_VALUE: 400,
      SIP_ERR_MISSING_HEADER: 400,
      SIP_ERR_CONTENT_LENGTH: 400,
      SIP_ERR_BODY_TRUNCATED: 400,
      SIP_ERR_MESSAGE_TOO_LARGE: 513,
      // digest
      SIP_ERR_AUTH_HEADER: 400,
      SIP_ERR_AUTH_UNSUPPORTED: 501,
      // stack
      SIP_ERR_TIMEOUT: 408,
      SIP_ERR_TRANSPORT: 503,
      SIP_ERR_STACK_CLOSED: 503,
      SIP_ERR_REJECTED: 500,
      SIP_ERR_CANCELLED: 487,
      SIP_ERR_DIALOG_TERMINATED: 481,
      SIP_ERR_INVALID_STATE: 500,
      SIP_ERR_BAD_ARGUMENT: 500,
    });
    assert.ok(Object.isFrozen(SIP_ERROR_STATUS));
    assert.equal(sipStatusForError('SIP_ERR_VERSION'), 505);
    assert.equal(sipStatusForError('SIP_ERR_TIMEOUT'), 408);
  });

  it('SipParseError is a SipError with a code, never answerable without a request', () => {
    const err = new SipParseError('SIP_ERR_HEADER', 'x', {}, true);
    assert.ok(err instanceof SipError && err instanceof Error);
    assert.deepEqual([err.name, err.code, err.sipStatus, err.answerable], ['SipParseError', 'SIP_ERR_HEADER', 400, false]);
  });

  it('stack errors are SipErrors of the same catalog', () => {
    const timeout = new SipTimeoutError('MESSAGE', 'udp:1.2.3.4:5060');
    assert.ok(timeout instanceof SipStackError && timeout instanceof SipError);
    assert.deepEqual([timeout.name, timeout.code, timeout.sipStatus], ['SipTimeoutError', 'SIP_ERR_TIMEOUT', 408]);
    const transport = new SipTransportError('tcp:1.2.3.4:5060', new Error('ECONNREFUSED'));
    assert.deepEqual([transport.code, transport.sipStatus], ['SIP_ERR_TRANSPORT', 503]);
    const closed = new SipStackError('SIP_ERR_STACK_CLOSED', 'closed');
    assert.deepEqual([closed.name, closed.sipStatus], ['SipStackError', 503]);
  });

  it('a rejection carries the peer status, not the table placeholder', () => {
    const rejected = new SipRejectedError(makeResponse(makeRequest('INVITE'), 486));
    assert.deepEqual([rejected.code, rejected.sipStatus], ['SIP_ERR_REJECTED', 486]);
  });
});

describe('SipStatus', () => {
  it('names the codes GB28181 signalling uses', () => {
    assert.deepEqual(
      [SipStatus.Trying, SipStatus.OK, SipStatus.BadRequest, SipStatus.Unauthorized, SipStatus.Forbidden, SipStatus.NotFound,
        SipStatus.RequestTimeout, SipStatus.CallTransactionDoesNotExist, SipStatus.BusyHere, SipStatus.RequestTerminated,
        SipStatus.ServerInternalError, SipStatus.VersionNotSupported, SipStatus.MessageTooLarge],
      [100, 200, 400, 401, 403, 404, 408, 481, 486, 487, 500, 505, 513],
    );
  });

  it('reason phrases per RFC 3261 §21, class names for unknown codes', () => {
    assert.deepEqual([reasonPhrase(200), reasonPhrase(401), reasonPhrase(481), reasonPhrase(299), reasonPhrase(699)], [
      'OK', 'Unauthorized', 'Call/Transaction Does Not Exist', 'Success', 'Global Failure',
    ]);
  });
});
