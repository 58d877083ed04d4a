/**
 * The one error catalog of @vms/cascade (STYLE §2): stable string codes, whether each is transient
 * (trying again later can succeed), and — in the same table — the SIP status to answer an upstream
 * platform's request with when handling it failed for that reason. Callers branch on `code`, never
 * on `message`; mapping to the operator API envelope belongs to the signaling service.
 */
import { SipStatus } from '@vms/sip';

export const CASCADE_ERROR_INFO = Object.freeze({
  /** An upstream platform record that cannot work (bad id, port, expiry...); every problem listed at once. */
  CASCADE_ERR_INVALID_PLATFORM: { transient: false, sipStatus: SipStatus.ServerInternalError },
  /** A channel share that cannot be stored (bad ids). */
  CASCADE_ERR_INVALID_CHANNEL: { transient: false, sipStatus: SipStatus.ServerInternalError },
  /** No upstream platform with that server id. */
  CASCADE_ERR_PLATFORM_NOT_FOUND: { transient: false, sipStatus: SipStatus.NotFound },
  /** The platform store (MySQL) is unreachable or shed the statement. */
  CASCADE_ERR_STORE_UNAVAILABLE: { transient: true, sipStatus: SipStatus.ServiceUnavailable },
  /** The platform store rejected the statement (missing table, bad grant). */
  CASCADE_ERR_STORE_QUERY: { transient: false, sipStatus: SipStatus.ServerInternalError },
  /** A catalog page (or another MESSAGE) to the upstream failed: timeout, transport error, non-2xx. */
  CASCADE_ERR_SEND: { transient: true, sipStatus: SipStatus.RequestTimeout },
  /** A caller-supplied value out of range (page interval, subscription expiry...). */
  CASCADE_ERR_ARGUMENT: { transient: false, sipStatus: SipStatus.BadRequest },
  /** The repository or registration was closed. */
  CASCADE_ERR_CLOSED: { transient: false, sipStatus: SipStatus.ServiceUnavailable },
} as const);

export type CascadeErrorCode = keyof typeof CASCADE_ERROR_INFO;

export class CascadeError extends Error {
  override readonly name: string = 'CascadeError';
  readonly code: CascadeErrorCode;

  constructor(code: CascadeErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  get transient(): boolean {
    return CASCADE_ERROR_INFO[this.code].transient;
  }

  /** Status to answer the upstream's request with when this error stopped its handling. */
  get sipStatus(): number {
    return CASCADE_ERROR_INFO[this.code].sipStatus;
  }
}

/** A catalog page could not be delivered; `sentPages` went out before it. */
export class CascadeSendError extends CascadeError {
  override readonly name = 'CascadeSendError';
  constructor(
    readonly sentPages: number,
    options?: ErrorOptions,
  ) {
    super('CASCADE_ERR_SEND', `catalog page ${sentPages + 1} not delivered`, options);
  }
}

export function isCascadeError(err: unknown): err is CascadeError {
  return err instanceof CascadeError;
}
