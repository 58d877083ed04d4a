import type { Clock, TimerHandle } from '../clock.ts';
import type { SipMessage } from '../message/types.ts';
import type { TimerValues } from './timers.ts';

/**
 * What a transaction state machine may touch: time, its timer table, and a way to hand a message to
 * the transport. Transport failures come back asynchronously through `transportError()`, so the
 * machines stay synchronous and deterministic under a FakeClock.
 */
export interface TransactionEnv {
  clock: Clock;
  timers: TimerValues;
  /** RFC 3261 §17: reliable transports (TCP) get no retransmissions and zero-length wait timers. */
  reliable: boolean;
  send(msg: SipMessage): void;
  /**
   * Optional: a sender of `msg` that keeps only its bytes and destination (SipTransport.prepareResponse),
   * for a final response a server transaction must repeat; without it the message itself is kept.
   */
  prepare?(msg: SipMessage): () => void;
  /**
   * Optional, non-INVITE server transactions over UDP: sends their final response and keeps what
   * repeats it for Timer J outside the transaction (TransactionLayer's completed finals), so the
   * transaction ends at once; false when it could not (the transaction then keeps the final itself).
   */
  complete?(final: SipMessage): boolean;
}

export type TimerName = 'A' | 'B' | 'D' | 'E' | 'F' | 'G' | 'H' | 'I' | 'J' | 'K' | 'L' | 'M' | 'Trying';

/** Named one-shot timers; a zero-length timer runs synchronously (RFC 3261 §17: "fires immediately"). */
export abstract class TransactionBase<S extends string> {
  protected abstract state: S;
  /** Made on the first timer armed: a non-INVITE server transaction answered at once arms none. */
  #armed: Map<TimerName, TimerHandle> | undefined;

  protected constructor(protected readonly env: TransactionEnv) {}

  get currentState(): S {
    return this.state;
  }

  protected arm(name: TimerName, ms: number, fn: () => void): void {
    this.disarm(name);
    if (ms <= 0) {
      fn();
      return;
    }
    (this.#armed ??= new Map()).set(
      name,
      this.env.clock.setTimeout(() => {
        this.#armed?.delete(name);
        fn();
      }, ms),
    );
  }

  protected disarm(name: TimerName): void {
    const h = this.#armed?.get(name);
    if (h !== undefined) {
      this.env.clock.clearTimeout(h);
      this.#armed?.delete(name);
    }
  }

  protected disarmAll(): void {
    if (this.#armed === undefined) return;
    for (const h of this.#armed.values()) this.env.clock.clearTimeout(h);
    this.#armed.clear();
  }

  /** Armed timer names, for tests and debugging. */
  get armedTimers(): TimerName[] {
    return this.#armed === undefined ? [] : [...this.#armed.keys()];
  }
}
