/**
 * Drives the registration state machine (registration-machine.ts) for one enabled upstream platform:
 * sends REGISTER (digest answered by the stack's auto-retry) and Keepalive MESSAGEs, arms timers on
 * the injected clock, and reports events. The cascade leader runs one per enabled platform; it calls
 * `start()` on becoming leader and `stop()` on losing the role (no unregister, see the machine).
 *
 * Answers to requests sent before a `stop()` are ignored (a generation counter), so a late 200 can
 * never revive a stopped registration. Known limit: a REGISTER already challenged with 401 when
 * `stop()` is called is still re-sent with credentials by the stack's digest retry (one round trip).
 */
import { createSnGenerator, type SnGenerator } from '@vms/gb28181';
import {
  generateCallId,
  generateTag,
  getContacts,
  getCSeq,
  getExpires,
  systemClock,
  type Clock,
  type OutgoingRequestSpec,
  type RequestOptions,
  type SipResponse,
  type TimerHandle,
} from '@vms/sip';
import type { UpstreamPlatform } from '../platform/platform.ts';
import {
  DEFAULT_RETRY_BASE_MS,
  DEFAULT_RETRY_MAX_MS,
  initialRegistration,
  stepRegistration,
  type RegistrationEffect,
  type RegistrationEvent,
  type RegistrationInput,
  type RegistrationPolicy,
  type RegistrationState,
  type RegistrationTimer,
} from './registration-machine.ts';
import { keepaliveRequest, registerRequest, upstreamAuth, type RegisterIds } from './upstream-requests.ts';

/** The part of SipStack this needs; a SipStack satisfies it. */
export interface UpstreamSipClient {
  request(spec: OutgoingRequestSpec, opts?: RequestOptions): Promise<SipResponse>;
}

export interface UpstreamRegistrationOptions {
  readonly platform: UpstreamPlatform;
  readonly sip: UpstreamSipClient;
  /** Timer source; a FakeClock in unit tests. Default: the system clock. */
  readonly clock?: Clock;
  /** SN of the keepalives; share the instance's generator. Default: a private one from 1. */
  readonly sn?: SnGenerator;
  /** Default 2000 ms. */
  readonly retryBaseMs?: number;
  /** Default 60 000 ms. */
  readonly retryMaxMs?: number;
  /** Called synchronously for each event (log it, update the platform's status). */
  readonly onEvent?: (event: RegistrationEvent, platform: UpstreamPlatform) => void;
}

export class UpstreamRegistration {
  readonly platform: UpstreamPlatform;
  readonly #sip: UpstreamSipClient;
  readonly #clock: Clock;
  readonly #sn: SnGenerator;
  readonly #policy: RegistrationPolicy;
  readonly #onEvent: UpstreamRegistrationOptions['onEvent'];
  readonly #timers = new Map<RegistrationTimer, TimerHandle>();
  #state: RegistrationState;
  /** Bumped by start() and stop(): answers carrying an older value are ignored. */
  #generation = 0;
  #ids: RegisterIds = { callId: '', fromTag: '' };
  #cseq = 1;

  constructor(opts: UpstreamRegistrationOptions) {
    this.platform = opts.platform;
    this.#sip = opts.sip;
    this.#clock = opts.clock ?? systemClock;
    this.#sn = opts.sn ?? createSnGenerator();
    this.#onEvent = opts.onEvent;
    this.#policy = {
      registerExpiresS: opts.platform.registerExpiresS,
      keepaliveIntervalS: opts.platform.keepaliveIntervalS,
      maxKeepaliveFailures: opts.platform.maxKeepaliveFailures,
      retryBaseMs: opts.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
      retryMaxMs: opts.retryMaxMs ?? DEFAULT_RETRY_MAX_MS,
    };
    this.#state = initialRegistration(this.#policy);
  }

  get state(): RegistrationState {
    return this.#state;
  }

  /** Registers at once; a no-op while running. After stop() it starts over (new Call-ID). */
  start(): void {
    if (this.#state.phase !== 'idle' && this.#state.phase !== 'stopped') return;
    this.#generation++;
    this.#ids = { callId: generateCallId(), fromTag: generateTag() };
    this.#cseq = 1;
    this.#dispatch({ type: 'start' });
  }

  /** Stops all upstream traffic at once, without unregistering. Idempotent. */
  stop(): void {
    this.#generation++;
    this.#dispatch({ type: 'stop' });
  }

  #dispatch(input: RegistrationInput): void {
    const step = stepRegistration(this.#state, input, this.#policy, this.#clock.now());
    this.#state = step.state;
    for (const effect of step.effects) this.#perform(effect);
  }

  #perform(effect: RegistrationEffect): void {
    switch (effect.type) {
      case 'send-register':
        return this.#sendRegister(effect.expiresS);
      case 'send-keepalive':
        return this.#sendKeepalive();
      case 'set-timer': {
        this.#clearTimer(effect.timer);
        const handle = this.#clock.setTimeout(() => {
          this.#timers.delete(effect.timer);
          this.#dispatch({ type: 'timer', timer: effect.timer });
        }, effect.delayMs);
        this.#timers.set(effect.timer, handle);
        return;
      }
      case 'clear-timer':
        return this.#clearTimer(effect.timer);
      case 'emit':
        try {
          this.#onEvent?.(effect.event, this.platform);
        } catch {
          // a failing listener must not break the state machine
        }
        return;
    }
  }

  #clearTimer(timer: RegistrationTimer): void {
    const handle = this.#timers.get(timer);
    if (handle === undefined) return;
    this.#clock.clearTimeout(handle);
    this.#timers.delete(timer);
  }

  #sendRegister(expiresS: number): void {
    const generation = this.#generation;
    const spec = registerRequest(this.platform, this.#ids, this.#cseq++, expiresS);
    this.#send(spec).then(
      (res) => {
        if (generation !== this.#generation) return;
        // RFC 3261 §10.2.4: the next REGISTER's CSeq is above this one's, digest retry included
        this.#cseq = Math.max(this.#cseq, cseqOf(res) + 1);
        if (res.status >= 200 && res.status < 300) this.#dispatch({ type: 'register-ok', expiresS: grantedExpires(res, this.platform.localId, expiresS) });
        else this.#dispatch({ type: 'register-failed', status: res.status, minExpiresS: res.status === 423 ? minExpires(res) : null });
      },
      (error: unknown) => {
        if (generation === this.#generation) this.#dispatch({ type: 'register-failed', status: null, error });
      },
    );
  }

  #sendKeepalive(): void {
    const generation = this.#generation;
    this.#send(keepaliveRequest(this.platform, this.#sn.next())).then(
      (res) => {
        if (generation !== this.#generation) return;
        if (res.status >= 200 && res.status < 300) this.#dispatch({ type: 'keepalive-ok' });
        else this.#dispatch({ type: 'keepalive-failed', status: res.status });
      },
      (error: unknown) => {
        if (generation === this.#generation) this.#dispatch({ type: 'keepalive-failed', status: null, error });
      },
    );
  }

  /** Never throws synchronously: a bad spec or closed stack becomes a rejected promise. */
  #send(spec: OutgoingRequestSpec): Promise<SipResponse> {
    const auth = upstreamAuth(this.platform);
    return Promise.resolve().then(() => this.#sip.request(spec, auth === undefined ? {} : { auth }));
  }
}

/** RFC 3261 §10.2.4: our Contact's `expires` parameter, else the Expires header, else what we asked. */
export function grantedExpires(res: SipResponse, localId: string, requested: number): number {
  try {
    for (const c of getContacts(res)) {
      const e = c.params.get('expires');
      if (c.uri.user === localId && e !== undefined && e !== null && /^\d+$/.test(e)) return Number(e);
    }
    return getExpires(res) ?? requested;
  } catch {
    return requested; // malformed Contact/Expires in a 200: keep what we asked for
  }
}

function minExpires(res: SipResponse): number | null {
  const v = res.headers.get('Min-Expires')?.trim();
  return v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : null;
}

function cseqOf(res: SipResponse): number {
  try {
    return getCSeq(res).seq;
  } catch {
    return 0;
  }
}
