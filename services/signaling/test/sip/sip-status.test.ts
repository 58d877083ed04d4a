// Pins the SIP side of the error catalog (STYLE 2): what a device is answered when handling its request
// fails, and what a failed request to a device becomes for the API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GbMissingFieldError } from '@vms/gb28181';
import { SipStackError, SipTimeoutError, SipTransportError } from '@vms/sip';
import {
  BadParameterError,
  DeviceOfflineError,
  DeviceRejectedError,
  DeviceTimeoutError,
  ErrorCodes,
  InternalError,
  ShuttingDownError,
  StorageError,
} from '../../src/errors/catalog.ts';
import { ENVELOPE_BY_ERROR } from '../../src/http/errors.ts';
import { deviceErrorFromSip, deviceErrorFromStatus, SIP_STATUS_BY_ERROR, sipReplyFor, toCatalogError } from '../../src/sip/sip-status.ts';

describe('SIP status table', () => {
  it('maps every catalog code to the status devices get', () => {
    assert.deepEqual(SIP_STATUS_BY_ERROR, {
      [ErrorCodes.BAD_PARAMETER]: 400,
      [ErrorCodes.UNAUTHORIZED]: 403,
      [ErrorCodes.TENANT_FORBIDDEN]: 403,
      [ErrorCodes.ROLE_FORBIDDEN]: 403,
      [ErrorCodes.ROUTE_NOT_FOUND]: 404,
      [ErrorCodes.DEVICE_NOT_FOUND]: 404,
      [ErrorCodes.CHANNEL_NOT_FOUND]: 404,
      [ErrorCodes.RECORD_QUERY_NOT_FOUND]: 404,
      [ErrorCodes.PLATFORM_NOT_FOUND]: 404,
      [ErrorCodes.DEVICE_OFFLINE]: 404,
      [ErrorCodes.FORWARDING_DISABLED]: 480,
      [ErrorCodes.OWNER_NODE_OFFLINE]: 480,
      [ErrorCodes.OWNER_UNREACHABLE]: 504,
      [ErrorCodes.FORGED_FORWARD]: 403,
      [ErrorCodes.DEVICE_TIMEOUT]: 408,
      [ErrorCodes.DEVICE_REJECTED]: 500,
      [ErrorCodes.CONTROL_UNAVAILABLE]: 503,
      [ErrorCodes.MEDIA_SESSION_NOT_FOUND]: 481,
      [ErrorCodes.MEDIA_FAILED]: 503,
      [ErrorCodes.GB_VERSION_UNSUPPORTED]: 501,
      [ErrorCodes.UPLOAD_NOT_FOUND]: 404,
      [ErrorCodes.STORAGE_FAILED]: 503,
      [ErrorCodes.BODY_TOO_LARGE]: 513,
      [ErrorCodes.RATE_LIMITED]: 503,
      [ErrorCodes.CHANNEL_LIMIT]: 403,
      [ErrorCodes.SHUTTING_DOWN]: 503,
      [ErrorCodes.NOT_READY]: 503,
      [ErrorCodes.CONFIG_INVALID]: 500,
      [ErrorCodes.INTERNAL]: 500,
    });
    assert.deepEqual(Object.keys(SIP_STATUS_BY_ERROR).sort(), Object.keys(ENVELOPE_BY_ERROR).sort(), 'same codes as the API table');
  });

  it('503 answers carry Retry-After; others no extra header', () => {
    assert.deepEqual(sipReplyFor(new StorageError('registerDevice')), { status: 503, headers: { 'Retry-After': '5' } });
    assert.deepEqual(sipReplyFor(new DeviceOfflineError('34020000001320000001')), { status: 404, headers: {} });
  });

  it('classifies what a handler throws: catalog errors as is, bad bodies 400, the rest internal', () => {
    const offline = new DeviceOfflineError('x');
    assert.equal(toCatalogError(offline), offline);
    assert.ok(toCatalogError(new GbMissingFieldError('CmdType')) instanceof BadParameterError);
    assert.ok(toCatalogError(new TypeError('bug')) instanceof InternalError);
  });
});

describe('failed requests to devices as API errors', () => {
  const DEV = '34020000001320000001';

  it('SIP layer failures', () => {
    const timeout = deviceErrorFromSip(new SipTimeoutError('MESSAGE', 'udp:1.2.3.4:5060'), DEV, 'PTZ control');
    assert.ok(timeout instanceof DeviceTimeoutError);
    assert.equal(timeout.phase, 'request');
    assert.equal(ENVELOPE_BY_ERROR[timeout.code].code, 4606);
    const gone = deviceErrorFromSip(new SipTransportError('tcp:1.2.3.4:5060', new Error('ECONNREFUSED')), DEV, 'PTZ control');
    assert.ok(gone instanceof DeviceOfflineError);
    assert.equal(ENVELOPE_BY_ERROR[gone.code].code, 4601);
    assert.ok(deviceErrorFromSip(new SipStackError('SIP_ERR_STACK_CLOSED', 'closed'), DEV, 'x') instanceof ShuttingDownError);
    assert.ok(deviceErrorFromSip(new SipStackError('SIP_ERR_BAD_ARGUMENT', 'bad'), DEV, 'x') instanceof InternalError);
    assert.ok(deviceErrorFromSip(new Error('?'), DEV, 'x') instanceof InternalError);
  });

  it('a non-2xx answer is a rejection (4607) naming the status', () => {
    const e = deviceErrorFromStatus(488, 'Not Acceptable Here', DEV, 'catalog query');
    assert.ok(e instanceof DeviceRejectedError);
    assert.equal(e.message, `device ${DEV} rejected catalog query: SIP 488 Not Acceptable Here`);
    assert.equal(ENVELOPE_BY_ERROR[e.code].code, 4607);
  });
});
