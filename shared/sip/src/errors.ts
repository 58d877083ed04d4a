import type { SipRequest } from './message/types.ts';
import { SipStatus } from './status.ts';

/**
 * The one error catalog of `@vms/sip` (STYLE 2): stable string codes, and the one table mapping each
 * code to the SIP status a UAS answers with. Callers branch on `code`, never on `message`.
 */
export const SIP_ERROR_STATUS = Object.freeze({
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
  /** Authorization / WWW-Authenticate value is not a parsable Digest header. */
  SIP_ERR_AUTH_HEADER: SipStatus.BadRequest,
  /** Digest challenge asks for an algorithm or qop we do not implement (only MD5, MD5-sess, qop=auth). */
  SIP_ERR_AUTH_UNSUPPORTED: SipStatus.NotImplemented,
} as const);

export type SipErrorCode = keyof typeof SIP_ERROR_STATUS;

export class SipError extends Error {
  override readonly name: string = 'SipError';
  readonly code: SipErrorCode;

  constructor(code: SipErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  /** Status a UAS should answer with when this error concerns an incoming request. */
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

export function sipStatusForError(code: SipErrorCode): number {
  return SIP_ERROR_STATUS[code];
}
