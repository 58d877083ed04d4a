import type { Clock } from '../clock.ts';
import { BRANCH_MAGIC_COOKIE } from '../message/build.ts';
import { detachString } from '../message/detach.ts';
import { getCallId, getCSeq, getFrom, getTopVia } from '../message/accessors.ts';
import type { SipMessage, SipRequest, SipResponse } from '../message/types.ts';
import type { Flow } from '../transport/flow.ts';
import type { TransactionEnv } from './base.ts';
import { CompletedFinals } from './completed-finals.ts';
import { InviteClientTransaction, type ClientTransactionUser } from './client-invite.ts';
import { NonInviteClientTransaction } from './client-non-invite.ts';
import { InviteServerTransaction, type ServerRequestDisposition, type ServerTransactionUser } from './server-invite.ts';
import { NonInviteServerTransaction } from './server-non-invite.ts';
import { timerValues, type TimerConfig } from './timers.ts';
import { unnamed } from '../unnamed.ts';

export type ClientTransaction = InviteClientTransaction | NonInviteClientTransaction;
export type ServerTransaction = InviteServerTransaction | NonInviteServerTransaction;

/** ACK belongs to the INVITE transaction it acknowledges (RFC 3261 §17.1.3 / §17.2.3). */
const txMethod = (m: string): string => (m === 'ACK' ? 'INVITE' : m);

/** §17.1.3: a response matches the client transaction with the same top-Via branch and CSeq method. */
export function clientKey(msg: SipMessage): string {
  return `${getTopVia(msg).params.get('branch') ?? ''}|${txMethod(getCSeq(msg).method)}`;
}

/**
 * §17.2.3: branch + sent-by + method for RFC 3261 branches. A branch without the magic cookie comes
 * from an RFC 2543 element; full 2543 matching is out of scope, so such requests get a key from
 * Call-ID, CSeq, From-tag and sent-by — stable across retransmissions, and never a crash.
 */
export function serverKey(req: SipRequest, method: string = req.method): string {
  const top = getTopVia(req);
  const sentBy = `${top.host.toLowerCase()}:${top.port ?? ''}`;
  const branch = top.params.get('branch') ?? '';
  if (branch.startsWith(BRANCH_MAGIC_COOKIE)) return `${branch}|${sentBy}|${txMethod(method)}`;
  const tag = getFrom(req).params.get('tag') ?? '';
  return `2543|${getCallId(req)}|${getCSeq(req).seq}|${tag}|${sentBy}|${branch}|${txMethod(method)}`;
}

export interface TransactionSink {
  /** Hands a message to the transport; failures must come back via the transaction's transportError(). */
  send(msg: SipMessage): void;
  /** See TransactionEnv.prepare. */
  prepare?(msg: SipMessage): () => void;
  reliable: boolean;
  /**
   * The flow a server transaction's request came on: with the layer's FinalSender, a non-INVITE
   * server transaction's final over UDP is sent by it and kept in the completed finals (see there).
   */
  flow?: Flow;
}

/**
 * Sends a final response and repeats it later from what it returned (SipTransport.sendRetained /
 * resendRetained: the bytes and the destination, nothing of the message or its request).
 */
export interface FinalSender<R = unknown> {
  /** undefined: not sent this way (the transaction then sends and keeps the final itself). */
  send(final: SipResponse, flow: Flow): R | undefined;
  resend(kept: R): void;
}

export interface CompletedFinalsOptions {
  readonly sender: FinalSender;
  /** Bound on the completed finals kept; default DEFAULT_MAX_COMPLETED_FINALS. */
  readonly max?: number;
}

/** The matching tables; transactions remove themselves when they reach Terminated. */
export class TransactionLayer {
  readonly #clients = new Map<string, ClientTransaction>();
  readonly #servers = new Map<string, ServerTransaction>();
  /** Non-INVITE server transactions over UDP in Completed, as data (completed-finals.ts); with a FinalSender only. */
  readonly #completed: CompletedFinals<unknown> | undefined;
  readonly #sender: FinalSender | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly timers: TimerConfig,
    finals?: CompletedFinalsOptions,
  ) {
    this.#sender = finals?.sender;
    this.#completed = finals === undefined ? undefined : new CompletedFinals(clock, timerValues(timers, false).J, finals.max);
  }

  /** Server transactions counts those Completed in the completed finals too (RFC 3261 §17.2.2 state). */
  get size(): { clients: number; servers: number } {
    return { clients: this.#clients.size, servers: this.#servers.size + (this.#completed?.size ?? 0) };
  }

  /** Completed finals dropped before Timer J because their table was full. */
  get completedEvicted(): number {
    return this.#completed?.evicted ?? 0;
  }

  /** Timer values per transport kind, computed once: every transaction of a kind shares one object. */
  readonly #timerValues = new Map<boolean, ReturnType<typeof timerValues>>();

  #env(sink: TransactionSink): TransactionEnv {
    let timers = this.#timerValues.get(sink.reliable);
    if (timers === undefined) this.#timerValues.set(sink.reliable, (timers = timerValues(this.timers, sink.reliable)));
    return { clock: this.clock, timers, reliable: sink.reliable, send: sink.send, ...(sink.prepare === undefined ? {} : { prepare: sink.prepare }) };
  }

  /** Creates and starts the client transaction for `req` (which already carries our Via). */
  startClient(req: SipRequest, sink: TransactionSink, tu: ClientTransactionUser): ClientTransaction {
    const key = clientKey(req);
    const wrapped: ClientTransactionUser = {
      ...tu,
      onTerminated: unnamed(() => {
        if (this.#clients.get(key) === tx) this.#clients.delete(key);
        tu.onTerminated();
      }),
    };
    const tx: ClientTransaction =
      req.method === 'INVITE' ? new InviteClientTransaction(req, this.#env(sink), wrapped) : new NonInviteClientTransaction(req, this.#env(sink), wrapped);
    this.#clients.set(key, tx);
    tx.start();
    return tx;
  }

  matchResponse(res: SipResponse): ClientTransaction | undefined {
    return this.#clients.get(clientKey(res));
  }

  /** The server transaction a request (retransmission or ACK) belongs to, if any. */
  matchRequest(req: SipRequest): ServerTransaction | undefined {
    return this.#servers.get(serverKey(req));
  }

  /**
   * A request of a known server transaction: a live one takes it (its disposition), a completed one
   * kept in the completed finals gets its final again ('absorbed', RFC 3261 §17.2.2). undefined: a new
   * request. `key` is serverKey(req) (the caller's, when it starts the transaction with it next).
   */
  receiveRequest(req: SipRequest, key: string = serverKey(req)): ServerRequestDisposition | undefined {
    const live = this.#servers.get(key);
    if (live !== undefined) return live.receiveRequest(req);
    const kept = this.#completed?.get(key);
    if (kept === undefined) return undefined;
    this.#sender?.resend(kept);
    return 'absorbed';
  }

  /** RFC 3261 §9.2: the INVITE server transaction a CANCEL targets (same matching, method INVITE). */
  matchCancelTarget(cancel: SipRequest): InviteServerTransaction | undefined {
    const tx = this.#servers.get(serverKey(cancel, 'INVITE'));
    return tx instanceof InviteServerTransaction ? tx : undefined;
  }

  startServer(req: SipRequest, sink: TransactionSink, tu: ServerTransactionUser, createTrying?: () => SipResponse, requestKey: string = serverKey(req)): ServerTransaction {
    const retained = req.method !== 'INVITE' && this.#retains(sink);
    // kept until Terminated: must not keep the request's text. One answered into the completed finals
    // ends with its handling (the request is alive until then anyway): its key is copied when kept there.
    const key = retained ? requestKey : detachString(requestKey);
    const wrapped: ServerTransactionUser = {
      ...tu,
      // unnamed(): a per-request closure, kept out of tsx's naming wrapper (see unnamed.ts)
      onTerminated: unnamed(() => {
        if (this.#servers.get(key) === tx) this.#servers.delete(key);
        tu.onTerminated();
      }),
    };
    let tx: ServerTransaction;
    if (req.method === 'INVITE') {
      const inv = new InviteServerTransaction(req, this.#env(sink), wrapped, createTrying);
      tx = inv;
      this.#servers.set(key, tx);
      inv.start();
    } else {
      tx = new NonInviteServerTransaction(req, retained ? this.#completingEnv(sink, key) : this.#env(sink), wrapped);
      this.#servers.set(key, tx);
    }
    return tx;
  }

  #retains(sink: TransactionSink): boolean {
    return this.#completed !== undefined && !sink.reliable && sink.flow !== undefined;
  }

  /**
   * #env(sink) with `complete`: the final is sent by the FinalSender and kept in the completed finals
   * under `key`. A function of its own, so the closure holds the key and the flow, not the request.
   */
  #completingEnv(sink: TransactionSink, key: string): TransactionEnv {
    const env = this.#env(sink);
    const sender = this.#sender as FinalSender;
    const completed = this.#completed as CompletedFinals<unknown>;
    const flow = sink.flow as Flow;
    // unnamed(): a per-request closure, kept out of tsx's naming wrapper (see unnamed.ts)
    env.complete = unnamed((final: SipMessage): boolean => {
      const kept = sender.send(final as SipResponse, flow);
      if (kept === undefined) return false;
      completed.add(detachString(key), kept);
      return true;
    });
    return env;
  }

  /** Ends every transaction silently (stack close); timers are cleared by each. */
  close(): void {
    for (const tx of [...this.#clients.values(), ...this.#servers.values()]) tx.terminate();
    this.#clients.clear();
    this.#servers.clear();
    this.#completed?.clear();
  }
}
