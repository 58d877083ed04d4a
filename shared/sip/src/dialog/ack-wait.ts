import type { Clock, TimerHandle } from '../clock.ts';
import type { TimerConfig } from '../transaction/timers.ts';

/**
 * RFC 3261 §13.3.1.4: the UAS core retransmits its 2xx to an INVITE — starting at T1, doubling up to
 * T2 — until the ACK arrives; over reliable transports it only waits. With no ACK after 64*T1 the
 * dialog is confirmed-but-broken and the UAS should BYE it (`onTimeout`).
 */
export class AckWait {
  #retransmitTimer: TimerHandle | undefined;
  #deadline: TimerHandle | undefined;
  #interval: number;
  #done = false;

  constructor(
    private readonly clock: Clock,
    private readonly timers: TimerConfig,
    private readonly reliable: boolean,
    private readonly retransmit: () => void,
    private readonly onTimeout: () => void,
  ) {
    this.#interval = timers.T1;
  }

  get waiting(): boolean {
    return !this.#done;
  }

  start(): void {
    if (!this.reliable) this.#schedule();
    this.#deadline = this.clock.setTimeout(() => {
      this.#finish();
      this.onTimeout();
    }, 64 * this.timers.T1);
  }

  #schedule(): void {
    this.#retransmitTimer = this.clock.setTimeout(() => {
      if (this.#done) return;
      this.retransmit();
      this.#interval = Math.min(2 * this.#interval, this.timers.T2);
      this.#schedule();
    }, this.#interval);
  }

  /** ACK received (or the dialog ended): stop everything. */
  stop(): void {
    this.#finish();
  }

  #finish(): void {
    this.#done = true;
    if (this.#retransmitTimer !== undefined) this.clock.clearTimeout(this.#retransmitTimer);
    if (this.#deadline !== undefined) this.clock.clearTimeout(this.#deadline);
    this.#retransmitTimer = undefined;
    this.#deadline = undefined;
  }
}
