import type { SipRequest, SipResponse } from '../message/types.ts';
import { TransactionBase, type TransactionEnv } from './base.ts';
import type { ClientTransactionUser } from './client-invite.ts';

export type NonInviteClientState = 'trying' | 'proceeding' | 'completed' | 'terminated';

/** RFC 3261 §17.1.2 non-INVITE client transaction (Figure 6). */
export class NonInviteClientTransaction extends TransactionBase<NonInviteClientState> {
  protected state: NonInviteClientState = 'trying';
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
    const { E, F } = this.env.timers;
    if (E !== undefined) {
      this.#interval = E;
      this.arm('E', E, () => this.#onTimerE());
    }
    this.arm('F', F, () => {
      if (this.state !== 'trying' && this.state !== 'proceeding') return;
      this.#terminate();
      this.tu.onTimeout();
    });
  }

  // §17.1.2.2: in Trying the interval doubles up to T2; once Proceeding it is T2 flat.
  #onTimerE(): void {
    if (this.state !== 'trying' && this.state !== 'proceeding') return;
    this.env.send(this.request);
    this.#interval = this.state === 'trying' ? Math.min(2 * this.#interval, this.env.timers.T2) : this.env.timers.T2;
    this.arm('E', this.#interval, () => this.#onTimerE());
  }

  receiveResponse(res: SipResponse): void {
    if (this.state !== 'trying' && this.state !== 'proceeding') return; // Completed absorbs retransmissions
    if (res.status < 200) {
      this.state = 'proceeding';
      this.tu.onResponse(res);
      return;
    }
    this.state = 'completed';
    this.disarm('E');
    this.disarm('F');
    this.tu.onResponse(res);
    this.arm('K', this.env.timers.K, () => this.#terminate());
  }

  transportError(err: Error): void {
    if (this.state === 'terminated') return;
    const wasPending = this.state === 'trying' || this.state === 'proceeding';
    this.#terminate();
    if (wasPending) this.tu.onTransportError(err);
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
