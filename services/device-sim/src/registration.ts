// REGISTER with digest (GB/T 28181-2016 §9.1.2): first attempt at start, refresh before the binding
// expires, retry after failures, REGISTER with Expires 0 on stop. One Call-ID and From tag for the
// device's life, CSeq increasing across refreshes (RFC 3261 §10.2.4).
import { EventEmitter } from 'node:events';
import { generateCallId, generateTag, getContacts, getCSeq, SipStatus, type SipLogger, type SipResponse, type SipStack, type TimerHandle } from '@vms/sip';
import { settleWithin } from './bounded.ts';
import { RegisterRejectedError } from './errors.ts';
import type { ResolvedDeviceOptions } from './options.ts';
import type { PlatformLink } from './platform-link.ts';
import { UNREGISTER_EXPIRES } from './protocol.ts';

/** Refresh this long before the binding expires (RFC 3261 §10.2.4 leaves the margin to the UA)... */
export const REFRESH_MARGIN_MS = 30_000;
/** On stop, how long to wait for a REGISTER in flight, then for the Expires 0 one. */
export const UNREGISTER_TIMEOUT_MS = 2000;
/** Redirects followed in one REGISTER attempt (a loop between misconfigured servers ends here). */
export const MAX_REDIRECTS = 3;

/** When to refresh a binding granted for `grantedS`: 30 s early, or at half time for short bindings. */
export function refreshDelayMs(grantedS: number): number {
  const ms = grantedS * 1000;
  return Math.max(ms - REFRESH_MARGIN_MS, ms / 2);
}

/** The expiry the registrar granted: our Contact's `expires`, else Expires, else what we asked for. */
export function grantedExpiresS(res: SipResponse, requested: number): number {
  let fromContact: number | undefined;
  try {
    const raw = getContacts(res)[0]?.params.get('expires');
    fromContact = raw === undefined || raw === null ? undefined : Number(raw);
  } catch {
    fromContact = undefined; // a malformed Contact in a 200 is the registrar's problem, not ours
  }
  const header = res.headers.get('Expires');
  const candidates = [fromContact, header === undefined ? undefined : Number(header), requested];
  return candidates.find((v): v is number => v !== undefined && Number.isFinite(v) && v > 0) ?? requested;
}

export type RegistrationState = 'unregistered' | 'registered' | 'closed';

export interface RegistrationEvents {
  registered: [expiresS: number];
  /** A REGISTER failed (RegisterRejectedError, or a SipStackError: timeout, transport); retried later. */
  failed: [err: Error];
  unregistered: [];
}

export interface RegistrationDeps {
  stack: SipStack;
  link: PlatformLink;
  o: ResolvedDeviceOptions;
  log: SipLogger;
}

export class Registration extends EventEmitter<RegistrationEvents> {
  readonly #callId = generateCallId();
  readonly #fromTag = generateTag();
  #cseq = 1;
  #state: RegistrationState = 'unregistered';
  /** The platform holds a binding for us (a 200 came back and no Expires 0 since). */
  #bound = false;
  #timer: TimerHandle | undefined;
  #inflight: Promise<void> | undefined;
  #registrations = 0;

  constructor(private readonly deps: RegistrationDeps) {
    super();
  }

  get state(): RegistrationState {
    return this.#state;
  }
  get registered(): boolean {
    return this.#state === 'registered';
  }
  /** Successful REGISTERs so far (first registration + refreshes + re-registrations). */
  get count(): number {
    return this.#registrations;
  }

  /** Registers now; resolves after this first attempt, whatever its outcome (failures are retried). */
  start(): Promise<void> {
    return this.#run();
  }

  /** Registers again at once, e.g. after unanswered keepalives (§9.6.1). */
  renew(): void {
    if (this.#state === 'closed') return;
    void this.#run();
  }

  /**
   * Stops refreshing and removes the binding (Expires 0). Waits at most UNREGISTER_TIMEOUT_MS for a
   * REGISTER in flight and as long again for the unregistration; closing the stack ends what is left.
   */
  /** Power loss: stops refreshing, sends nothing (the binding stays at the platform until it expires). */
  halt(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#cancel();
  }

  async stop(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#cancel();
    const { clock } = this.deps.o;
    if (this.#inflight !== undefined) await settleWithin(clock, this.#inflight, UNREGISTER_TIMEOUT_MS);
    if (!this.#bound) return;
    const unregister = this.#send(UNREGISTER_EXPIRES).then(
      () => {
        this.#bound = false;
        this.emit('unregistered');
      },
      (err: unknown) => this.deps.log.warn({ err }, 'device unregister failed'),
    );
    await settleWithin(clock, unregister, UNREGISTER_TIMEOUT_MS);
  }

  #run(): Promise<void> {
    this.#inflight ??= this.#attempt().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async #attempt(): Promise<void> {
    this.#cancel();
    const { o, log } = this.deps;
    try {
      const granted = await this.#send(o.registerExpiresS);
      this.#bound = true;
      if (this.#state === 'closed') return;
      this.#state = 'registered';
      this.#registrations++;
      this.#schedule(refreshDelayMs(granted));
      log.debug({ expiresS: granted }, 'device registered');
      this.emit('registered', granted);
    } catch (err) {
      if (this.#state === 'closed') return;
      this.#state = 'unregistered';
      log.warn({ err, retryMs: o.registerRetryMs }, 'device register failed');
      this.#schedule(o.registerRetryMs);
      this.emit('failed', err instanceof Error ? err : new Error(String(err)));
    }
  }

  /**
   * One REGISTER, following redirects when configured (GB/T 28181-2022 §9.1.2.3): a 302 moves the link to
   * the Contact it names and registers there; a 403 at a shard we were sent to sends us back to the
   * configured (redirect) server. At most MAX_REDIRECTS hops per attempt.
   */
  async #send(expires: number): Promise<number> {
    const { link, o } = this.deps;
    for (let hop = 0; ; hop++) {
      const res = await this.#sendOnce(expires);
      if (res.status >= 200 && res.status < 300) return grantedExpiresS(res, expires);
      if (o.followRedirect && hop < MAX_REDIRECTS) {
        if (res.status === SipStatus.MovedTemporarily) {
          const uri = getContacts(res)[0]?.uri;
          if (uri !== undefined && uri.host.length > 0) {
            link.redirect(uri.host.replace(/^\[|\]$/g, ''), uri.port ?? 5060);
            continue;
          }
        } else if (res.status === SipStatus.Forbidden && link.redirected) {
          link.home();
          continue;
        }
      }
      throw new RegisterRejectedError(res.status);
    }
  }

  async #sendOnce(expires: number): Promise<SipResponse> {
    const { stack, link, o } = this.deps;
    const res = await stack.request(
      {
        method: 'REGISTER',
        uri: link.serverUri,
        headers: {
          From: `${link.address(o.deviceId)};tag=${this.#fromTag}`,
          To: link.address(o.deviceId),
          'Call-ID': this.#callId,
          CSeq: `${this.#cseq} REGISTER`,
          Expires: expires,
          // GB/T 28181-2022 §9.1.2.1: the revision the device speaks (2.0 = 2016, 3.0 = 2022)
          'X-GB-ver': o.gbVersion === '2022' ? '3.0' : '2.0',
        },
        target: link.target,
      },
      { auth: { username: o.deviceId, password: o.password } },
    );
    // The stack answered a 401 with CSeq + 1 (RFC 3261 §22.2): continue after what was really used.
    this.#cseq = getCSeq(res).seq + 1;
    return res;
  }

  #schedule(ms: number): void {
    this.#cancel();
    this.#timer = this.deps.o.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.#run();
    }, ms);
  }

  #cancel(): void {
    if (this.#timer !== undefined) this.deps.o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
