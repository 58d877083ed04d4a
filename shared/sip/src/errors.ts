import type { SipRequest, SipResponse } from './message/types.ts';
import { SipStatus } from './status.ts';

/**
 * The one error catalog of `@vms/sip` (STYLE 2): every stable string code the package throws, from
 * the message layer (parser, digest) and from the stack (transport, transactions, dialogs, UA), and
 * the one table mapping each code to the SIP status it stands for — what a UAS answers with for a
 * bad incoming request, or the local status of a failed outgoing one (RFC 3261 §8.1.3.1: a timeout
 * is a local 408, a transport failure a local 503). Callers branch on `code`, never on `message`.
 */
export const SIP_ERROR_STATUS = Object.freeze({
  // ---- message layer: malformed input (parse.ts, framer.ts) ----
  /** Start line is not `Method SP Request-URI SP SIP-Version` nor `SIP-Version SP Status SP Reason`. */
  SIP_ERR_START_LINE: SipStatus.BadRequest,
  /** SIP-Version other than 2.0: RFC 3261 §8.2.2 answer 505. */
  SIP_ERR_VERSION: SipStatus.VersionNotSupported,
  /** Request-URI (or a URI inside a header) is malformed. */
  SIP_ERR_URI: SipStatus.BadRequest,
  /** A header line has no colon, a bad name, or a continuation line comes first. */
  SIP_ERR_HEADER: SipStatus.BadRequest,
  /** A structured header value (Via, CSeq, From, ...) cannot be parsed by its accessor. */
  SIP_ERR_HEADER_VALUE: SipStatus.BadRequest,
  /** One of Via, From, To, Call-ID, CSeq is absent (RFC 3261 §8.1.1). */
  SIP_ERR_MISSING_HEADER: SipStatus.BadRequest,
  /** Content-Length negative, non-numeric, huge, duplicated with different values, or missing on a stream. */
  SIP_ERR_CONTENT_LENGTH: SipStatus.BadRequest,
  /** Content-Length larger than the bytes in the datagram (RFC 3261 §18.3: 400 for requests). */
  SIP_ERR_BODY_TRUNCATED: SipStatus.BadRequest,
  /** Stream framing: a message exceeds the configured maximum size. */
  SIP_ERR_MESSAGE_TOO_LARGE: SipStatus.MessageTooLarge,
  // ---- digest (auth/) ----
  /** Authorization / WWW-Authenticate value is not a parsable Digest header. */
  SIP_ERR_AUTH_HEADER: SipStatus.BadRequest,
  /** Digest challenge asks for an algorithm or qop we do not implement (only MD5, MD5-sess, qop=auth). */
  SIP_ERR_AUTH_UNSUPPORTED: SipStatus.NotImplemented,
  // ---- stack: transport, transactions, dialogs, UA ----
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

export type SipErrorCode = keyof typeof SIP_ERROR_STATUS;

/** The codes the stack (transport, transactions, dialogs, UA) throws, as SipStackError. */
export type SipStackErrorCode = Extract<
  SipErrorCode,
  | 'SIP_ERR_TIMEOUT'
  | 'SIP_ERR_TRANSPORT'
  | 'SIP_ERR_STACK_CLOSED'
  | 'SIP_ERR_REJECTED'
  | 'SIP_ERR_CANCELLED'
  | 'SIP_ERR_DIALOG_TERMINATED'
  | 'SIP_ERR_INVALID_STATE'
  | 'SIP_ERR_BAD_ARGUMENT'
>;

export function sipStatusForError(code: SipErrorCode): number {
  return SIP_ERROR_STATUS[code];
}

/** Base of every error the package throws: `code` from the catalog, `sipStatus` from its table. */
export class SipError extends Error {
  override readonly name: string = 'SipError';
  readonly code: SipErrorCode;

  constructor(code: SipErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  /** Status a UAS should answer with when this error concerns an incoming request (local status otherwise). */
  get sipStatus(): number {
    return SIP_ERROR_STATUS[this.code];
  }
}

export interface SipParseErrorDetails {
  /** The partially parsed request, when the start line identified a request. */
  request?: SipRequest | undefined;
  /** Header the problem was found in, canonical spelling. */
  header?: string | undefined;
}

/**
 * Everything the message layer throws on malformed input. `answerable` is true when the input is a
 * request whose Via, From, To, Call-ID and CSeq could all be read, so `createResponse(err.request,
 * err.sipStatus)` can be sent back (RFC 3261 §18.3, §8.2.6); otherwise the input is silently dropped.
 */
export class SipParseError extends SipError {
  override readonly name = 'SipParseError';
  readonly answerable: boolean;
  readonly request: SipRequest | undefined;
  readonly header: string | undefined;

  constructor(code: SipErrorCode, message: string, details: SipParseErrorDetails = {}, answerable = false) {
    // Malformed network input is an expected event, not a bug: its stack (always the parser) is
    // useless, and capturing it would cost more than parsing the datagram — a cheap lever for a flood
    // of garbage. Restored synchronously, so no other error is affected.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(code, message);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.request = details.request;
    this.header = details.header;
    this.answerable = answerable && details.request !== undefined;
  }
}

/** Errors of the transport/transaction/dialog/UA layers: a SipError restricted to the stack's codes. */
export class SipStackError extends SipError {
  override readonly name: string = 'SipStackError';
  declare readonly code: SipStackErrorCode;

  constructor(code: SipStackErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
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

  /** The peer's status, not the table's placeholder. */
  override get sipStatus(): number {
    return this.response.status;
  }
}

export function stackClosedError(): SipStackError {
  return new SipStackError('SIP_ERR_STACK_CLOSED', 'SIP stack closed');
}
