import type { SipRequest, SipResponse } from '../message/types.ts';
import { TransactionBase, type TransactionEnv } from './base.ts';

export interface ServerTransactionUser {
  /** Timer H fired (no ACK for a non-2xx final): RFC 3261 §17.2.1. */
  onTimeout(): void;
  onTransportError(err: Error): void;
  onTerminated(): void;
}

export type InviteServerState = 'proceeding' | 'accepted' | 'completed' | 'confirmed' | 'terminated';

/** What the layer should do with a request that matched this transaction. */
export type ServerRequestDisposition = 'absorbed' | 'pass-to-tu';

/** RFC 3261 §17.2.1: the server sends 100 Trying unless the TU answers within 200 ms. */
export const TRYING_DELAY_MS = 200;

/**
 * RFC 3261 §17.2.1 INVITE server transaction with the RFC 6026 §7.1 "Accepted" state: after a 2xx
 * the transaction absorbs INVITE retransmissions for Timer L while the UA core retransmits the 2xx
 * end-to-end (§13.3.1.4) until the ACK arrives.
 */
export class InviteServerTransaction extends TransactionBase<InviteServerState> {
  protected state: InviteServerState = 'proceeding';
  #lastProvisional: SipResponse | undefined;
  #final: SipResponse | undefined;
  #interval = 0;

  constructor(
    readonly request: SipRequest,
    env: TransactionEnv,
    private readonly tu: ServerTransactionUser,
    /** Builds the automatic 100 Trying; omit to leave 100 entirely to the TU. */
    private readonly createTrying?: () => SipResponse,
  ) {
    super(env);
  }

  start(): void {
    if (this.createTrying === undefined) return;
    const make = this.createTrying;
    this.arm('Trying', TRYING_DELAY_MS, () => {
      if (this.state === 'proceeding' && this.#lastProvisional === undefined) this.respond(make());
    });
  }

  /** True once a final response went out (CANCEL then has no effect, RFC 3261 §9.2). */
  get finalSent(): boolean {
    return this.#final !== undefined;
  }

  receiveRequest(req: SipRequest): ServerRequestDisposition {
    const s = this.state;
    if (req.method === 'ACK') {
      if (s === 'completed') {
        this.state = 'confirmed';
        this.disarm('G');
        this.disarm('H');
        // §17.2.1: Timer I absorbs further ACK retransmissions; zero on reliable transports.
        this.arm('I', this.env.timers.I, () => this.#terminate());
        return 'absorbed';
      }
      // RFC 6026 §7.1: an ACK matching an Accepted transaction is the 2xx ACK; the TU wants it.
      return s === 'accepted' ? 'pass-to-tu' : 'absorbed';
    }
    // A retransmitted INVITE: §17.2.1 resend the latest response of the current state.
    if (s === 'proceeding' && this.#lastProvisional !== undefined) this.env.send(this.#lastProvisional);
    else if (s === 'completed' && this.#final !== undefined) this.env.send(this.#final);
    return 'absorbed';
  }

  /** Sends a TU response through the transaction; returns false if the state no longer allows it. */
  respond(res: SipResponse): boolean {
    const s = this.state;
    if (s === 'accepted' && res.status >= 200 && res.status < 300) {
      this.env.send(res); // RFC 6026 §8.5: TU-driven 2xx retransmissions pass straight through
      return true;
    }
    if (s !== 'proceeding') return false;
    this.disarm('Trying');
    if (res.status < 200) {
      this.#lastProvisional = res;
      this.env.send(res);
      return true;
    }
    this.#final = res;
    if (res.status < 300) {
      this.state = 'accepted';
      this.env.send(res);
      this.arm('L', this.env.timers.L, () => this.#terminate());
      return true;
    }
    this.state = 'completed';
    this.env.send(res);
    const { G, H } = this.env.timers;
    if (G !== undefined) {
      this.#interval = G;
      this.arm('G', G, () => this.#onTimerG());
    }
    this.arm('H', H, () => {
      if (this.state !== 'completed') return;
      this.#terminate();
      this.tu.onTimeout();
    });
    return true;
  }

  // §17.2.1: Timer G doubles up to T2 while waiting for the ACK.
  #onTimerG(): void {
    if (this.state !== 'completed' || this.#final === undefined) return;
    this.env.send(this.#final);
    this.#interval = Math.min(2 * this.#interval, this.env.timers.T2);
    this.arm('G', this.#interval, () => this.#onTimerG());
  }

  transportError(err: Error): void {
    if (this.state === 'terminated') return;
    this.#terminate();
    this.tu.onTransportError(err);
  }

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
