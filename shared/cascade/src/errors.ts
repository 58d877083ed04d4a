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
  // --- live view asked for by an upstream (INVITE, SPEC CASC-6) ---
  /** The INVITE names a channel this platform does not have or does not share with that upstream. */
  CASCADE_ERR_CHANNEL_NOT_SHARED: { transient: false, sipStatus: SipStatus.NotFound },
  /** The INVITE's SDP cannot be read: no body, no m= / c= address or port, no valid y= SSRC. */
  CASCADE_ERR_BAD_OFFER: { transient: false, sipStatus: SipStatus.BadRequest },
  /** A readable offer this platform does not serve (s= other than Play, TCP with a=setup:active…). */
  CASCADE_ERR_UNSUPPORTED_OFFER: { transient: false, sipStatus: SipStatus.NotAcceptableHere },
  /** This instance is not the cascade leader (CASC-6: the leader serves the upstream's INVITEs). */
  CASCADE_ERR_NOT_LEADER: { transient: true, sipStatus: SipStatus.ServiceUnavailable },
  /** The channel's device is offline, or its owner cannot be reached or refused the play. */
  CASCADE_ERR_SOURCE_UNAVAILABLE: { transient: true, sipStatus: SipStatus.TemporarilyUnavailable },
  /** The device, its owner or the media node did not deliver the stream in time. */
  CASCADE_ERR_SOURCE_TIMEOUT: { transient: true, sipStatus: SipStatus.ServerTimeout },
  /** The media plane failed: no media node, a ZLM call (openRtpServer, startSendRtp…) failed. */
  CASCADE_ERR_MEDIA: { transient: true, sipStatus: SipStatus.ServerInternalError },
  /** The upstream's in-dialog request names a session that has ended meanwhile (RFC 3261 §12.2.2: 481). */
  CASCADE_ERR_SESSION_GONE: { transient: false, sipStatus: SipStatus.CallTransactionDoesNotExist },
} as const);

export type CascadeErrorCode = keyof typeof CASCADE_ERROR_INFO;

export class CascadeError extends Error {
  override readonly name: string = 'CascadeError';
  readonly code: CascadeErrorCode;
  /** For validation errors: the record fields at fault (`host`, `port`, `catalog.groupId`…), in order. */
  readonly fields: readonly string[];

  constructor(code: CascadeErrorCode, message: string, options?: ErrorOptions & { readonly fields?: readonly string[] }) {
    super(message, options);
    this.code = code;
    this.fields = options?.fields ?? [];
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
