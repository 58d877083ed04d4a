// Label values of the metrics, always from a fixed set (a device can send any method name or status
// code: each would otherwise become a new time series). Pure; pinned by labels.test.ts.

/** Methods GB/T 28181 devices and platforms use (RFC 3261 §27.4 and extensions); anything else is "other". */
export const SIP_METHODS: ReadonlySet<string> = new Set([
  'REGISTER', 'MESSAGE', 'INVITE', 'ACK', 'BYE', 'CANCEL', 'INFO', 'NOTIFY', 'SUBSCRIBE', 'OPTIONS', 'UPDATE', 'PRACK', 'REFER', 'PUBLISH',
]);

export const methodLabel = (method: string): string => (SIP_METHODS.has(method) ? method : 'other');

/** RFC 3261 §7.2: status codes are 100-699; anything else cannot come from our parser, but stays bounded. */
export const statusLabel = (status: number): string => (Number.isInteger(status) && status >= 100 && status <= 699 ? String(status) : 'other');

export type RegistrationResult = 'accepted' | 'challenged' | 'forbidden' | 'rejected' | 'error';

/** What a final response to a device's REGISTER says (register.handler.ts answers 200, 401, 403, 400, 5xx). */
export function registrationResult(status: number): RegistrationResult | null {
  if (status < 200) return null; // provisional: not a result
  if (status < 300) return 'accepted';
  if (status === 401 || status === 407) return 'challenged';
  if (status === 403) return 'forbidden';
  if (status < 500) return 'rejected';
  return 'error';
}
