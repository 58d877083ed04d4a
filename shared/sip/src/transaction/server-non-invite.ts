import type { SipRequest, SipResponse } from '../message/types.ts';
import { TransactionBase, type TransactionEnv } from './base.ts';
import type { ServerRequestDisposition, ServerTransactionUser } from './server-invite.ts';

export type NonInviteServerState = 'trying' | 'proceeding' | 'completed' | 'terminated';

/**
 * RFC 3261 §17.2.2 non-INVITE server transaction (Figure 8).
 * It keeps neither the request nor anything of its handling: over UDP a Completed transaction lives
 * for Timer J (32 s) with only its final response, so a REGISTER storm of N/s holds 32·N of them, and
 * whatever they hold survives V8's young generation and is paid in RSS long after (issue 11: the request
 * and the handler's context kept here were most of the 10 KB per registered device). Given an
 * `env.complete` (the layer's completed finals, UDP), it keeps not even that: the final goes there and
 * the transaction ends as it is sent, its Completed state being an entry of that table.
 */
export class NonInviteServerTransaction extends TransactionBase<NonInviteServerState> {
  protected state: NonInviteServerState = 'trying';
  #lastProvisional: SipResponse | undefined;
  /** Sends the final response again (§17.2.2: to every retransmitted request in Completed). */
  #resendFinal: (() => void) | undefined;
  /** A final was sent (kept here, or handed to env.complete). */
  #finalSent = false;

  constructor(
    _request: SipRequest,
    env: TransactionEnv,
    private readonly tu: ServerTransactionUser,
  ) {
    super(env);
  }

  get finalSent(): boolean {
    return this.#finalSent;
  }

  /** A retransmission of the request: discarded in Trying, answered with the last response after. */
  receiveRequest(_req: SipRequest): ServerRequestDisposition {
    if (this.state === 'proceeding' && this.#lastProvisional !== undefined) this.env.send(this.#lastProvisional);
    else if (this.state === 'completed' && this.#resendFinal !== undefined) this.#resendFinal();
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
    this.#lastProvisional = undefined;
    this.#finalSent = true;
    if (!this.env.reliable && this.env.complete?.(res) === true) {
      this.#terminate(); // Completed lives on in the layer's table (env.complete)
      return true;
    }
    this.env.send(res);
    this.#resendFinal = resender(this.env, res);
    this.#armTimerJ();
    return true;
  }

  /** §17.2.2: Timer J keeps the final response for retransmitted requests; zero if reliable. */
  #armTimerJ(): void {
    // Its own method: a closure made in respond() would share respond()'s scope, and with it `res`.
    this.arm('J', this.env.timers.J, () => this.#terminate());
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

/** What repeats a final response: its bytes when the env can keep them alone (env.prepare), else the message. */
function resender(env: TransactionEnv, res: SipResponse): () => void {
  if (env.reliable) return () => {};
  return env.prepare?.(res) ?? (() => env.send(res));
}
