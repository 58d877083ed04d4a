import type { Dialog } from '../dialog/dialog.ts';
import { createResponse, generateTag } from '../message/build.ts';
import type { SipRequest, SipResponse } from '../message/types.ts';
import { getTo } from '../message/accessors.ts';
import { SipStatus } from '../status.ts';
import type { ServerTransaction } from '../transaction/layer.ts';
import type { Flow } from '../transport/flow.ts';
import { SipStackError } from '../errors.ts';
import { headerEntries } from '../message/header-input.ts';
import type { AcceptOptions, ReplyOptions, ServerContext } from './types.ts';

export interface ServerContextHooks {
  accept(ctx: ServerCtx, opts: AcceptOptions): Dialog;
  serverHeader: string | undefined;
}

/** The per-request answer handle: every response goes through the request's server transaction. */
export class ServerCtx implements ServerContext {
  /** RFC 3261 §8.2.6.2: one To-tag for all responses to this request (100 excepted). */
  readonly toTag = generateTag();
  /** Created on first use of `signal`: most handlers never look at it (keepalive fast path). */
  #abort: AbortController | undefined;
  #abortReason: Error | undefined;

  constructor(
    readonly request: SipRequest,
    readonly flow: Flow,
    readonly tx: ServerTransaction,
    private readonly hooks: ServerContextHooks,
    /** Called once the final response to a non-INVITE request is sent: the owner may let go of this. */
    private readonly onFinal?: () => void,
  ) {}

  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (this.#abortReason !== undefined) this.#abort.abort(this.#abortReason);
    }
    return this.#abort.signal;
  }

  /** `signal.aborted` without creating the signal. */
  get aborted(): boolean {
    return this.#abortReason !== undefined;
  }

  get finalSent(): boolean {
    return this.tx.finalSent;
  }

  buildResponse(status: number, opts: ReplyOptions = {}): SipResponse {
    const headers = headerEntries(opts.headers);
    if (this.hooks.serverHeader !== undefined && !headers.some(([n]) => n.toLowerCase() === 'server')) {
      headers.push(['Server', this.hooks.serverHeader]);
    }
    return createResponse(this.request, status, opts.reason, {
      toTag: status === SipStatus.Trying ? undefined : this.toTag,
      headers,
      body: opts.body,
      contentType: opts.contentType,
    });
  }

  reply(status: number, opts: ReplyOptions = {}): SipResponse {
    if (this.request.method === 'INVITE' && status >= 200 && status < 300 && !getTo(this.request).params.has('tag')) {
      // A 2xx to INVITE creates a dialog and must be retransmitted until ACKed (§13.3.1.4). A re-INVITE's
      // (To-tag present, §14.2) creates none: it is sent once here, a peer that misses it gives up at Timer B.
      throw new SipStackError('SIP_ERR_BAD_ARGUMENT', 'a 2xx to INVITE is sent with accept()');
    }
    return this.send(this.buildResponse(status, opts));
  }

  /** Sends a prepared response through the transaction. */
  send(res: SipResponse): SipResponse {
    if (this.finalSent || !this.tx.respond(res)) {
      throw new SipStackError('SIP_ERR_INVALID_STATE', 'final response already sent', { cause: { status: res.status } });
    }
    if (res.status >= 200 && this.request.method !== 'INVITE') this.onFinal?.();
    return res;
  }

  accept(opts: AcceptOptions = {}): Dialog {
    return this.hooks.accept(this, opts);
  }

  /** CANCEL matched this INVITE (RFC 3261 §9.2): 487 if still pending, then abort the handler's signal. */
  cancel(): void {
    if (!this.finalSent) this.reply(SipStatus.RequestTerminated);
    this.abort(new SipStackError('SIP_ERR_CANCELLED', 'request cancelled by peer'));
  }

  /** Stack close. */
  abort(err: Error): void {
    if (this.#abortReason !== undefined) return;
    this.#abortReason = err;
    this.#abort?.abort(err);
  }
}

/** A response built by the stack, to be changed before it is sent (see `rawResponder`). */
export interface RawResponder {
  buildResponse(status: number, opts?: ReplyOptions): SipResponse;
  send(res: SipResponse): SipResponse;
}

/**
 * Simulators of broken peers only (services/device-sim's `answersWithoutToTag`): the request's
 * response as the stack would build it, to alter before sending through the same transaction.
 * Undefined for a context the stack did not create.
 */
export function rawResponder(ctx: ServerContext): RawResponder | undefined {
  return ctx instanceof ServerCtx ? ctx : undefined;
}
