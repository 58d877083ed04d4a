// The device simulator's one error catalog (STYLE 2): stable string codes, typed classes, and the one
// table mapping each code to the SIP status the simulated device answers a platform request with.
// Callers branch on `code`, never on `message`.
import { SipStatus } from '@vms/sip';

export const DSIM_ERROR_SIP_STATUS = Object.freeze({
  /** Options or CLI arguments are invalid (never answered on the wire; 500 if it ever were). */
  DSIM_ERR_CONFIG: SipStatus.ServerInternalError,
  /** The device was closed while the operation was pending. */
  DSIM_ERR_CLOSED: SipStatus.ServiceUnavailable,
  /** The platform answered REGISTER with a final non-2xx (the status is on the error). */
  DSIM_ERR_REGISTER_REJECTED: SipStatus.ServerInternalError,
  /** A request names a device/channel id that is not ours. */
  DSIM_ERR_UNKNOWN_TARGET: SipStatus.NotFound,
  /** An INVITE offer we cannot answer (unparsable SDP, unknown session name, no PS payload). */
  DSIM_ERR_BAD_OFFER: SipStatus.NotAcceptableHere,
  /** A MANSCDP / MANSRTSP body we cannot parse. */
  DSIM_ERR_BAD_BODY: SipStatus.BadRequest,
  /** A SUBSCRIBE for an event package / CmdType we do not serve (RFC 6665 §4.2.1.1). */
  DSIM_ERR_BAD_EVENT: SipStatus.BadEvent,
  /** The media socket could not be opened or connected. */
  DSIM_ERR_MEDIA: SipStatus.ServerInternalError,
} as const);

export type DeviceSimErrorCode = keyof typeof DSIM_ERROR_SIP_STATUS;

export class DeviceSimError extends Error {
  override readonly name: string = 'DeviceSimError';
  constructor(
    readonly code: DeviceSimErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** Status to answer the platform's request with when this error concerns it. */
  get sipStatus(): number {
    return DSIM_ERROR_SIP_STATUS[this.code];
  }
}

/** Every bad option at once, as `key: problem` lines (STYLE 1). */
export class DeviceSimConfigError extends DeviceSimError {
  override readonly name = 'DeviceSimConfigError';
  constructor(readonly issues: readonly string[]) {
    super('DSIM_ERR_CONFIG', `invalid device simulator options:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
  }
}

export class RegisterRejectedError extends DeviceSimError {
  override readonly name = 'RegisterRejectedError';
  constructor(readonly status: number) {
    super('DSIM_ERR_REGISTER_REJECTED', 'REGISTER rejected by the platform');
  }
}

export function deviceClosedError(): DeviceSimError {
  return new DeviceSimError('DSIM_ERR_CLOSED', 'simulated device closed');
}
