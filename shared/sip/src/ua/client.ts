import { buildAuthorization } from '../auth/digest.client.ts';
import type { Clock, TimerHandle } from '../clock.ts';
import { SipError, SipStackError, SipTimeoutError, SipTransportError } from '../errors.ts';
import { getCSeq } from '../message/accessors.ts';
import type { SipRequest, SipResponse } from '../message/types.ts';
import { SipStatus } from '../status.ts';
import type { ClientTransaction, TransactionLayer } from '../transaction/layer.ts';
import type { TimerConfig } from '../transaction/timers.ts';
import { channels, publish } from '../transport/diagnostics.ts';
import { flowKey, type Flow, type HostTarget, type SendTarget } from '../transport/flow.ts';
import type { SipLogger } from '../transport/logger.ts';
import type { SipTransport } from '../transport/transport.ts';
import { addVia, type LocalIdentity } from './outbound.ts';
import type { DigestAuth } from './types.ts';

export interface ClientDeps {
  transport: SipTransport;
  layer: TransactionLayer;
  local: LocalIdentity;
  clock: Clock;
  timers: TimerConfig;
  log: SipLogger;
}

export interface SendOptions {
  auth?: DigestAuth | undefined;
  onProvisional?: ((res: SipResponse) => void) | undefined;
  /** Responses after the final one: 2xx retransmissions while the INVITE is Accepted (RFC 6026). */
  onLateResponse?: ((res: SipResponse) => void) | undefined;
}

export interface ClientResult {
  response: SipResponse;
  /** The request that got `response` (after an auth retry: the retried one). */
  request: SipRequest;
  /** Where it went / came back from: the dialog's flow if it creates one. */
  flow: Flow;
}

/**
 * One outgoing request as the UA core sees it: one client transaction per attempt (a digest retry
 * is a new transaction, RFC 3261 §22.2), settled once with the final response or a typed error.
 */
export class OutgoingRequest {
  readonly done: Promise<ClientResult>;
  #resolve!: (r: ClientResult) => void;
  #reject!: (e: Error) => void;
  #request: SipRequest;
  #tx: ClientTransaction | undefined;
  #sentFlow: Flow | undefined;
  #settled = false;
  #retried = false;
  #provisional = false;
  #cancelWanted = false;
  #cancelTimer: TimerHandle | undefined;

  constructor(
    private readonly deps: ClientDeps,
    request: SipRequest,
    private readonly target: SendTarget,
    private readonly fallback: HostTarget | undefined,
    private readonly opts: SendOptions,
    private readonly onSettled: (o: OutgoingRequest) => void,
  ) {
    this.#request = request;
    this.done = new Promise<ClientResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get request(): SipRequest {
    return this.#request;
  }

  get settled(): boolean {
    return this.#settled;
  }

  /** The flow the request actually went out on (TCP: the connection), falling back to the target. */
  get flow(): SendTarget {
    return this.#sentFlow ?? this.target;
  }

  start(): void {
    const { transport, layer, local } = this.deps;
    const req = this.#request;
    if (!req.headers.has('Via')) addVia(req, local, this.target.transport);
    const tx = layer.startClient(
      req,
      {
        reliable: this.target.transport === 'tcp',
        send: (msg) => {
          transport.send(msg, this.#sentFlow ?? this.target, this.fallback).then(
            (flow) => {
              this.#sentFlow ??= flow;
            },
            (err: unknown) => this.#tx?.transportError(err instanceof Error ? err : new Error(String(err))),
          );
        },
      },
      {
        onResponse: (res) => this.#onResponse(res),
        onTimeout: () => {
          publish(channels.transactionTimeout, { method: req.method, callId: req.headers.get('Call-ID'), target: flowKey(this.target) });
          this.#fail(new SipTimeoutError(req.method, flowKey(this.target)));
        },
        onTransportError: (err) => this.#fail(new SipTransportError(flowKey(this.target), err)),
        onTerminated: () => {},
      },
    );
    this.#tx = tx;
  }

  #onResponse(res: SipResponse): void {
    if (this.#settled) {
      this.opts.onLateResponse?.(res);
      return;
    }
    if (res.status < 200) {
      this.#provisional = true;
      if (this.#cancelWanted) this.#sendCancel();
      this.opts.onProvisional?.(res);
      return;
    }
    if ((res.status === SipStatus.Unauthorized || res.status === SipStatus.ProxyAuthenticationRequired) && this.#retryWithAuth(res)) return;
    // Prefer the path we sent on (the device's registered flow / our TCP connection) over the
    // response's source: some devices answer from another socket than the one they listen on.
    const flow = this.#sentFlow ?? this.deps.transport.flowOf(res) ?? toFlow(this.target);
    this.#settle();
    this.#resolve({ response: res, request: this.#request, flow });
  }

  /** RFC 3261 §22.2: same Call-ID and From tag, CSeq + 1, credentials for the first Digest challenge. */
  #retryWithAuth(res: SipResponse): boolean {
    const auth = this.opts.auth;
    if (auth === undefined || this.#retried || this.#cancelWanted) return false;
    const proxy = res.status === SipStatus.ProxyAuthenticationRequired;
    const challenge = res.headers.getLines(proxy ? 'Proxy-Authenticate' : 'WWW-Authenticate').find((c) => /^\s*digest\s/i.test(c));
    if (challenge === undefined) return false;
    const prev = this.#request;
    let credentials: string;
    try {
      credentials = buildAuthorization(challenge, { username: auth.username, password: auth.password, method: prev.method, uri: prev.rawUri });
    } catch (err) {
      if (!(err instanceof SipError)) throw err;
      this.deps.log.warn({ err, status: res.status }, 'sip digest challenge not answerable');
      return false;
    }
    const h = prev.headers.clone();
    h.delete('Via');
    h.delete(proxy ? 'Proxy-Authorization' : 'Authorization');
    h.set('CSeq', `${getCSeq(prev).seq + 1} ${prev.method}`);
    h.append(proxy ? 'Proxy-Authorization' : 'Authorization', credentials);
    this.#retried = true;
    this.#provisional = false;
    this.#request = { ...prev, headers: h };
    this.start();
    return true;
  }

  /** RFC 3261 §9.1: CANCEL only after a provisional; until then it is remembered. INVITE only. */
  cancel(): void {
    if (this.#settled || this.#cancelWanted || this.#request.method !== 'INVITE') return;
    this.#cancelWanted = true;
    if (this.#provisional) this.#sendCancel();
  }

  #sendCancel(): void {
    const inv = this.#request;
    const h = inv.headers.clone();
    const keep = new Set(['via', 'route', 'from', 'to', 'call-id', 'max-forwards']);
    for (const [name] of inv.headers.entries()) if (!keep.has(name.toLowerCase())) h.delete(name);
    // §9.1: single Via equal to the INVITE's top Via, so the UAS matches it to the INVITE (§9.2).
    const vias = inv.headers.getLines('Via');
    h.delete('Via');
    h.prepend('Via', vias[0] ?? '');
    h.append('CSeq', `${getCSeq(inv).seq} CANCEL`);
    h.append('Content-Length', '0');
    const cancel: SipRequest = { type: 'request', method: 'CANCEL', uri: inv.uri, rawUri: inv.rawUri, headers: h, body: Buffer.alloc(0) };
    const out = new OutgoingRequest(this.deps, cancel, this.flow, this.fallback, {}, () => {});
    out.start();
    out.done.catch((err: unknown) => this.deps.log.debug({ err }, 'sip CANCEL failed'));
    // §9.1: no final response within 64*T1 of the CANCEL → consider the INVITE cancelled.
    this.#cancelTimer = this.deps.clock.setTimeout(() => {
      if (this.#settled) return;
      this.#tx?.terminate();
      this.#fail(new SipStackError('SIP_ERR_CANCELLED', 'INVITE cancelled without final response'));
    }, 64 * this.deps.timers.T1);
  }

  get cancelled(): boolean {
    return this.#cancelWanted;
  }

  #fail(err: Error): void {
    if (this.#settled) return;
    this.#settle();
    this.#reject(err);
  }

  #settle(): void {
    this.#settled = true;
    if (this.#cancelTimer !== undefined) this.deps.clock.clearTimeout(this.#cancelTimer);
    this.onSettled(this);
  }

  /** Stack close: settle with `err`, stop the transaction. */
  abort(err: Error): void {
    this.#tx?.terminate();
    this.#fail(err);
  }
}

function toFlow(t: SendTarget): Flow {
  if ('remoteAddress' in t) return t;
  return { transport: t.transport, remoteAddress: t.host, remotePort: t.port, localAddress: '', localPort: 0 };
}
