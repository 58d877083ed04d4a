// Keepalive (GB/T 28181-2016 §9.6.1): a Notify/Keepalive MESSAGE every interval while registered;
// after `keepaliveMaxFailures` unanswered (or non-2xx) in a row the device registers again. A 401 means
// the platform does not take this flow as ours (SPEC SEC-1: after our NAT mapping changed, or its
// restart): the device registers again at once, as the platform asks. So does a 404 or 403: the platform
// (or the shard a SIP edge moved us to, issue 14) has no registration of us — what many devices do on an
// error answer to a keepalive, and what WVP's 404 to an unregistered device's MESSAGE relies on.
import { buildKeepalive, type SnGenerator } from '@vms/gb28181';
import { SipStatus, type SipLogger, type TimerHandle } from '@vms/sip';
import type { ResolvedDeviceOptions } from './options.ts';
import type { PlatformLink } from './platform-link.ts';
import type { Registration } from './registration.ts';

export interface KeepaliveDeps {
  o: ResolvedDeviceOptions;
  link: PlatformLink;
  registration: Registration;
  sn: SnGenerator;
  log: SipLogger;
  /** After each keepalive: the status it got, or undefined when it got none. */
  onResult: (status: number | undefined) => void;
}

export class Keepalive {
  #timer: TimerHandle | undefined;
  #failures = 0;
  #stopped = false;

  constructor(private readonly deps: KeepaliveDeps) {}

  start(): void {
    this.#schedule();
  }

  /** Stops the timer; a keepalive in flight ends with the stack (its outcome is then ignored). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.deps.o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.deps.o.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.#beat()
        .catch((err: unknown) => this.deps.log.error({ err }, 'device keepalive failed'))
        .finally(() => this.#schedule());
    }, this.deps.o.keepaliveIntervalS * 1000);
  }

  async #beat(): Promise<void> {
    const { o, link, registration, sn, log } = this.deps;
    if (!registration.registered) return;
    let status: number | undefined;
    try {
      const body = buildKeepalive({ sn: String(sn.next()), deviceId: o.deviceId, status: 'OK' }, { charset: o.charset });
      status = (await link.sendManscdp(body)).status;
    } catch (err) {
      if (this.#stopped) return;
      log.debug({ err }, 'device keepalive not answered');
    }
    if (this.#stopped) return;
    this.deps.onResult(status);
    if (status !== undefined && status >= 200 && status < 300) {
      this.#failures = 0;
      return;
    }
    if (status === SipStatus.Unauthorized || status === SipStatus.Forbidden || status === SipStatus.NotFound) {
      log.info({ status }, 'device keepalive refused, registering again');
      this.#failures = 0;
      registration.renew();
      return;
    }
    if (++this.#failures >= o.keepaliveMaxFailures) {
      log.warn({ failures: this.#failures }, 'device keepalives unanswered, registering again');
      this.#failures = 0;
      registration.renew();
    }
  }
}
