import type { SipResponse } from '../message/types.ts';
import { SipStatus } from '../status.ts';

/**
 * Errors of the transport/transaction/dialog/UA layers (the codes the message layer's catalog in
 * `errors.ts` does not cover). Same shape as `SipError`: a stable string code, and one table mapping
 * each code to the SIP status it stands for locally (RFC 3261 §8.1.3.1: a timeout is a local 408, a
 * transport failure a local 503). Callers branch on `code`, never on `message`.
 */
export const SIP_STACK_ERROR_STATUS = Object.freeze({
  /** Timer B / F fired: no final response (RFC 3261 §17.1.1.2, §17.1.2.2). */
  SIP_ERR_TIMEOUT: SipStatus.RequestTimeout,
  /** The message could not be sent (connect refused, socket error, ICMP). */
  SIP_ERR_TRANSPORT: SipStatus.ServiceUnavailable,
  /** The stack was closed while the request was pending. */
  SIP_ERR_STACK_CLOSED: SipStatus.ServiceUnavailable,
  /** A dialog-creating request got a non-2xx final response; `sipStatus` is that response's status. */
  SIP_ERR_REJECTED: SipStatus.ServerInternalError,
  /** Our own CANCEL ended the INVITE (RFC 3261 §9.1): the peer answered 487. */
  SIP_ERR_CANCELLED: SipStatus.RequestTerminated,
  /** In-dialog request on a dialog that has ended. */
  SIP_ERR_DIALOG_TERMINATED: SipStatus.CallTransactionDoesNotExist,
  /** A reply after the final response, or on a transaction that has ended. */
  SIP_ERR_INVALID_STATE: SipStatus.ServerInternalError,
  /** A caller-supplied request/target that cannot be sent (missing From, bad URI, transport not enabled). */
  SIP_ERR_BAD_ARGUMENT: SipStatus.ServerInternalError,
} as const);

export type SipStackErrorCode = keyof typeof SIP_STACK_ERROR_STATUS;

export class SipStackError extends Error {
  override readonly name: string = 'SipStackError';
  readonly code: SipStackErrorCode;

  constructor(code: SipStackErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  get sipStatus(): number {
    return SIP_STACK_ERROR_STATUS[this.code];
  }
}

export class SipTimeoutError extends SipStackError {
  override readonly name = 'SipTimeoutError';
  constructor(
    readonly method: string,
    readonly target: string,
  ) {
    super('SIP_ERR_TIMEOUT', 'no final response before transaction timeout');
  }
}

export class SipTransportError extends SipStackError {
  override readonly name = 'SipTransportError';
  constructor(
    readonly target: string,
    cause: unknown,
  ) {
    super('SIP_ERR_TRANSPORT', 'message could not be sent', { cause });
  }
}

/** A dialog-creating request (INVITE/SUBSCRIBE) answered with a non-2xx final response. */
export class SipRejectedError extends SipStackError {
  override readonly name = 'SipRejectedError';
  constructor(readonly response: SipResponse) {
    super('SIP_ERR_REJECTED', 'request rejected by peer');
  }

  override get sipStatus(): number {
    return this.response.status;
  }
}

export function stackClosedError(): SipStackError {
  return new SipStackError('SIP_ERR_STACK_CLOSED', 'SIP stack closed');
}
