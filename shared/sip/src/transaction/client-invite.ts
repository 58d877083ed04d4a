import type { SipRequest, SipResponse } from '../message/types.ts';
import { buildNon2xxAck } from './ack.ts';
import { TransactionBase, type TransactionEnv } from './base.ts';

/** What the transaction user (UA core) hears from a client transaction. */
export interface ClientTransactionUser {
  /** Provisional and final responses; for INVITE also 2xx retransmissions while Accepted. */
  onResponse(res: SipResponse): void;
  /** Timer B / F fired: the TU treats it as a locally generated 408 (RFC 3261 §8.1.3.1). */
  onTimeout(): void;
  /** The transport could not deliver; treated as 503 (RFC 3261 §8.1.3.1). */
  onTransportError(err: Error): void;
  /** The transaction left the matching tables; fired exactly once. */
  onTerminated(): void;
}

export type InviteClientState = 'calling' | 'proceeding' | 'accepted' | 'completed' | 'terminated';

/**
 * RFC 3261 §17.1.1 INVITE client transaction, with the RFC 6026 §7.2 "Accepted" state: after a 2xx
 * the transaction stays for Timer M and passes 2xx retransmissions (and forks) up, so the UA can
 * re-send its end-to-end ACK instead of the 2xx leaking out unmatched.
 */
export class InviteClientTransaction extends TransactionBase<InviteClientState> {
  protected state: InviteClientState = 'calling';
  #ack: SipRequest | undefined;
  #interval = 0;

  constructor(
    readonly request: SipRequest,
    env: TransactionEnv,
    private readonly tu: ClientTransactionUser,
  ) {
    super(env);
  }

  start(): void {
    this.env.send(this.request);
    const { A, B } = this.env.timers;
    // §17.1.1.2: Timer A only on unreliable transports; it doubles on every firing with no T2 cap.
    if (A !== undefined) {
      this.#interval = A;
      this.arm('A', A, () => this.#onTimerA());
    }
    this.arm('B', B, () => {
      if (this.state !== 'calling') return;
      this.#terminate();
      this.tu.onTimeout();
    });
  }

  #onTimerA(): void {
    if (this.state !== 'calling') return;
    this.env.send(this.request);
    this.#interval *= 2;
    this.arm('A', this.#interval, () => this.#onTimerA());
  }

  receiveResponse(res: SipResponse): void {
    const s = this.state;
    if (s === 'terminated') return;
    if (res.status < 200) {
      if (s !== 'calling' && s !== 'proceeding') return;
      if (s === 'calling') {
        this.state = 'proceeding';
        // §17.1.1.2: provisional stops retransmissions; Timer B only guards the Calling state.
        this.disarm('A');
        this.disarm('B');
      }
      this.tu.onResponse(res);
      return;
    }
    if (res.status < 300) {
      if (s === 'calling' || s === 'proceeding') {
        this.state = 'accepted';
        this.disarm('A');
        this.disarm('B');
        this.arm('M', this.env.timers.M, () => this.#terminate());
        this.tu.onResponse(res);
      } else if (s === 'accepted') {
        this.tu.onResponse(res); // RFC 6026 §8.4: retransmitted / forked 2xx go to the TU
      }
      return;
    }
    // 300-699
    if (s === 'calling' || s === 'proceeding') {
      this.state = 'completed';
      this.disarm('A');
      this.disarm('B');
      this.#ack = buildNon2xxAck(this.request, res);
      this.env.send(this.#ack);
      this.tu.onResponse(res);
      // §17.1.1.2: Timer D absorbs final-response retransmissions; zero on reliable transports.
      this.arm('D', this.env.timers.D, () => this.#terminate());
    } else if (s === 'completed' && this.#ack !== undefined) {
      this.env.send(this.#ack); // retransmitted final: re-ACK, do not pass up
    }
  }

  transportError(err: Error): void {
    if (this.state === 'terminated') return;
    const wasPending = this.state === 'calling' || this.state === 'proceeding';
    this.#terminate();
    if (wasPending) this.tu.onTransportError(err);
  }

  /** Forced end (stack close); the TU rejects its own pending work. */
  terminate(): void {
    this.#terminate();
  }

  #terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.disarmAll();
    this.tu.onTerminated();
  }
}
