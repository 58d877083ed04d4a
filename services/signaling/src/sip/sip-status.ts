// The SIP side of the one error catalog (STYLE 2), pinned by test/sip/sip-status.test.ts:
//  - SIP_STATUS_BY_ERROR: the status a device gets when handling its request fails with a catalog error;
//  - deviceErrorFromSip: how a failed request *to* a device becomes a catalog error (and so an API code).
import { isGbError } from '@vms/gb28181';
import { SipParseError, SipStackError, SipStatus } from '@vms/sip';
import {
  BadParameterError,
  DeviceOfflineError,
  DeviceRejectedError,
  DeviceTimeoutError,
  ErrorCodes,
  InternalError,
  isVmsError,
  ShuttingDownError,
  type ErrorCode,
  type VmsError,
} from '../errors/catalog.ts';

export const SIP_STATUS_BY_ERROR: { readonly [C in ErrorCode]: number } = {
  [ErrorCodes.BAD_PARAMETER]: SipStatus.BadRequest, // malformed MANSCDP body
  // SIP 401 must carry a challenge; a request we refuse for its identity is 403 (RFC 3261 §21.4.4).
  [ErrorCodes.UNAUTHORIZED]: SipStatus.Forbidden,
  [ErrorCodes.TENANT_FORBIDDEN]: SipStatus.Forbidden,
  [ErrorCodes.ROLE_FORBIDDEN]: SipStatus.Forbidden,
  [ErrorCodes.ROUTE_NOT_FOUND]: SipStatus.NotFound,
  [ErrorCodes.DEVICE_NOT_FOUND]: SipStatus.NotFound,
  [ErrorCodes.CHANNEL_NOT_FOUND]: SipStatus.NotFound,
  [ErrorCodes.RECORD_QUERY_NOT_FOUND]: SipStatus.NotFound,
  [ErrorCodes.PLATFORM_NOT_FOUND]: SipStatus.NotFound,
  // A request from a device not registered here: 404, as WVP answers; devices re-REGISTER after it.
  [ErrorCodes.DEVICE_OFFLINE]: SipStatus.NotFound,
  [ErrorCodes.FORWARDING_DISABLED]: SipStatus.TemporarilyUnavailable,
  [ErrorCodes.OWNER_NODE_OFFLINE]: SipStatus.TemporarilyUnavailable,
  [ErrorCodes.OWNER_UNREACHABLE]: SipStatus.ServerTimeout,
  [ErrorCodes.FORGED_FORWARD]: SipStatus.Forbidden,
  [ErrorCodes.DEVICE_TIMEOUT]: SipStatus.RequestTimeout,
  [ErrorCodes.DEVICE_REJECTED]: SipStatus.ServerInternalError,
  [ErrorCodes.CONTROL_UNAVAILABLE]: SipStatus.ServiceUnavailable,
  [ErrorCodes.MEDIA_SESSION_NOT_FOUND]: SipStatus.CallTransactionDoesNotExist,
  [ErrorCodes.MEDIA_FAILED]: SipStatus.ServiceUnavailable,
  // RFC 3261 §21.4.26 (488-like refusals are for SDP): 501 Not Implemented says the peer lacks the feature
  [ErrorCodes.GB_VERSION_UNSUPPORTED]: SipStatus.NotImplemented,
  [ErrorCodes.UPLOAD_NOT_FOUND]: SipStatus.NotFound,
  // RFC 3261 §21.5.4: 503 tells the device to retry later (with Retry-After), not that it is refused.
  [ErrorCodes.STORAGE_FAILED]: SipStatus.ServiceUnavailable,
  [ErrorCodes.SHUTTING_DOWN]: SipStatus.ServiceUnavailable,
  [ErrorCodes.NOT_READY]: SipStatus.ServiceUnavailable,
  [ErrorCodes.BODY_TOO_LARGE]: SipStatus.MessageTooLarge,
  // SPEC SEC-3, RFC 3261 §21.5.4: the device is not refused, only asked to slow down: 503 + Retry-After
  // (429 does not exist in SIP; 486 Busy Here is a callee's state for INVITE, not overload).
  [ErrorCodes.RATE_LIMITED]: SipStatus.ServiceUnavailable,
  // RFC 3261 §21.4.4 403: understood and refused, and repeating it will not help until the operator
  // raises the cap or the device reports fewer channels (413 is about this request's size, not the store).
  [ErrorCodes.CHANNEL_LIMIT]: SipStatus.Forbidden,
  [ErrorCodes.CONFIG_INVALID]: SipStatus.ServerInternalError,
  [ErrorCodes.INTERNAL]: SipStatus.ServerInternalError,
};

/** Seconds a device is asked to wait before retrying after a 503 (RFC 3261 §20.33). */
export const RETRY_AFTER_SEC = 5;

/** Anything thrown while handling a device's request, as a catalog error (GbError: its body was bad). */
export function toCatalogError(err: unknown): VmsError {
  if (isVmsError(err)) return err;
  if (isGbError(err)) return new BadParameterError('body', err.message);
  if (err instanceof SipParseError) return new BadParameterError(err.header ?? 'header', err.message);
  return new InternalError({ cause: err });
}

/** SIP status and extra headers for a failed device request. */
export function sipReplyFor(err: VmsError): { readonly status: number; readonly headers: Record<string, string> } {
  const status = SIP_STATUS_BY_ERROR[err.code];
  return { status, headers: status === SipStatus.ServiceUnavailable ? { 'Retry-After': String(RETRY_AFTER_SEC) } : {} };
}

/** A request to a device failed in the SIP layer (no final response, socket error, stack closed). */
export function deviceErrorFromSip(err: unknown, deviceId: string, operation: string): VmsError {
  if (isVmsError(err)) return err;
  if (err instanceof SipStackError) {
    switch (err.code) {
      case 'SIP_ERR_TIMEOUT':
        return new DeviceTimeoutError(deviceId, operation, 'request');
      case 'SIP_ERR_TRANSPORT':
        return new DeviceOfflineError(deviceId); // its TCP connection is gone and it cannot be reached
      case 'SIP_ERR_STACK_CLOSED':
        return new ShuttingDownError();
      default:
        return new InternalError({ cause: err });
    }
  }
  return new InternalError({ cause: err });
}

/** The device answered our MESSAGE with a non-2xx final response. */
export function deviceErrorFromStatus(status: number, reason: string, deviceId: string, operation: string): VmsError {
  return new DeviceRejectedError(deviceId, operation, `SIP ${status} ${reason}`.trim());
}
