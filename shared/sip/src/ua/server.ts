import type { Dialog } from '../dialog/dialog.ts';
import { createUasDialogState, type DialogState } from '../dialog/dialog-state.ts';
import type { DialogRegistry } from '../dialog/registry.ts';
import { getTo } from '../message/accessors.ts';
import { createResponse } from '../message/build.ts';
import { detachString } from '../message/detach.ts';
import type { SipMessage, SipRequest, SipResponse } from '../message/types.ts';
import { SipStatus } from '../status.ts';
import { serverKey, type ServerTransaction, type TransactionLayer, type TransactionSink } from '../transaction/layer.ts';
import type { ServerTransactionUser } from '../transaction/server-invite.ts';
import type { Flow } from '../transport/flow.ts';
import type { SipLogger } from '../transport/logger.ts';
import { unnamed } from '../unnamed.ts';
import type { SipTransport } from '../transport/transport.ts';
import { SipStackError } from '../errors.ts';
import { headerEntries } from '../message/header-input.ts';
import { trimLws } from '../message/lex.ts';
import { contactFor, type LocalIdentity } from './outbound.ts';
import { ServerCtx, type ServerContextHooks } from './server-context.ts';
import type { AcceptOptions, RequestHandler, StatelessHandler, StatelessOptions } from './types.ts';
import { statelessToTag } from './stateless-tag.ts';
import { buildDatagramResponse, peekDatagramRequest, stampDatagramVia, writeDatagramResponse, type PeekedRequest } from '../transport/datagram-shortcut.ts';
import { channels, publish } from '../transport/diagnostics.ts';

/** RFC 3261 §8.2.1: methods we know; an unhandled one of these gets 405, anything else 501. */
const KNOWN_METHODS = new Set(['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'REGISTER', 'SUBSCRIBE', 'NOTIFY', 'MESSAGE', 'INFO', 'PRACK', 'UPDATE', 'REFER', 'PUBLISH']);
/** Where a request's ServerCtx is while it is live; `release` drops it (see #serverUser). */
interface ContextSlot {
  ctx: ServerCtx | undefined;
  release?: () => void;
}

/** RFC 3261 §17.2.1: the 100 an INVITE server transaction sends when the TU is slow. */
const tryingFor = (req: SipRequest) => (): SipResponse => createResponse(req, SipStatus.Trying);

/** Always accepted: transaction/dialog machinery handles these without an app handler. */
const BUILTIN_METHODS = ['ACK', 'CANCEL', 'OPTIONS', 'BYE', 'INFO', 'NOTIFY'];

export interface ServerDeps {
  transport: SipTransport;
  /** RFC 3581 rport forced for every request (SipStackOptions.forceRport). */
  forceRport: boolean;
  layer: TransactionLayer;
  dialogs: DialogRegistry;
  local: LocalIdentity;
  log: SipLogger;
  createDialog(state: DialogState, flow: Flow): Dialog;
}

/**
 * The UAS core (RFC 3261 §8.2): new requests get a server transaction and go to an in-dialog
 * Dialog, the method's handler, or a default answer; CANCEL and ACK are handled here.
 */
export class RequestDispatcher {
  readonly #handlers = new Map<string, RequestHandler>();
  readonly #stateless = new Map<string, StatelessHandler>();
  readonly #contexts = new Set<ServerCtx>();
  readonly #inviteCtx = new WeakMap<ServerTransaction, ServerCtx>();
  readonly #ctxHooks: ServerContextHooks;
  #closing = false;
  /**
   * The flow (one object per datagram) of the last datagram whose stateless handler ran on the
   * shortcut and declined it: its parsed request does not run that handler again (issue 11: the
   * second leg of every registration paid both, and a shedding decision would be drawn twice).
   */
  #declinedFlow: Flow | undefined;
  /** Methods with a StatelessOptions.ordinary test: the request line's start (`METHOD `) and the test. */
  readonly #ordinary: { readonly start: Buffer; readonly test: (data: Buffer) => boolean }[] = [];

  constructor(private readonly deps: ServerDeps) {
    this.#ctxHooks = { accept: (c, o) => this.#accept(c, o), serverHeader: deps.local.userAgent };
  }

  get log(): SipLogger {
    return this.deps.log;
  }

  /** One handler per method; a second registration for the same method is a programming error. */
  register(method: string, handler: RequestHandler): void {
    if (this.#handlers.has(method)) throw new SipStackError('SIP_ERR_BAD_ARGUMENT', `handler for ${method} already registered`);
    this.#handlers.set(method, handler);
  }

  /** RFC 3261 §8.2.7; one per method; not for INVITE, ACK or CANCEL (they need transaction state). */
  registerStateless(method: string, handler: StatelessHandler, opts?: StatelessOptions): void {
    if (method === 'INVITE' || method === 'ACK' || method === 'CANCEL') {
      throw new SipStackError('SIP_ERR_BAD_ARGUMENT', `${method} cannot be answered statelessly`);
    }
    if (this.#stateless.has(method)) throw new SipStackError('SIP_ERR_BAD_ARGUMENT', `stateless handler for ${method} already registered`);
    this.#stateless.set(method, handler);
    if (opts?.ordinary !== undefined) this.#ordinary.push({ start: Buffer.from(`${method} `, 'latin1'), test: opts.ordinary });
  }

  /** StatelessOptions.ordinary: whether `data` is a request of such a method its test sends to the ordinary path. */
  #goesOrdinary(data: Buffer): boolean {
    for (const o of this.#ordinary) if (startsWith(data, o.start)) return o.test(data);
    return false;
  }

  /** Stack close: handlers see their signal abort; no new requests are taken. */
  close(err: Error): void {
    this.#closing = true;
    for (const ctx of this.#contexts) ctx.abort(err);
    this.#contexts.clear();
  }

  handleRequest(req: SipRequest, flow: Flow): void {
    const stateless = this.#stateless.get(req.method);
    const declined = this.#declinedFlow === flow;
    this.#declinedFlow = undefined;
    if (stateless !== undefined && !declined && !this.#closing && this.#answerStatelessly(stateless, req, flow)) return;
    const key = serverKey(req);
    const known = this.deps.layer.receiveRequest(req, key); // a live transaction's, or a completed one's final again
    if (known !== undefined) {
      if (known === 'pass-to-tu') this.#onAck(req);
      return;
    }
    if (req.method === 'ACK') {
      this.#onAck(req);
      return;
    }
    if (this.#closing) return;
    const sink = this.#responseSink(flow);
    if (req.method === 'CANCEL') {
      this.#onCancel(req, sink);
      return;
    }
    const slot: ContextSlot = { ctx: undefined };
    const tx = this.deps.layer.startServer(req, sink, this.#serverUser(req, flow, slot), req.method === 'INVITE' ? tryingFor(req) : undefined, key);
    sink.tx = tx;
    const ctx = new ServerCtx(req, flow, tx, this.#ctxHooks, slot.release);
    slot.ctx = ctx;
    this.#contexts.add(ctx);
    if (req.method === 'INVITE') this.#inviteCtx.set(tx, ctx);
    this.#dispatch(req, ctx);
  }

  // The closures a server transaction keeps until it terminates (an INVITE's Timers H/I/L; a non-INVITE
  // over UDP ends at its final, whose bytes the layer keeps for Timer J) are made here, in functions of
  // their own, so that they hold only the flow, the Call-ID and the slot: closures made in handleRequest
  // would share its scope and keep the request and its ServerCtx.
  #responseSink(flow: Flow): TransactionSink & { tx?: ServerTransaction } {
    // unnamed(): per-request closures, kept out of tsx's naming wrapper (see unnamed.ts)
    const sink: TransactionSink & { tx?: ServerTransaction } = {
      reliable: flow.transport === 'tcp',
      flow,
      send: unnamed((msg: SipMessage) => {
        this.deps.transport.sendResponse(msg as SipResponse, flow).catch((err: unknown) => sink.tx?.transportError(err as Error));
      }),
      prepare: unnamed((msg: SipMessage) => {
        const resend = this.deps.transport.prepareResponse(msg as SipResponse, flow);
        return () => {
          resend().catch((err: unknown) => sink.tx?.transportError(err as Error));
        };
      }),
    };
    return sink;
  }

  #serverUser(req: SipRequest, flow: Flow, slot: ContextSlot): ServerTransactionUser {
    // Only an INVITE server transaction times out (no ACK); its Call-ID is copied for that log line,
    // a slice would keep the whole request for as long as the transaction lives.
    const callId = req.method === 'INVITE' ? detachString(req.headers.get('Call-ID') ?? '') : undefined;
    // The ServerCtx leaves the live set (and the slot) at the final response of a non-INVITE request
    // (ServerCtx.send) or when the transaction ends, whichever comes first.
    slot.release = () => {
      const c = slot.ctx;
      if (c === undefined) return;
      slot.ctx = undefined;
      this.#contexts.delete(c);
    };
    return {
      onTimeout: unnamed(() => this.log.debug({ callId }, 'sip no ACK for final response')),
      onTransportError: unnamed((err: Error) => this.log.debug({ err, flow }, 'sip response not delivered')),
      onTerminated: slot.release,
    };
  }

  /**
   * RFC 3261 §8.2.7: the response goes straight to the transport; the To-tag is derived from the
   * request, so a retransmission gets the very same answer. Out-of-dialog requests only.
   */
  #answerStatelessly(handler: StatelessHandler, req: SipRequest, flow: Flow): boolean {
    if (getTo(req).params.has('tag')) return false;
    const h = req.headers;
    const view = {
      method: req.method,
      body: req.body,
      callId: h.get('Call-ID') ?? '',
      from: h.get('From') ?? '',
      contentType: h.get('Content-Type'),
      topVia: h.getLines('Via')[0] ?? '',
      text: req.body.toString('latin1'),
      bodyStart: 0,
      hasHeader: unnamed((name: string) => h.get(name) !== undefined),
      header: unnamed((name: string) => {
        const v = h.get(name);
        return v === undefined ? undefined : trimLws(v);
      }),
    };
    const answer = this.#runStateless(handler, view, flow);
    if (answer === undefined) return false;
    const status = typeof answer === 'number' ? answer : answer.status;
    const headers: [string, string][] = this.deps.local.userAgent === undefined ? [] : [['Server', this.deps.local.userAgent]];
    if (typeof answer !== 'number') for (const [name, value] of answer.headers) headers.push([name, value]);
    const res = createResponse(req, status, undefined, { toTag: statelessToTag(req), headers });
    this.deps.transport.sendResponse(res, flow, { once: true }).catch((err: unknown) => this.log.debug({ err, flow }, 'sip stateless response not delivered'));
    return true;
  }

  /**
   * The transport's datagram shortcut (UDP only): a plain request of a method with a stateless
   * handler is answered from its bytes, without a parse; undefined sends it down the ordinary path.
   * An answer may be written over `data` itself (writeDatagramResponse): the caller sends it and drops
   * the datagram. When it returns undefined, `data` is untouched.
   */
  answerDatagram(data: Buffer, flow: Flow): { data: Uint8Array; host: string; port: number } | undefined {
    if (this.#stateless.size === 0 || this.#closing) return undefined;
    if (this.#ordinary.length > 0 && this.#goesOrdinary(data)) {
      this.#declinedFlow = flow; // parsed next: straight to its transaction, the stateless handler not run
      return undefined;
    }
    const peek: PeekedRequest | undefined = peekDatagramRequest(data);
    const handler = peek === undefined ? undefined : this.#stateless.get(peek.method);
    if (peek === undefined || handler === undefined) return undefined;
    const via = stampDatagramVia(peek, flow, this.deps.forceRport);
    if (via === undefined) return undefined;
    const answer = this.#runStateless(handler, peek, flow); // a PeekedRequest is a StatelessRequest
    if (answer === undefined) {
      this.#declinedFlow = flow; // the same request, parsed next, goes straight to its transaction
      return undefined;
    }
    const status = typeof answer === 'number' ? answer : answer.status;
    if (channels.datagramAnswer.hasSubscribers) publish(channels.datagramAnswer, { method: peek.method, status });
    const headers = typeof answer === 'number' ? undefined : answer.headers;
    // the datagram is answered here and dropped by the transport: its bytes become the answer's when they can
    const ua = this.deps.local.userAgent;
    const out = writeDatagramResponse(peek, via, status, ua, headers) ?? buildDatagramResponse(peek, via, status, ua, headers);
    return { data: out, host: via.host, port: via.port };
  }

  #runStateless(handler: StatelessHandler, req: Parameters<StatelessHandler>[0], flow: Flow): ReturnType<StatelessHandler> {
    try {
      return handler(req, flow);
    } catch (err) {
      this.log.error({ err, method: req.method, callId: req.callId }, 'sip stateless handler failed');
      return undefined; // the ordinary path answers (500 if its handler fails too)
    }
  }

  #dispatch(req: SipRequest, ctx: ServerCtx): void {
    const inDialog = getTo(req).params.has('tag');
    if (inDialog) {
      const d = this.deps.dialogs.findForRequest(req);
      if (d !== undefined) {
        try {
          d.handleRequest(req, ctx);
        } catch (err) {
          this.#handlerFailed(err, req, ctx);
        }
        return;
      }
    }
    const handler = this.#handlers.get(req.method);
    if (handler !== undefined) {
      this.#runHandler(handler, req, ctx);
      return;
    }
    if (inDialog) ctx.reply(SipStatus.CallTransactionDoesNotExist); // §12.2.2
    else if (req.method === 'OPTIONS') ctx.reply(SipStatus.OK, { headers: { Allow: this.#allow() } }); // §11.2
    else if (KNOWN_METHODS.has(req.method)) ctx.reply(SipStatus.MethodNotAllowed, { headers: { Allow: this.#allow() } }); // §8.2.1
    else ctx.reply(SipStatus.NotImplemented);
  }

  #allow(): string {
    return [...new Set([...BUILTIN_METHODS, ...this.#handlers.keys()])].join(', ');
  }

  /** A handler must send a final response before its promise settles (INVITE may answer later). */
  #runHandler(handler: RequestHandler, req: SipRequest, ctx: ServerCtx): void {
    const done = unnamed((): void => {
      if (ctx.finalSent || req.method === 'INVITE' || ctx.aborted) return;
      this.log.warn({ method: req.method }, 'sip handler settled without a final response');
      this.#safeReply(ctx, SipStatus.ServerInternalError);
    });
    try {
      const r = handler(req, ctx);
      if (r instanceof Promise) r.then(done, (err: unknown) => this.#handlerFailed(err, req, ctx));
      else done();
    } catch (err) {
      this.#handlerFailed(err, req, ctx);
    }
  }

  #handlerFailed(err: unknown, req: SipRequest, ctx: ServerCtx): void {
    // A reply racing a CANCEL or close is expected, not a bug.
    if (ctx.aborted && err instanceof SipStackError && err.code === 'SIP_ERR_INVALID_STATE') return;
    this.log.error({ err, method: req.method, callId: req.headers.get('Call-ID') }, 'sip request handler failed');
    this.#safeReply(ctx, SipStatus.ServerInternalError);
  }

  #safeReply(ctx: ServerCtx, status: number): void {
    if (!ctx.finalSent && !ctx.aborted) ctx.tx.respond(ctx.buildResponse(status));
  }

  /** RFC 3261 §9.2: 200 to the CANCEL (same To-tag as the INVITE's answers), 487 to the INVITE. */
  #onCancel(cancel: SipRequest, sink: TransactionSink & { tx?: ServerTransaction }): void {
    const invite = this.deps.layer.matchCancelTarget(cancel);
    const tx = this.deps.layer.startServer(cancel, sink, { onTimeout: () => {}, onTransportError: () => {}, onTerminated: () => {} });
    sink.tx = tx;
    const ictx = invite === undefined ? undefined : this.#inviteCtx.get(invite);
    if (ictx === undefined) {
      tx.respond(createResponse(cancel, SipStatus.CallTransactionDoesNotExist));
      return;
    }
    tx.respond(createResponse(cancel, SipStatus.OK, undefined, { toTag: ictx.toTag }));
    ictx.cancel();
  }

  #onAck(ack: SipRequest): void {
    this.deps.dialogs.findForRequest(ack)?.handleAck(ack);
  }

  #accept(ctx: ServerCtx, opts: AcceptOptions): Dialog {
    const req = ctx.request;
    const status = opts.status ?? SipStatus.OK;
    if ((req.method !== 'INVITE' && req.method !== 'SUBSCRIBE') || status < 200 || status >= 300) {
      throw new SipStackError('SIP_ERR_BAD_ARGUMENT', 'accept() is for a 2xx to INVITE or SUBSCRIBE');
    }
    if (ctx.finalSent) throw new SipStackError('SIP_ERR_INVALID_STATE', 'final response already sent');
    const headers = headerEntries(opts.headers);
    if (!headers.some(([n]) => n.toLowerCase() === 'contact')) {
      headers.push(['Contact', contactFor(this.deps.local, getTo(req).uri.user, ctx.flow.transport)]);
    }
    const res = ctx.buildResponse(status, { ...opts, headers });
    const kind = req.method === 'INVITE' ? 'invite' : 'subscribe';
    const dialog = this.deps.createDialog(createUasDialogState(req, ctx.toTag, kind), ctx.flow);
    ctx.send(res);
    if (kind === 'invite') dialog.awaitAck(() => ctx.tx.respond(res), ctx.flow.transport === 'tcp');
    return dialog;
  }
}

/** Whether `data` begins with the bytes of `prefix`. */
function startsWith(data: Buffer, prefix: Buffer): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}
