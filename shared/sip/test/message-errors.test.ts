// Pins the error catalog: every code and the SIP status it maps to (STYLE 2), and the status table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reasonPhrase, SIP_ERROR_STATUS, SipError, SipParseError, SipStatus, sipStatusForError } from '../src/index.ts';

describe('error catalog', () => {
  it('maps each code to its SIP status', () => {
    assert.deepEqual({ ...SIP_ERROR_STATUS }, {
      SIP_ERR_START_LINE: 400,
      SIP_ERR_VERSION: 505,
      SIP_ERR_URI: 400,
      SIP_ERR_HEADER: 400,
      SIP_ERR_HEADER_VALUE: 400,
      SIP_ERR_MISSING_HEADER: 400,
      SIP_ERR_CONTENT_LENGTH: 400,
      SIP_ERR_BODY_TRUNCATED: 400,
      SIP_ERR_MESSAGE_TOO_LARGE: 513,
      SIP_ERR_AUTH_HEADER: 400,
      SIP_ERR_AUTH_UNSUPPORTED: 501,
    });
    assert.equal(sipStatusForError('SIP_ERR_VERSION'), 505);
  });

  it('SipParseError is a SipError with a code, never answerable without a request', () => {
    const err = new SipParseError('SIP_ERR_HEADER', 'x', {}, true);
    assert.ok(err instanceof SipError && err instanceof Error);
    assert.deepEqual([err.name, err.code, err.sipStatus, err.answerable], ['SipParseError', 'SIP_ERR_HEADER', 400, false]);
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
