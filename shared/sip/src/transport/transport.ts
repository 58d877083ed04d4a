import { SipParseError } from '../errors.ts';
import { getCSeq, getTopVia } from '../message/accessors.ts';
import { SipHeaders } from '../message/headers.ts';
import { parseSipMessage } from '../message/parse.ts';
import { serializeSipMessage } from '../message/serialize.ts';
import { detachString } from '../message/detach.ts';
import type { SipMessage, SipResponse } from '../message/types.ts';
import { channels, newCounters, publish, type DropReason, type TransportCounters } from './diagnostics.ts';
import { isFlow, targetHost, targetPort, type Flow, type HostTarget, type SendTarget, type TransportName } from './flow.ts';
import { silentLogger, type SipLogger } from './logger.ts';
import { badRequestFor, checkRequiredHeaders, MessageSerializer, rewriteTopVia, tooLargeResponse } from './inbound.ts';
import { DEFAULT_MAX_STREAM_MESSAGE_BYTES } from '../message/framer.ts';
import { TcpTransport, type TcpCloseReason, type TcpConnection, type TcpLimits } from './tcp.ts';
import { UdpSocket } from './udp.ts';
import type { PortSharing } from './port-sharing.ts';
import { QueueProbe } from '../overload/queue-probe.ts';
import { DEFAULT_SIP_PORT, responseDestination, stampReceived } from './via-stamp.ts';

export const MAX_UDP_MESSAGE_BYTES = 65_535; // IPv4 datagram ceiling; GB28181 RecordInfo answers reach ~8 KB
/** One SIP message on either transport (SPEC SEC-3); larger is refused (513 where answerable). */
export const DEFAULT_MAX_MESSAGE_BYTES = DEFAULT_MAX_STREAM_MESSAGE_BYTES;
export const DEFAULT_MAX_TCP_CONNECTIONS = 10_000;
/** Devices behind one NAT address share it; a single host needs one or two (SPEC SEC-3). */
export const DEFAULT_MAX_TCP_CONNECTIONS_PER_IP = 64;
/** No complete message for this long: closed. A GB28181 device sends a keepalive every 60 s by default. */
export const DEFAULT_TCP_IDLE_TIMEOUT_MS = 5 * 60_000;
/** From the first byte of a message to its last (SPEC SEC-3). */
export const DEFAULT_TCP_MESSAGE_TIMEOUT_MS = 10_000;
export const DEFAULT_TCP_CONNECT_TIMEOUT_MS = 5_000;

export interface TransportOptions {
  host: string;
  /** 0 = any free port; UDP and TCP always share the port. */
  port: number;
  transports: readonly TransportName[];
  maxMessageBytes?: number;
  /** SO_RCVBUF for the UDP socket; undefined = OS default. */
  udpReceiveBufferBytes?: number | undefined;
  maxTcpConnections?: number;
  maxTcpConnectionsPerIp?: number;
  tcpIdleTimeoutMs?: number;
  tcpMessageTimeoutMs?: number;
  tcpConnectTimeoutMs?: number;
  /** Treat every request as if it carried `;rport` (NAT'd devices that forget it). */
  forceRport?: boolean;
  logger?: SipLogger;
  /** The port is shared with other instances on the host (port-sharing.ts); both transports must be on. */
  portSharing?: PortSharing | undefined;
}

export type InboundHandler = (msg: SipMessage, flow: Flow) => void;

/**
 * Answers a datagram statelessly from its bytes, or returns undefined to have it parsed (then `data`
 * must be as received). The answer may be a view of `data` overwritten: the datagram is not used again.
 */
export type DatagramShortcut = (data: Buffer, flow: Flow) => { data: Uint8Array; host: string; port: number } | undefined;

export interface SendOptions {
  /** Sent once and never retransmitted (a stateless response): its bytes are not cached. */
  readonly once?: boolean;
  /** To a TCP flow: on its connection or not at all (a caller's pool reconnects itself), never dialled. */
  readonly connectionOnly?: boolean;
}

const EMPTY_BODY = Buffer.alloc(0);

/** A final response kept for Timer J (SipTransport.finalSender): its bytes and where they go. */
export interface RetainedFinal {
  readonly data: Buffer;
  readonly host: string;
  readonly port: number;
}

const BIND_ATTEMPTS = 8; // port 0: TCP picks, UDP may find it taken; retry with a fresh pick

/**
 * RFC 3261 §18: UDP and TCP on one host:port, inbound validation (malformed input answered with
 * 400 when possible, otherwise dropped and counted — never thrown), Via `received`/`rport`, and
 * outbound routing of requests (to a flow or a host) and responses (§18.2.2).
 */
export class SipTransport {
  readonly #counters = newCounters();
  readonly #log: SipLogger;
  readonly #serializer = new MessageSerializer();
  readonly #flows = new WeakMap<SipMessage, Flow>();
  #udp: UdpSocket | undefined;
  #tcp: TcpTransport | undefined;
  #closed = false;
  #onMessage: InboundHandler = () => {};
  /** openTcp() callers told when their connection closes, by connection id. */
  readonly #closeWatchers = new Map<number, (reason: TcpCloseReason) => void>();
  #shortcut: DatagramShortcut | undefined;
  #lastRejectLog = 0;
  /** The queueing-delay probe of the UDP socket, and where its datagrams come from (openQueueProbe). */
  #probe: QueueProbe | undefined;
  #probeFrom = { address: '', port: -1 };

  private constructor(private readonly opts: TransportOptions) {
    this.#log = opts.logger ?? silentLogger;
  }

  static async listen(opts: TransportOptions): Promise<SipTransport> {
    const t = new SipTransport(opts);
    await t.#bind();
    return t;
  }

  /** The upper layer's entry point; set once by the stack. */
  set onMessage(handler: InboundHandler) {
    this.#onMessage = handler;
  }

  get port(): number {
    return (this.#tcp?.address.port ?? this.#udp?.address.port) as number;
  }

  get host(): string {
    return this.opts.host;
  }

  /** Set once by the stack: tried on every UDP datagram before it is parsed. */
  set onDatagramShortcut(shortcut: DatagramShortcut) {
    this.#shortcut = shortcut;
  }

  /**
   * A new outbound TCP connection (not one reused from another caller), for a caller that keeps its own
   * pool (the SIP edge's links to shards); `onClose` is called once when it closes. Messages arriving on it
   * go to onMessage like any other. Resolves with its flow (send to it with `connectionOnly`).
   */
  async openTcp(host: string, port: number, onClose: (reason: TcpCloseReason) => void): Promise<Flow> {
    const tcp = this.#tcp;
    if (tcp === undefined) throw new Error('TCP transport not enabled');
    if (this.#closed) throw new Error('SIP transport closed');
    const conn = await tcp.open(host, port);
    if (conn.closed) {
      onClose('closed');
      return conn.flow;
    }
    this.#closeWatchers.set(conn.id, onClose);
    return conn.flow;
  }

  /** The flow an inbound message arrived on. */
  flowOf(msg: SipMessage): Flow | undefined {
    return this.#flows.get(msg);
  }

  supports(t: TransportName): boolean {
    return t === 'udp' ? this.#udp !== undefined : this.#tcp !== undefined;
  }

  stats(): Readonly<TransportCounters> {
    return { ...this.#counters, tcpOpen: this.#tcp?.size ?? 0 };
  }

  async #bind(): Promise<void> {
    const { host, transports } = this.opts;
    const wantUdp = transports.includes('udp');
    const wantTcp = transports.includes('tcp');
    const limits: TcpLimits = {
      maxConnections: this.opts.maxTcpConnections ?? DEFAULT_MAX_TCP_CONNECTIONS,
      maxConnectionsPerIp: this.opts.maxTcpConnectionsPerIp ?? DEFAULT_MAX_TCP_CONNECTIONS_PER_IP,
      idleTimeoutMs: this.opts.tcpIdleTimeoutMs ?? DEFAULT_TCP_IDLE_TIMEOUT_MS,
      messageTimeoutMs: this.opts.tcpMessageTimeoutMs ?? DEFAULT_TCP_MESSAGE_TIMEOUT_MS,
      maxMessageBytes: this.opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      connectTimeoutMs: this.opts.tcpConnectTimeoutMs ?? DEFAULT_TCP_CONNECT_TIMEOUT_MS,
    };
    const sharing = this.opts.portSharing;
    for (let attempt = 1; ; attempt++) {
      let tcp: TcpTransport | undefined;
      try {
        if (wantTcp) tcp = await TcpTransport.listen(host, this.opts.port, limits, this.#tcpEvents(), sharing);
        const port = tcp?.address.port ?? this.opts.port;
        if (wantUdp) {
          this.#udp = await UdpSocket.bind(host, port, (d, a, p) => this.#onDatagram(d, a, p), (err) => this.#onUdpError(err), this.opts.udpReceiveBufferBytes, sharing);
        }
        this.#tcp = tcp;
        if (sharing?.kind === 'inherited') this.#checkInheritedPorts();
        return;
      } catch (err) {
        await tcp?.close();
        await this.#udp?.close();
        this.#udp = undefined;
        const retry = this.opts.port === 0 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < BIND_ATTEMPTS;
        if (!retry) throw err;
      }
    }
  }

  /**
   * Sockets a launcher opened are bound already: they must be on the port configured (Via, Contact and
   * every device's configuration name it) and on one port for both transports (RFC 3261 §18).
   */
  #checkInheritedPorts(): void {
    const udp = this.#udp?.address.port;
    const tcp = this.#tcp?.address.port;
    const want = this.opts.port;
    if (udp !== undefined && tcp !== undefined && udp !== tcp) throw new Error(`the inherited SIP sockets are on two ports: UDP ${udp}, TCP ${tcp}`);
    const bound = udp ?? tcp;
    if (want !== 0 && bound !== want) throw new Error(`the inherited SIP sockets are bound to port ${bound}, not the configured ${want}`);
  }

  /**
   * A probe of the UDP socket's queueing delay (overload/queue-probe.ts), or null without UDP, or when none
   * of `attempts` probes came back within `waitMs`: on a port shared with other instances the kernel hashes
   * each probe's source port to one of their sockets, so a few sources are tried until one reaches this one.
   */
  async openQueueProbe(attempts = 8, waitMs = 250): Promise<QueueProbe | null> {
    for (let i = 0; i < attempts; i++) {
      const udp = this.#udp;
      if (udp === undefined || this.#closed) return null;
      const probe = await QueueProbe.open(udp.address);
      this.#probe?.close();
      this.#probe = probe;
      this.#probeFrom = probe.source;
      probe.sample();
      for (const until = performance.now() + waitMs; !probe.measured && performance.now() < until; ) await new Promise((r) => setTimeout(r, 5));
      if (probe.measured) return probe;
    }
    this.#probe?.close();
    this.#probe = undefined;
    this.#probeFrom = { address: '', port: -1 };
    return null;
  }

  /** Resizes the UDP socket's receive buffer (SO_RCVBUF); no-op without UDP. */
  setUdpReceiveBuffer(bytes: number): void {
    this.#udp?.setReceiveBuffer(bytes);
  }

  #tcpEvents() {
    return {
      onFrame: (conn: TcpConnection, frame: Buffer) => this.#inbound(frame, conn.flow),
      onFramingError: (conn: TcpConnection, err: unknown, pending: Buffer) => {
        this.#counters.parseErrors++;
        const oversize = err instanceof SipParseError && err.code === 'SIP_ERR_MESSAGE_TOO_LARGE';
        // RFC 3261 §21.5.14: a request too large to process is answered 513 when its head can be read.
        const answer = oversize ? tooLargeResponse(pending, conn.flow, this.opts.forceRport === true) : undefined;
        publish(channels.parseError, { flow: conn.flow, error: err, bytes: pending.length, answered: answer !== undefined });
        if (oversize) this.#counters.oversize++;
        this.#drop(conn.flow, oversize ? 'oversize' : 'framing');
        this.#log.info({ flow: conn.flow, code: err instanceof SipParseError ? err.code : undefined, answered: answer?.status }, 'sip tcp framing error, closing connection');
        if (answer !== undefined) this.sendResponse(answer, conn.flow, { once: true }).catch((e: unknown) => this.#log.debug({ err: e, flow: conn.flow }, 'sip 513 could not be sent'));
      },
      onPing: () => this.#counters.keepalivesAnswered++,
      onOpen: (conn: TcpConnection) => {
        this.#counters.tcpAccepted++;
        publish(channels.connection, { flow: conn.flow, event: 'open' });
      },
      onClose: (conn: TcpConnection, reason: TcpCloseReason) => {
        if (reason === 'idle-timeout') this.#counters.tcpIdleClosed++;
        if (reason === 'message-timeout') {
          this.#counters.tcpMessageTimeouts++;
          this.#log.info({ flow: conn.flow }, 'sip tcp message not completed in time, connection closed');
        }
        publish(channels.connection, { flow: conn.flow, event: reason === 'closed' ? 'close' : reason });
        const watcher = this.#closeWatchers.get(conn.id);
        if (watcher !== undefined) {
          this.#closeWatchers.delete(conn.id);
          watcher(reason);
        }
      },
      onRejected: (remote: { address: string; port: number }, why: 'limit' | 'per-ip-limit') => {
        this.#counters.tcpRejected++;
        this.#drop(undefined, 'connection-limit');
        // one line per second at most: a flood of refused connections must not become a flood of logs
        const now = Date.now();
        if (now - this.#lastRejectLog >= 1000) {
          this.#lastRejectLog = now;
          this.#log.warn({ remote: remote.address, why, open: this.#tcp?.size ?? 0 }, 'sip tcp connection refused over the limit');
        }
      },
    };
  }

  #onDatagram(data: Buffer, remoteAddress: string, remotePort: number): void {
    const udp = this.#udp;
    if (udp === undefined) return;
    const local = udp.address;
    const flow: Flow = { transport: 'udp', remoteAddress, remotePort, localAddress: local.address, localPort: local.port };
    // RFC 5626 §4.4.1 STUN keepalives and stray CRLFs on UDP: nothing to answer. Our own queue probe is one of them.
    if (data.length <= 4 && data.every((b) => b === 13 || b === 10)) {
      if (remotePort === this.#probeFrom.port && remoteAddress === this.#probeFrom.address) this.#probe?.arrived(data.length);
      return;
    }
    if (data.length > (this.opts.maxMessageBytes ?? MAX_UDP_MESSAGE_BYTES)) {
      this.#counters.oversize++;
      this.#drop(flow, 'oversize');
      return;
    }
    if (this.#shortcut !== undefined && !this.#closed && this.#answerShortcut(this.#shortcut, data, flow)) return;
    this.#inbound(data, flow);
  }

  #answerShortcut(shortcut: DatagramShortcut, data: Buffer, flow: Flow): boolean {
    let answer;
    try {
      answer = shortcut(data, flow);
    } catch (err) {
      this.#log.error({ err, flow }, 'sip datagram shortcut threw');
      return false;
    }
    if (answer === undefined) return false;
    this.#counters.messagesIn++;
    if (this.#udp?.sendNoWait(answer.data, answer.port, answer.host) === true) this.#counters.messagesOut++; // errors: #onUdpError
    return true;
  }

  #onUdpError(err: Error): void {
    this.#counters.sendErrors++;
    this.#log.warn({ err }, 'sip udp socket error');
  }

  /** Everything inbound goes through here; nothing thrown below may escape to the socket callbacks. */
  #inbound(buf: Buffer, flow: Flow): void {
    if (this.#closed) return;
    let msg: SipMessage;
    try {
      // One datagram is one message, and a TCP frame is what the framer measured (exactly
      // Content-Length, or a character-counted body it re-measured): keep either whole (ParseOptions).
      msg = parseSipMessage(buf, { trustDatagramEnd: true });
      checkRequiredHeaders(msg);
      if (msg.type === 'request') {
        const top = getTopVia(msg);
        if (stampReceived(top, flow.remoteAddress, flow.remotePort, this.opts.forceRport === true)) rewriteTopVia(msg, top);
      }
    } catch (err) {
      this.#onParseError(err, buf, flow);
      return;
    }
    this.#counters.messagesIn++;
    if (msg.type === 'response') this.#flows.set(msg, flow); // flowOf() is asked about responses only
    publish(channels.messageIn, { message: msg, flow, bytes: buf.length });
    try {
      this.#onMessage(msg, flow);
    } catch (err) {
      // A bug above must cost one message, not the process.
      this.#log.error({ err, flow }, 'sip inbound handler threw');
    }
  }

  #onParseError(err: unknown, buf: Buffer, flow: Flow): void {
    this.#counters.parseErrors++;
    if (!(err instanceof SipParseError)) this.#log.error({ err, flow }, 'sip inbound processing failed');
    const bad = err instanceof SipParseError ? badRequestFor(err, flow, this.opts.forceRport === true) : undefined;
    publish(channels.parseError, { flow, error: err, bytes: buf.length, answered: bad !== undefined });
    if (bad === undefined) {
      this.#drop(flow, 'unparseable');
      return;
    }
    this.#counters.badRequestsSent++;
    this.sendResponse(bad, flow).catch((e: unknown) => this.#log.debug({ err: e, flow }, 'sip 400 could not be sent'));
  }

  #drop(flow: Flow | undefined, reason: DropReason): void {
    this.#counters.dropped++;
    publish(channels.dropped, { flow, reason });
  }

  /**
   * Sends a message to a remembered flow or a host; resolves with the flow actually used. When a
   * flow's TCP connection is gone, `fallback` (typically the Request-URI's host:port) is dialled,
   * else the flow's remote address.
   */
  async send(msg: SipMessage, target: SendTarget, fallback?: HostTarget, opts: SendOptions = {}): Promise<Flow> {
    if (this.#closed) throw new Error('SIP transport closed');
    const data = opts.once === true ? serializeSipMessage(msg) : this.#serializer.serialize(msg);
    let flow: Flow;
    try {
      flow = target.transport === 'udp' ? await this.#sendUdp(data, target) : await this.#sendTcp(data, target, fallback, opts.connectionOnly === true);
    } catch (err) {
      this.#counters.sendErrors++;
      throw err;
    }
    this.#counters.messagesOut++;
    publish(channels.messageOut, { message: msg, target: flow, bytes: data.length });
    return flow;
  }

  /**
   * RFC 3261 §18.2.2: over TCP the connection the request came on, or a new one to `received`
   * and the sent-by port; over UDP `received` and `rport` (RFC 3581 §4) or the sent-by port.
   */
  async sendResponse(res: SipResponse, flow: Flow, opts: SendOptions = {}): Promise<void> {
    const top = getTopVia(res);
    const dest = responseDestination(top);
    if (flow.transport === 'tcp') {
      const conn = flow.connectionId === undefined ? undefined : this.#tcp?.get(flow.connectionId);
      if (conn !== undefined) {
        await this.send(res, flow, undefined, opts);
        return;
      }
      await this.send(res, { transport: 'tcp', host: dest.host, port: top.port ?? DEFAULT_SIP_PORT }, undefined, opts);
      return;
    }
    await this.send(res, { transport: 'udp', host: dest.host, port: dest.port }, undefined, opts);
  }

  /**
   * A response to be sent again later (a final kept by a UDP server transaction for Timer J): its bytes
   * and destination are fixed now, so the sender returned holds a Buffer and a host:port only, not the
   * message and the request it was built from (RFC 3261 §17.2.2 resends the same response anyway).
   * Over TCP (no retransmissions, Timer J = 0) it simply sends the message again.
   */
  prepareResponse(res: SipResponse, flow: Flow): () => Promise<void> {
    if (flow.transport === 'tcp') return this.#sendAgain(res, flow);
    // From here on no closure may name `res`: it would share this scope and keep the whole message.
    const dest = responseDestination(getTopVia(res));
    const target = { transport: 'udp' as const, host: dest.host, port: dest.port };
    const data = this.#serializer.serialize(res);
    // message_out subscribers (metrics) read the status and the CSeq: a stand-in with those, built per
    // resend from copies, so nothing of the original message or its request stays reachable.
    const { status, reason } = res;
    const cseq = `${getCSeq(res).seq} ${getCSeq(res).method}`;
    return async () => {
      if (this.#closed) throw new Error('SIP transport closed');
      try {
        await this.#sendUdp(data, target);
      } catch (err) {
        this.#counters.sendErrors++;
        throw err;
      }
      this.#counters.messagesOut++;
      if (channels.messageOut.hasSubscribers) {
        const message: SipResponse = { type: 'response', status, reason, headers: new SipHeaders([['CSeq', cseq]]), body: EMPTY_BODY };
        publish(channels.messageOut, { message, target: flow, bytes: data.length });
      }
    };
  }

  /**
   * The sender of the transaction layer's completed finals (FinalSender): a final response to a request
   * that came over UDP, sent now (no completion awaited: a failure is the socket's error, as for the
   * stateless answers), and kept as its bytes and destination only, to be resent to a retransmission of
   * the request during Timer J (RFC 3261 §17.2.2). undefined over TCP (no retransmissions).
   */
  readonly finalSender = {
    send: (res: SipResponse, flow: Flow): RetainedFinal | undefined => this.#sendRetained(res, flow),
    resend: (kept: RetainedFinal): void => this.#resendRetained(kept),
  };

  #sendRetained(res: SipResponse, flow: Flow): RetainedFinal | undefined {
    const udp = this.#udp;
    if (flow.transport !== 'udp' || udp === undefined || this.#closed) return undefined;
    const dest = responseDestination(getTopVia(res));
    const data = serializeSipMessage(res);
    // the host is usually the datagram's source address (received); when it is the Via's own host it is a
    // slice of the request's text, which it would keep for Timer J
    const host = dest.host === flow.remoteAddress ? flow.remoteAddress : detachString(dest.host);
    if (!udp.sendNoWait(data, dest.port, host)) return undefined;
    this.#counters.messagesOut++;
    if (channels.messageOut.hasSubscribers) publish(channels.messageOut, { message: res, target: { transport: 'udp', host, port: dest.port }, bytes: data.length });
    return { data, host, port: dest.port };
  }

  #resendRetained(kept: RetainedFinal): void {
    if (this.#closed || this.#udp?.sendNoWait(kept.data, kept.port, kept.host) !== true) return;
    this.#counters.messagesOut++;
    // message_out subscribers (metrics) read the status and the CSeq: the kept bytes parsed, on this rare path only
    if (channels.messageOut.hasSubscribers) {
      publish(channels.messageOut, { message: parseSipMessage(kept.data), target: { transport: 'udp', host: kept.host, port: kept.port }, bytes: kept.data.length });
    }
  }

  #sendAgain(res: SipResponse, flow: Flow): () => Promise<void> {
    return () => this.sendResponse(res, flow);
  }

  async #sendUdp(data: Buffer, target: SendTarget): Promise<Flow> {
    const udp = this.#udp;
    if (udp === undefined) throw new Error('UDP transport not enabled');
    const host = isFlow(target) ? target.remoteAddress : target.host;
    const port = isFlow(target) ? target.remotePort : target.port;
    await udp.send(data, port, host);
    const local = udp.address;
    return { transport: 'udp', remoteAddress: host, remotePort: port, localAddress: local.address, localPort: local.port };
  }

  async #sendTcp(data: Buffer, target: SendTarget, fallback: HostTarget | undefined, connectionOnly: boolean): Promise<Flow> {
    const tcp = this.#tcp;
    if (tcp === undefined) throw new Error('TCP transport not enabled');
    let conn = isFlow(target) && target.connectionId !== undefined ? tcp.get(target.connectionId) : undefined;
    if (conn === undefined && connectionOnly) throw new Error('TCP connection closed');
    if (conn === undefined && isFlow(target)) {
      // The remembered connection is gone (device reconnected or idle-closed): a device's
      // ephemeral source port rarely listens, so prefer the caller's fallback address.
      conn = fallback !== undefined ? await tcp.connect(fallback.host, fallback.port) : await tcp.connect(target.remoteAddress, target.remotePort);
    }
    conn ??= await tcp.connect(targetHost(target), targetPort(target));
    await conn.write(data);
    return conn.flow;
  }

  /** Idempotent; in-flight sends fail, inbound traffic is ignored from now on. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#probe?.close();
    await Promise.all([this.#udp?.close(), this.#tcp?.close()]);
  }
}
