import type { SipRequest, SipResponse } from '../message/types.ts';
import { TransactionBase, type TransactionEnv } from './base.ts';
import type { ServerRequestDisposition, ServerTransactionUser } from './server-invite.ts';

export type NonInviteServerState = 'trying' | 'proceeding' | 'completed' | 'terminated';

/** RFC 3261 §17.2.2 non-INVITE server transaction (Figure 8). */
export class NonInviteServerTransaction extends TransactionBase<NonInviteServerState> {
  protected state: NonInviteServerState = 'trying';
  #lastProvisional: SipResponse | undefined;
  #final: SipResponse | undefined;

  constructor(
    readonly request: SipRequest,
    env: TransactionEnv,
    private readonly tu: ServerTransactionUser,
  ) {
    super(env);
  }

  get finalSent(): boolean {
    return this.#final !== undefined;
  }

  /** A retransmission of the request: discarded in Trying, answered with the last response after. */
  receiveRequest(_req: SipRequest): ServerRequestDisposition {
    if (this.state === 'proceeding' && this.#lastProvisional !== undefined) this.env.send(this.#lastProvisional);
    else if (this.state === 'completed' && this.#final !== undefined) this.env.send(this.#final);
    return 'absorbed';
  }

  respond(res: SipResponse): boolean {
    if (this.state !== 'trying' && this.state !== 'proceeding') return false;
    if (res.status < 200) {
      this.state = 'proceeding';
      this.#lastProvisional = res;
      this.env.send(res);
      return true;
    }
    this.state = 'completed';
    this.#final = res;
    this.env.send(res);
    // §17.2.2: Timer J keeps the final response for retransmitted requests; zero if reliable.
    this.arm('J', this.env.timers.J, () => this.#terminate());
    return true;
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
