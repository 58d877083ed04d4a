import { systemClock, type Clock } from '../clock.ts';
import { Dialog, type DialogHost } from '../dialog/dialog.ts';
import type { DialogState } from '../dialog/dialog-state.ts';
import { DialogRegistry } from '../dialog/registry.ts';
import type { QueueProbe } from '../overload/queue-probe.ts';
import { getCSeq } from '../message/accessors.ts';
import type { SipRequest, SipResponse, SipUri } from '../message/types.ts';
import { parseUri } from '../message/uri.ts';
import { TransactionLayer } from '../transaction/layer.ts';
import { resolveTimers, type TimerConfig } from '../transaction/timers.ts';
import { channels, publish, type TransportCounters } from '../transport/diagnostics.ts';
import type { Flow, HostTarget, SendTarget, TransportName } from '../transport/flow.ts';
import { silentLogger, type SipLogger } from '../transport/logger.ts';
import { SipTransport } from '../transport/transport.ts';
import { OutgoingRequest, type ClientDeps, type SendOptions } from './client.ts';
import { SipStackError, stackClosedError } from '../errors.ts';
import { addVia, buildRequest, contactFor, resolveTarget, uriTarget, type LocalIdentity } from './outbound.ts';
import { RequestDispatcher } from './server.ts';
import type { OutgoingRequestSpec, RequestHandler, RequestOptions, SipStackOptions, StatelessHandler, StatelessOptions, UacOptions, UacResult } from './types.ts';
import { runUac } from './uac.ts';

interface PreparedRequest {
  req: SipRequest;
  target: SendTarget;
  fallback?: HostTarget;
}

export interface SipStackStats extends TransportCounters {
  clientTransactions: number;
  serverTransactions: number;
  dialogs: number;
  pendingRequests: number;
  unmatchedResponses: number;
  /** Completed non-INVITE finals dropped before Timer J because their table was full (limits.maxCompletedFinals). */
  completedFinalsEvicted: number;
}

/**
 * The user agent: handlers per method for incoming requests, `request()` for outgoing ones,
 * `createUAC()` for dialogs. Everything below (transport, transactions, dialogs) is owned here and
 * torn down by `close()`.
 */
export class SipStack {
  readonly #dialogs = new DialogRegistry();
  readonly #pending = new Set<OutgoingRequest>();
  readonly #layer: TransactionLayer;
  readonly #server: RequestDispatcher;
  readonly #local: LocalIdentity;
  readonly #client: ClientDeps;
  readonly #dialogHost: DialogHost;
  #unmatched = 0;
  #closing: Promise<void> | undefined;

  private constructor(
    private readonly transport: SipTransport,
    readonly clock: Clock,
    readonly timers: TimerConfig,
    private readonly log: SipLogger,
    opts: SipStackOptions,
    transports: readonly TransportName[],
  ) {
    // non-INVITE finals over UDP kept as their bytes for Timer J (completed-finals.ts), sent and resent by the transport
    this.#layer = new TransactionLayer(clock, timers, { sender: transport.finalSender, max: opts.limits?.maxCompletedFinals });
    this.#local = {
      host: opts.publicAddress?.host ?? opts.host,
      port: opts.publicAddress?.port ?? transport.port,
      userAgent: opts.userAgent,
      transports,
    };
    this.#client = { transport, layer: this.#layer, local: this.#local, clock, timers, log };
    this.#dialogHost = {
      clock,
      timers,
      log,
      send: (dialog, req) => {
        const { target, fallback } = resolveTarget(req, dialog.flow, transports);
        return this.#start(req, target, fallback, {}).done.then((r) => r.response);
      },
      sendAck: (dialog, ack) => {
        const { target, fallback } = resolveTarget(ack, dialog.flow, transports);
        if (!ack.headers.has('Via')) addVia(ack, this.#local, target.transport);
        transport.send(ack, target, fallback).catch((err: unknown) => log.debug({ err, callId: dialog.callId }, 'sip ACK not sent'));
      },
      contact: (dialog) => contactFor(this.#local, dialog.local.uri.user, dialog.flow?.transport ?? 'udp'),
      release: (dialog) => this.#dialogs.remove(dialog),
    };
    this.#server = new RequestDispatcher({
      transport,
      forceRport: opts.forceRport === true,
      layer: this.#layer,
      dialogs: this.#dialogs,
      local: this.#local,
      log,
      createDialog: (state, flow) => this.#createDialog(state, flow),
    });
    transport.onMessage = (msg, flow) => (msg.type === 'response' ? this.#onResponse(msg) : this.#server.handleRequest(msg, flow));
    transport.onDatagramShortcut = (data, flow) => this.#server.answerDatagram(data, flow);
  }

  /** @internal use createSipStack */
  static async start(opts: SipStackOptions): Promise<SipStack> {
    const transports = opts.transports ?? ['udp', 'tcp'];
    const log = (opts.logger ?? silentLogger).child({ module: 'sip' });
    const transport = await SipTransport.listen({
      host: opts.host,
      port: opts.port ?? 0,
      transports,
      maxMessageBytes: opts.limits?.maxMessageBytes,
      udpReceiveBufferBytes: opts.limits?.udpReceiveBufferBytes,
      maxTcpConnections: opts.limits?.maxTcpConnections,
      maxTcpConnectionsPerIp: opts.limits?.maxTcpConnectionsPerIp,
      tcpIdleTimeoutMs: opts.limits?.tcpIdleTimeoutMs,
      tcpMessageTimeoutMs: opts.limits?.tcpMessageTimeoutMs,
      tcpConnectTimeoutMs: opts.limits?.tcpConnectTimeoutMs,
      forceRport: opts.forceRport,
      logger: log,
      portSharing: opts.portSharing,
    });
    return new SipStack(transport, opts.clock ?? systemClock, resolveTimers(opts.timers), log, opts, transports);
  }

  get host(): string {
    return this.#local.host;
  }

  /** The port actually bound (useful with port 0). */
  get port(): number {
    return this.transport.port;
  }

  /**
   * Resizes the UDP socket's receive buffer (SO_RCVBUF), e.g. smaller while overloaded so that the
   * kernel drops what the process could not answer before the sender's retransmission timer anyway.
   */
  setUdpReceiveBuffer(bytes: number): void {
    this.transport.setUdpReceiveBuffer(bytes);
  }

  /** A probe of the UDP socket's queueing delay, for the REGISTER shedder (SipTransport.openQueueProbe). */
  openQueueProbe(): Promise<QueueProbe | null> {
    return this.transport.openQueueProbe();
  }

  /** Our Contact value for `user` (e.g. the platform id), e.g. for a REGISTER 200 or a custom request. */
  contact(user: string | null = null, transport: TransportName = 'udp'): string {
    return contactFor(this.#local, user, transport);
  }

  /** One handler per method; a second registration for the same method is a programming error. */
  onRequest(method: string, handler: RequestHandler): this {
    this.#server.register(method, handler);
    return this;
  }

  /**
   * A stateless answer (RFC 3261 §8.2.7) tried before the transaction layer for `method`; when it
   * returns undefined the request goes to the onRequest handler as usual. See StatelessHandler.
   */
  onStatelessRequest(method: string, handler: StatelessHandler, opts?: StatelessOptions): this {
    this.#server.registerStateless(method, handler, opts);
    return this;
  }

  /** Sends an out-of-dialog request; resolves with the final response (any status). */
  async request(spec: OutgoingRequestSpec, opts: RequestOptions = {}): Promise<SipResponse> {
    // INVITE needs the dialog machinery (2xx ACK, BYE); ACK has no transaction; CANCEL goes by signal.
    if (spec.method === 'INVITE' || spec.method === 'ACK' || spec.method === 'CANCEL') {
      throw new SipStackError('SIP_ERR_BAD_ARGUMENT', `${spec.method} is sent with createUAC()`);
    }
    const { req, target, fallback } = this.#prepare(spec);
    const r = await this.#start(req, target, fallback, opts).done;
    return r.response;
  }

  /** INVITE (default) or SUBSCRIBE that creates a dialog; see runUac. */
  createUAC(spec: Omit<OutgoingRequestSpec, 'method'> & { method?: 'INVITE' | 'SUBSCRIBE' }, opts: UacOptions = {}): Promise<UacResult> {
    const method = spec.method ?? 'INVITE';
    let prepared: PreparedRequest;
    try {
      prepared = this.#prepare({ ...spec, method });
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const deps = {
      start: (r: SipRequest, t: SendTarget, f: HostTarget | undefined, o: SendOptions) => this.#start(r, t, f, o),
      createDialog: (state: DialogState, flow: Flow) => this.#createDialog(state, flow),
      log: this.log,
    };
    return runUac(deps, prepared.req, prepared.target, prepared.fallback, method === 'INVITE' ? 'invite' : 'subscribe', opts);
  }

  /**
   * A dialog rebuilt from a saved RFC 3261 §12 state (SPEC RECOVER: another instance set it up and crashed),
   * reaching the peer over `flow`. In-dialog requests continue its local CSeq (§12.2.1.1), so a BYE built
   * here is one the peer matches to the dialog it still holds.
   */
  restoreDialog(state: DialogState, flow: Flow): Dialog {
    if (this.#closing !== undefined) throw stackClosedError();
    return this.#createDialog({ ...state }, flow);
  }

  stats(): SipStackStats {
    const size = this.#layer.size;
    return {
      ...this.transport.stats(),
      clientTransactions: size.clients,
      serverTransactions: size.servers,
      dialogs: this.#dialogs.size,
      pendingRequests: this.#pending.size,
      unmatchedResponses: this.#unmatched,
      completedFinalsEvicted: this.#layer.completedEvicted,
    };
  }

  /** Idempotent: rejects pending requests, aborts handlers, ends dialogs (no BYE), stops timers, closes sockets. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const err = stackClosedError();
      for (const out of [...this.#pending]) out.abort(err);
      this.#server.close(err);
      for (const d of this.#dialogs.all()) d.closeSilently();
      this.#layer.close();
      await this.transport.close();
    })();
    return this.#closing;
  }

  // ---- outgoing ----

  #prepare(spec: OutgoingRequestSpec): PreparedRequest {
    if (this.#closing !== undefined) throw stackClosedError();
    const transports = this.#local.transports;
    let uri: SipUri;
    try {
      uri = typeof spec.uri === 'string' ? parseUri(spec.uri) : spec.uri;
    } catch (err) {
      throw new SipStackError('SIP_ERR_BAD_ARGUMENT', 'invalid Request-URI', { cause: err });
    }
    const guess = spec.target?.transport ?? uriTarget(uri, transports).transport;
    const req = buildRequest({ ...spec, uri }, this.#local, guess);
    return { req, ...resolveTarget(req, spec.target, transports) };
  }

  #start(req: SipRequest, target: SendTarget, fallback: HostTarget | undefined, opts: SendOptions): OutgoingRequest {
    const out = new OutgoingRequest(this.#client, req, target, fallback, opts, (o) => this.#pending.delete(o));
    if (this.#closing !== undefined) {
      out.abort(stackClosedError());
      return out;
    }
    if (this.#local.userAgent !== undefined && !req.headers.has('User-Agent')) req.headers.append('User-Agent', this.#local.userAgent);
    this.#pending.add(out);
    out.start();
    return out;
  }

  #createDialog(state: DialogState, flow: Flow): Dialog {
    const d = new Dialog(state, this.#dialogHost, flow);
    this.#dialogs.add(d);
    return d;
  }

  // ---- incoming ----

  #onResponse(res: SipResponse): void {
    const tx = this.#layer.matchResponse(res);
    if (tx !== undefined) {
      tx.receiveResponse(res);
      return;
    }
    // A 2xx retransmission after the INVITE transaction ended: re-send the ACK (§13.2.2.4).
    if (res.status >= 200 && res.status < 300 && getCSeq(res).method === 'INVITE') {
      const d = this.#dialogs.findForResponse(res);
      if (d !== undefined) {
        d.resendAck();
        return;
      }
    }
    this.#unmatched++;
    publish(channels.dropped, { flow: this.transport.flowOf(res), reason: 'unmatched-response' });
  }
}

/**
 * Binds UDP+TCP on host:port (port 0 → OS-chosen, see `stack.port`) and returns the running stack.
 * A registrar answering REGISTER with a digest challenge, then 200:
 *
 *   const stack = await createSipStack({ host: '127.0.0.1', port: 5060 });
 *   const digest = new DigestServer({ realm: '3402000000', secret });
 *   stack.onRequest('REGISTER', (req, ctx) => {
 *     const auth = req.headers.get('Authorization');
 *     const ok = auth !== undefined && digest.verify(auth, { method: 'REGISTER', password, now: Date.now() }).ok;
 *     if (!ok) return ctx.reply(401, { headers: { 'WWW-Authenticate': digest.challengeHeader(Date.now()) } });
 *     devices.set(deviceId, ctx.flow); // reach the device later through its NAT binding
 *     return ctx.reply(200, { headers: { Expires: req.headers.get('Expires') ?? '3600' } });
 *   });
 */
export function createSipStack(opts: SipStackOptions): Promise<SipStack> {
  return SipStack.start(opts);
}
