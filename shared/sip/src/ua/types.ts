import type { Clock } from '../clock.ts';
import type { Dialog } from '../dialog/dialog.ts';
import type { HeaderInput } from '../message/header-input.ts';
import type { ReplyOptions, RequestContext } from './request-context.ts';
import type { SipRequest, SipResponse, SipUri } from '../message/types.ts';
import type { TimerConfig } from '../transaction/timers.ts';
import type { Flow, SendTarget, TransportName } from '../transport/flow.ts';
import type { SipLogger } from '../transport/logger.ts';
import type { PortSharing } from '../transport/port-sharing.ts';

export type { HeaderInput } from '../message/header-input.ts';
export type { ReplyOptions, RequestContext } from './request-context.ts';

export interface SipStackOptions {
  /** Listen address; also the address written in Via/Contact unless `publicAddress` is given. */
  host: string;
  /** 0 (default) = a free port chosen by the OS; UDP and TCP share it. */
  port?: number;
  transports?: readonly TransportName[];
  /**
   * Address devices use to reach us, written in Via/Contact, when `host` is a wildcard or we sit behind
   * NAT. Without `port`: the port actually bound.
   */
  publicAddress?: { host: string; port?: number };
  timers?: Partial<TimerConfig>;
  clock?: Clock;
  logger?: SipLogger;
  /** Sent as User-Agent in requests and Server in responses. */
  userAgent?: string;
  limits?: {
    maxMessageBytes?: number;
    /** SO_RCVBUF of the UDP socket (the kernel caps it at net.core.rmem_max); default: the OS default. */
    udpReceiveBufferBytes?: number;
    maxTcpConnections?: number;
    /** Accepted TCP connections per source address; default 64. */
    maxTcpConnectionsPerIp?: number;
    /** No complete message on a TCP connection for this long: closed; default 5 min. */
    tcpIdleTimeoutMs?: number;
    /** First byte to last of one TCP message; default 10 s. */
    tcpMessageTimeoutMs?: number;
    tcpConnectTimeoutMs?: number;
    /**
     * Non-INVITE requests answered over UDP whose final is kept for retransmissions (RFC 3261 §17.2.2,
     * Timer J = 32 s); past it the oldest is forgotten first. Default 131,072 (4,000 a second for 32 s).
     */
    maxCompletedFinals?: number;
  };
  /** Reply to NAT'd UDP clients at their source port even without `;rport` (RFC 3581 behaviour forced). */
  forceRport?: boolean;
  /** The port is shared with other instances on the host (transport/port-sharing.ts). */
  portSharing?: PortSharing;
}

export interface DigestAuth {
  username: string;
  password: string;
}

export interface OutgoingRequestSpec {
  method: string;
  uri: string | SipUri;
  /** From/To/Call-ID/CSeq/Contact may be given here; missing ones get RFC 3261 §8.1.1 defaults. */
  headers?: HeaderInput;
  body?: Buffer | string;
  contentType?: string;
  /** Where to send: a remembered flow (NAT) or host/port/transport; default from Route / Request-URI (§8.1.2). */
  target?: SendTarget;
}

export interface RequestOptions {
  /** Answer one 401/407 with digest credentials (RFC 3261 §22.2). */
  auth?: DigestAuth;
  onProvisional?: (res: SipResponse) => void;
}

export interface UacOptions extends RequestOptions {
  /** Aborting sends CANCEL (after the first provisional, RFC 3261 §9.1); the promise rejects with SIP_ERR_CANCELLED. */
  signal?: AbortSignal;
}

export interface UacResult {
  dialog: Dialog;
  response: SipResponse;
}

export interface AcceptOptions extends ReplyOptions {
  /** 2xx status, default 200. */
  status?: number;
}

/** What a request handler gets besides the request: an out-of-dialog INVITE/SUBSCRIBE can also be accepted. */
export interface ServerContext extends RequestContext {
  /** INVITE / SUBSCRIBE only: sends a 2xx with our Contact and returns the new dialog. */
  accept(opts?: AcceptOptions): Dialog;
}

export type RequestHandler = (req: SipRequest, ctx: ServerContext) => unknown;

/**
 * Stateless UAS (RFC 3261 §8.2.7) for requests that are safe to handle again when retransmitted
 * (a GB28181 Keepalive): runs before the transaction layer, synchronously. Return a final status to
 * answer statelessly — no transaction, no timers, nothing retained; a retransmission is simply handled
 * again — or undefined to pass the request to the method's ordinary handler. The decision must be a
 * pure function of the request, so that its retransmissions are treated the same way.
 */
export type StatelessHandler = (req: StatelessRequest, flow: Flow) => number | StatelessAnswer | undefined;

export interface StatelessOptions {
  /**
   * A test on a UDP datagram's bytes (the method's request, as received), cheaper than the peek the
   * handler needs, saying that the ordinary handler may answer it: true sends the datagram straight to
   * the parser and the ordinary handler, without the peek and without running the stateless handler
   * (issue 11: the answer to a REGISTER challenge, peeked and declined on every registration). Only for
   * requests the stateless handler declines, or answers as the ordinary handler would: a wrong true
   * costs a transaction, never another answer.
   */
  readonly ordinary?: (data: Buffer) => boolean;
}

/** A stateless final answer with extra headers (e.g. 503 with Retry-After, RFC 3261 §21.5.4, §20.33). */
export interface StatelessAnswer {
  readonly status: number;
  /** Added after CSeq; names and values must be valid header text (the caller's constants). */
  readonly headers: readonly (readonly [string, string])[];
}

/**
 * What a stateless handler sees. Plain UDP requests are answered from the datagram's bytes without a
 * full parse (transport/datagram-shortcut.ts: what is only copied into the answer is not syntax-checked),
 * others after parsing: the handler cannot tell.
 */
export interface StatelessRequest {
  readonly method: string;
  readonly body: Buffer;
  /** Raw header values. */
  readonly callId: string;
  readonly from: string;
  /** Raw Content-Type value, undefined when absent. */
  readonly contentType: string | undefined;
  /** The first Via header line, raw (it may hold several hops): who the request came through. */
  readonly topVia: string;
  /**
   * Text holding the body as latin1 (one char per byte) from `bodyStart` to its end: the whole
   * datagram on the shortcut (already decoded there), the body alone otherwise. For handlers that scan
   * the body as text, without decoding the bytes again.
   */
  readonly text: string;
  readonly bodyStart: number;
  /**
   * Whether the request carries a header of this name (full name, case-insensitive). Scans the header
   * section on the shortcut: for rare decisions (overload shedding), not for every request.
   */
  hasHeader(name: string): boolean;
  /**
   * The first header of this name (full name, case-insensitive), its value with surrounding LWS
   * trimmed; undefined when absent. Scans the header section on the shortcut, as hasHeader.
   */
  header(name: string): string | undefined;
}
