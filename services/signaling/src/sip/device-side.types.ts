// What the SIP request handlers and the control service share.
import type { RegisterPlacement } from './register-placement.ts';
import type { Logger } from 'pino';
import type { SipSettings } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import type { DeviceLimits } from './device-admission.ts';
import type { DeviceFlows } from './device-flows.ts';

export interface DeviceSideDeps {
  readonly sip: SipSettings;
  readonly devices: DeviceRepository;
  readonly flows: DeviceFlows;
  readonly events: DeviceEvents;
  readonly clock: Clock;
  /** The instance logger; handlers bind `{ deviceId, callId }` per request. */
  readonly log: Logger;
  /** Platform UTC offset for GB local times (REGISTER Date header, RecordInfo times). */
  readonly utcOffsetMinutes: number;
  /** Per-device bounds (SPEC SEC-3); default DEFAULT_DEVICE_LIMITS. */
  readonly limits?: DeviceLimits;
  /** Issue 14: register redirect (GB/T 28181-2022 §9.1.2.3); absent = every device served here. */
  readonly placement?: RegisterPlacement;
}

/** GB/T 28181 §A.2: the MANSCDP content type, spelled as the standard's examples spell it. */
export const MANSCDP_CONTENT_TYPE = 'Application/MANSCDP+xml';
