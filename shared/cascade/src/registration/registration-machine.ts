/**
 * The registration of this platform to one upstream platform, as a pure state machine (SPEC CASC-2,
 * GB/T 28181-2016 §9.1 registration, §9.6 keepalive): inputs (start, stop, REGISTER / keepalive
 * outcomes, timers) → next state + effects (send, arm or clear a timer, emit an event). The driver
 * (upstream-registration.ts) performs the effects; here nothing is sent and no clock is read.
 *
 * Life of a registration:
 *  - start → REGISTER at once (CASC-2: on becoming leader, register immediately).
 *  - 2xx → registered: refresh timer before the granted expiry, expiry timer at it, keepalive timer
 *    every interval. A 423 with a larger Min-Expires is retried at once with it (RFC 3261 §10.2.8).
 *  - REGISTER fails (non-2xx, timeout, transport) → retry after an exponential back-off, capped.
 *    A failed *refresh* keeps the platform online while the binding it has is still valid.
 *  - keepalive fails (non-2xx, timeout) `maxKeepaliveFailures` times in a row, or the binding lapses
 *    → offline: keepalives stop, REGISTER at once, then back-off until one succeeds.
 *  - stop → every timer cleared and no more traffic. No unregister (Expires: 0) is sent: when the
 *    leadership moved, it would delete the binding the new leader has just made (reference §7).
 */
export type RegistrationPhase = 'idle' | 'registering' | 'registered' | 'retrying' | 'stopped';
export type RegistrationTimer = 'refresh' | 'keepalive' | 'retry' | 'expiry';
const TIMERS: readonly RegistrationTimer[] = ['refresh', 'keepalive', 'retry', 'expiry'];

export interface RegistrationPolicy {
  readonly registerExpiresS: number;
  readonly keepaliveIntervalS: number;
  readonly maxKeepaliveFailures: number;
  /** First REGISTER retry delay; doubles per consecutive failure. */
  readonly retryBaseMs: number;
  /** Ceiling of the retry delay. */
  readonly retryMaxMs: number;
}

export const DEFAULT_RETRY_BASE_MS = 2000;
export const DEFAULT_RETRY_MAX_MS = 60_000;
/** A refresh goes out at least this long before the binding expires (when the expiry allows). */
export const REFRESH_MARGIN_S = 30;

export interface RegistrationState {
  readonly phase: RegistrationPhase;
  /** Registered and not declared offline: the upstream sees us. */
  readonly online: boolean;
  readonly registerInFlight: boolean;
  readonly keepaliveInFlight: boolean;
  /** Consecutive failed keepalives. */
  readonly keepaliveFailures: number;
  /** Consecutive failed REGISTERs since the last success (drives the back-off). */
  readonly registerFailures: number;
  /** When the current binding expires (driver clock, ms); null when not registered. */
  readonly expiresAt: number | null;
  /** Expires asked for; raised by a 423 Min-Expires. */
  readonly requestExpiresS: number;
  /** Status of the last final response to REGISTER; null before one, or after a timeout. */
  readonly lastRegisterStatus: number | null;
}

export type RegistrationInput =
  | { readonly type: 'start' }
  | { readonly type: 'stop' }
  | { readonly type: 'register-ok'; readonly expiresS: number }
  | { readonly type: 'register-failed'; readonly status: number | null; readonly minExpiresS?: number | null; readonly error?: unknown }
  | { readonly type: 'keepalive-ok' }
  | { readonly type: 'keepalive-failed'; readonly status: number | null; readonly error?: unknown }
  | { readonly type: 'timer'; readonly timer: RegistrationTimer };

export type RegistrationEvent =
  /** `refresh`: the platform was already online (a refresh, not a (re)connection). */
  | { readonly type: 'registered'; readonly expiresS: number; readonly refresh: boolean }
  | { readonly type: 'offline'; readonly reason: 'keepalive' | 'expired' }
  /** `retryInMs`: when the next REGISTER goes out (0: at once, after a 423). */
  | { readonly type: 'register-failed'; readonly status: number | null; readonly attempt: number; readonly retryInMs: number; readonly error?: unknown }
  | { readonly type: 'keepalive-failed'; readonly status: number | null; readonly consecutive: number; readonly error?: unknown };

export type RegistrationEffect =
  | { readonly type: 'send-register'; readonly expiresS: number }
  | { readonly type: 'send-keepalive' }
  | { readonly type: 'set-timer'; readonly timer: RegistrationTimer; readonly delayMs: number }
  | { readonly type: 'clear-timer'; readonly timer: RegistrationTimer }
  | { readonly type: 'emit'; readonly event: RegistrationEvent };

export interface RegistrationStep {
  readonly state: RegistrationState;
  readonly effects: readonly RegistrationEffect[];
}

export function initialRegistration(policy: RegistrationPolicy): RegistrationState {
  return {
    phase: 'idle',
    online: false,
    registerInFlight: false,
    keepaliveInFlight: false,
    keepaliveFailures: 0,
    registerFailures: 0,
    expiresAt: null,
    requestExpiresS: policy.registerExpiresS,
    lastRegisterStatus: null,
  };
}

/** Refresh at 80 % of the granted expiry, or REFRESH_MARGIN_S before it if that is earlier, never before half of it. */
export function refreshDelayMs(expiresS: number): number {
  return Math.round(1000 * Math.max(expiresS / 2, Math.min(expiresS * 0.8, expiresS - REFRESH_MARGIN_S)));
}

/** Delay before REGISTER attempt number `failures + 1`: base, 2×base, 4×base … capped. */
export function retryDelayMs(failures: number, policy: Pick<RegistrationPolicy, 'retryBaseMs' | 'retryMaxMs'>): number {
  return Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}

const unchanged = (state: RegistrationState): RegistrationStep => ({ state, effects: [] });
const active = (s: RegistrationState): boolean => s.phase !== 'idle' && s.phase !== 'stopped';

export function stepRegistration(s: RegistrationState, input: RegistrationInput, policy: RegistrationPolicy, now: number): RegistrationStep {
  switch (input.type) {
    case 'start': {
      if (active(s)) return unchanged(s);
      const fresh = initialRegistration(policy);
      return { state: { ...fresh, phase: 'registering', registerInFlight: true }, effects: [{ type: 'send-register', expiresS: fresh.requestExpiresS }] };
    }

    case 'stop': {
      if (s.phase === 'stopped') return unchanged(s);
      return {
        state: { ...s, phase: 'stopped', online: false, registerInFlight: false, keepaliveInFlight: false, expiresAt: null },
        effects: TIMERS.map((timer) => ({ type: 'clear-timer', timer })),
      };
    }

    case 'register-ok': {
      if (!s.registerInFlight || !active(s)) return unchanged(s);
      const expiresS = input.expiresS > 0 ? input.expiresS : s.requestExpiresS;
      const refresh = s.online;
      const effects: RegistrationEffect[] = [
        { type: 'clear-timer', timer: 'retry' },
        { type: 'set-timer', timer: 'refresh', delayMs: refreshDelayMs(expiresS) },
        { type: 'set-timer', timer: 'expiry', delayMs: expiresS * 1000 },
      ];
      if (!refresh) effects.push({ type: 'set-timer', timer: 'keepalive', delayMs: policy.keepaliveIntervalS * 1000 });
      effects.push({ type: 'emit', event: { type: 'registered', expiresS, refresh } });
      return {
        state: {
          ...s,
          phase: 'registered',
          online: true,
          registerInFlight: false,
          registerFailures: 0,
          keepaliveFailures: refresh ? s.keepaliveFailures : 0,
          expiresAt: now + expiresS * 1000,
          lastRegisterStatus: 200,
        },
        effects,
      };
    }

    case 'register-failed': {
      if (!s.registerInFlight || !active(s)) return unchanged(s);
      const min = input.minExpiresS ?? null;
      if (input.status === 423 && min !== null && min > s.requestExpiresS) {
        // RFC 3261 §10.2.8: ask again at once with the registrar's minimum (strictly rising: no loop)
        return {
          state: { ...s, requestExpiresS: min, lastRegisterStatus: 423 },
          effects: [
            { type: 'emit', event: { type: 'register-failed', status: 423, attempt: s.registerFailures + 1, retryInMs: 0 } },
            { type: 'send-register', expiresS: min },
          ],
        };
      }
      const failures = s.registerFailures + 1;
      const delayMs = retryDelayMs(failures, policy);
      const event: RegistrationEvent = { type: 'register-failed', status: input.status, attempt: failures, retryInMs: delayMs, ...errorOf(input) };
      return {
        state: {
          ...s,
          // a failed refresh: still online while the current binding lasts (the expiry timer runs)
          phase: s.online ? 'registered' : 'retrying',
          registerInFlight: false,
          registerFailures: failures,
          lastRegisterStatus: input.status,
        },
        effects: [
          { type: 'set-timer', timer: 'retry', delayMs },
          { type: 'emit', event },
        ],
      };
    }

    case 'keepalive-ok': {
      if (!s.keepaliveInFlight) return unchanged(s);
      return unchanged({ ...s, keepaliveInFlight: false, keepaliveFailures: s.online ? 0 : s.keepaliveFailures });
    }

    case 'keepalive-failed': {
      if (!s.keepaliveInFlight) return unchanged(s);
      const settled = { ...s, keepaliveInFlight: false };
      if (!s.online) return unchanged(settled); // answer to a keepalive sent before going offline
      const consecutive = s.keepaliveFailures + 1;
      const failed: RegistrationEffect = { type: 'emit', event: { type: 'keepalive-failed', status: input.status, consecutive, ...errorOf(input) } };
      if (consecutive < policy.maxKeepaliveFailures) return { state: { ...settled, keepaliveFailures: consecutive }, effects: [failed] };
      const off = goOffline({ ...settled, keepaliveFailures: consecutive }, 'keepalive');
      return { state: off.state, effects: [failed, ...off.effects] };
    }

    case 'timer':
      return onTimer(s, input.timer, policy);
  }
}

function onTimer(s: RegistrationState, timer: RegistrationTimer, policy: RegistrationPolicy): RegistrationStep {
  switch (timer) {
    case 'refresh':
      if (s.phase !== 'registered' || s.registerInFlight) return unchanged(s);
      return { state: { ...s, registerInFlight: true }, effects: [{ type: 'send-register', expiresS: s.requestExpiresS }] };
    case 'retry':
      if ((s.phase !== 'retrying' && s.phase !== 'registered') || s.registerInFlight) return unchanged(s);
      return {
        state: { ...s, phase: s.online ? 'registered' : 'registering', registerInFlight: true },
        effects: [{ type: 'send-register', expiresS: s.requestExpiresS }],
      };
    case 'keepalive': {
      if (s.phase !== 'registered' || !s.online) return unchanged(s);
      const again: RegistrationEffect = { type: 'set-timer', timer: 'keepalive', delayMs: policy.keepaliveIntervalS * 1000 };
      // one keepalive at a time: with an interval shorter than the transaction timeout, skip a beat
      if (s.keepaliveInFlight) return { state: s, effects: [again] };
      return { state: { ...s, keepaliveInFlight: true }, effects: [{ type: 'send-keepalive' }, again] };
    }
    case 'expiry':
      if (!s.online) return unchanged(s);
      return goOffline(s, 'expired');
  }
}

/** The upstream no longer sees us: stop keepalives, re-register at once (unless one is on its way). */
function goOffline(s: RegistrationState, reason: 'keepalive' | 'expired'): RegistrationStep {
  const effects: RegistrationEffect[] = [
    { type: 'clear-timer', timer: 'keepalive' },
    { type: 'clear-timer', timer: 'refresh' },
    { type: 'clear-timer', timer: 'expiry' },
    { type: 'emit', event: { type: 'offline', reason } },
  ];
  if (!s.registerInFlight) {
    effects.push({ type: 'clear-timer', timer: 'retry' }, { type: 'send-register', expiresS: s.requestExpiresS });
  }
  return { state: { ...s, phase: 'registering', online: false, registerInFlight: true, expiresAt: null }, effects };
}

function errorOf(input: { readonly error?: unknown }): { error?: unknown } {
  return input.error === undefined ? {} : { error: input.error };
}
