/**
 * The package's one error catalog (STYLE §2). Every failure this package can raise is one of these
 * classes, each with a stable string `code`; callers branch on `code` (or `instanceof`), never on
 * `message`. Mapping codes to SIP status / API envelope is the job of the service that handles the
 * error, which owns those tables.
 */

export const GB_ERROR_CODES = Object.freeze({
  /** Body is not well-formed XML (or the XML parser refused it). */
  XML: 'GB_ERR_XML',
  /** Body carries a DOCTYPE / ENTITY declaration: refused, never expanded. */
  DOCTYPE: 'GB_ERR_DOCTYPE',
  /** Well-formed XML whose root is not Query / Response / Notify / Control. */
  NOT_MANSCDP: 'GB_ERR_NOT_MANSCDP',
  /** Bytes that decode in no supported charset, or text not representable in the target charset. */
  CHARSET: 'GB_ERR_CHARSET',
  /** Body larger than the configured limit. */
  TOO_LARGE: 'GB_ERR_TOO_LARGE',
  /** A field the standard makes mandatory is absent or empty. */
  MISSING_FIELD: 'GB_ERR_MISSING_FIELD',
  /** A field is present but has the wrong shape (nested where text is expected, not an integer...). */
  INVALID_FIELD: 'GB_ERR_INVALID_FIELD',
  /** A typed decoder was given a message of another root / CmdType. */
  WRONG_COMMAND: 'GB_ERR_WRONG_COMMAND',
  /** Not a GB/T 28181 Annex D code. */
  ID: 'GB_ERR_ID',
  /** PTZCmd string that is not 8 well-formed bytes with valid check bytes (Annex A.3). */
  PTZ: 'GB_ERR_PTZ',
  /** Malformed SDP. */
  SDP: 'GB_ERR_SDP',
  /** Malformed MANSRTSP body. */
  RTSP: 'GB_ERR_RTSP',
  /** Unparseable or out-of-range date/time. */
  TIME: 'GB_ERR_TIME',
  /** A builder was called with an argument outside the protocol's range. */
  ARGUMENT: 'GB_ERR_ARGUMENT',
});

export type GbErrorCode = (typeof GB_ERROR_CODES)[keyof typeof GB_ERROR_CODES];

export abstract class GbError extends Error {
  abstract readonly code: GbErrorCode;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class GbXmlError extends GbError {
  readonly code = GB_ERROR_CODES.XML;
}

export class GbDoctypeError extends GbError {
  readonly code = GB_ERROR_CODES.DOCTYPE;
}

export class GbNotManscdpError extends GbError {
  readonly code = GB_ERROR_CODES.NOT_MANSCDP;

  constructor(readonly root: string) {
    super('root element is not a MANSCDP root');
  }
}

export class GbCharsetError extends GbError {
  readonly code = GB_ERROR_CODES.CHARSET;
}

export class GbTooLargeError extends GbError {
  readonly code = GB_ERROR_CODES.TOO_LARGE;

  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super('body exceeds the size limit');
  }
}

export class GbMissingFieldError extends GbError {
  readonly code = GB_ERROR_CODES.MISSING_FIELD;

  constructor(readonly field: string) {
    super('mandatory field missing');
  }
}

export class GbInvalidFieldError extends GbError {
  readonly code = GB_ERROR_CODES.INVALID_FIELD;

  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(reason);
  }
}

export class GbWrongCommandError extends GbError {
  readonly code = GB_ERROR_CODES.WRONG_COMMAND;

  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super('message is not the expected command');
  }
}

export class GbIdError extends GbError {
  readonly code = GB_ERROR_CODES.ID;
}

export class GbPtzError extends GbError {
  readonly code = GB_ERROR_CODES.PTZ;
}

export class GbSdpError extends GbError {
  readonly code = GB_ERROR_CODES.SDP;
}

export class GbRtspError extends GbError {
  readonly code = GB_ERROR_CODES.RTSP;
}

export class GbTimeError extends GbError {
  readonly code = GB_ERROR_CODES.TIME;
}

export class GbArgumentError extends GbError {
  readonly code = GB_ERROR_CODES.ARGUMENT;
}

export function isGbError(err: unknown): err is GbError {
  return err instanceof GbError;
}
