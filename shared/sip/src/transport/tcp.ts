import net from 'node:net';
import { SipStreamFramer } from '../message/framer.ts';
import type { Flow } from './flow.ts';
import type { PortSharing } from './port-sharing.ts';

export interface TcpLimits {
  /** Inbound + outbound connections; beyond it new inbound connections are refused. */
  maxConnections: number;
  /** Accepted connections from one source address (SPEC SEC-3); beyond it new ones are refused. */
  maxConnectionsPerIp: number;
  /**
   * A connection that completes no message for this long is closed. Only whole messages and RFC 5626
   * keepalive CRLFs count: a byte of an unfinished message does not keep a connection alive.
   */
  idleTimeoutMs: number;
  /**
   * Time to complete one message, counted from its first byte and not reset by later bytes (SPEC
   * SEC-3): a peer trickling headers a byte at a time is cut off after this, not held for ever.
   */
  messageTimeoutMs: number;
  /** Largest framed message; bigger means the stream cannot be resynchronised: close. */
  maxMessageBytes: number;
  connectTimeoutMs: number;
}

export type TcpCloseReason = 'idle-timeout' | 'message-timeout' | 'closed';

export interface TcpEvents {
  onFrame(conn: TcpConnection, frame: Buffer): void;
  /**
   * Unrecoverable framing error (no Content-Length, oversize), with the bytes held of the message it
   * refused: the connection is closed after this returns (a response written here still goes first).
   */
  onFramingError(conn: TcpConnection, err: unknown, pending: Buffer): void;
  onPing(conn: TcpConnection): void;
  onOpen(conn: TcpConnection): void;
  onClose(conn: TcpConnection, reason: TcpCloseReason): void;
  onRejected(remote: { address: string; port: number }, why: 'limit' | 'per-ip-limit'): void;
}

const CRLF = Buffer.from('\r\n', 'latin1');
/** A peer that stops reading must not make us buffer without bound: past this, drop the connection. */
export const MAX_PENDING_WRITE_BYTES = 4 * 1024 * 1024;

/** One TCP connection, either accepted or opened by us; both directions carry requests and responses. */
export class TcpConnection {
  readonly flow: Flow;
  #closed = false;
  #idle: NodeJS.Timeout | undefined;
  #message: NodeJS.Timeout | undefined;

  constructor(
    readonly id: number,
    private readonly socket: net.Socket,
    limits: TcpLimits,
    events: TcpEvents,
  ) {
    this.flow = {
      transport: 'tcp',
      remoteAddress: socket.remoteAddress ?? '',
      remotePort: socket.remotePort ?? 0,
      localAddress: socket.localAddress ?? '',
      localPort: socket.localPort ?? 0,
      connectionId: id,
    };
    const framer = new SipStreamFramer({
      maxMessageBytes: limits.maxMessageBytes,
      // RFC 5626 §3.5.1: a CRLFCRLF "ping" is answered with a single CRLF "pong".
      onKeepalive: (kind) => {
        this.#idle?.refresh();
        if (kind === 'ping') {
          events.onPing(this);
          this.socket.write(CRLF);
        }
      },
    });
    socket.setNoDelay(true);
    // Two timers re-armed with refresh() (no allocation per message): idle, from the last complete
    // message or keepalive; message, from the first byte of the message being received.
    this.#idle = setTimeout(() => this.#expire('idle-timeout', events), limits.idleTimeoutMs);
    this.#idle.unref();
    const messageTimeoutMs = limits.messageTimeoutMs;
    socket.on('data', (chunk: Buffer) => {
      const wasEmpty = framer.bufferedBytes === 0;
      let frames: Buffer[];
      try {
        frames = framer.push(chunk);
      } catch (err) {
        events.onFramingError(this, err, framer.pending);
        this.#end();
        return;
      }
      if (frames.length > 0) this.#idle?.refresh();
      if (framer.bufferedBytes === 0) this.#clearMessageTimer();
      else if (this.#message === undefined) {
        this.#message = setTimeout(() => this.#expire('message-timeout', events), messageTimeoutMs);
        this.#message.unref();
      } else if (wasEmpty || frames.length > 0) this.#message.refresh(); // a new message started
      for (const f of frames) {
        if (this.#closed) return;
        events.onFrame(this, f);
      }
    });
    // Errors (ECONNRESET, EPIPE) are followed by 'close'; swallowing them here is what keeps a
    // misbehaving peer from crashing the process.
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.#markClosed()) events.onClose(this, 'closed');
    });
  }

  #expire(reason: 'idle-timeout' | 'message-timeout', events: TcpEvents): void {
    if (!this.#markClosed()) return;
    events.onClose(this, reason);
    this.socket.destroy();
  }

  #clearMessageTimer(): void {
    if (this.#message === undefined) return;
    clearTimeout(this.#message);
    this.#message = undefined;
  }

  /** After a framing error: what was written (a 513) is flushed, then the connection is closed. */
  #end(): void {
    this.#clearMessageTimer();
    this.socket.pause();
    this.socket.end();
    // a peer that never reads must not keep the half-closed socket: bounded by the message timer
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(data: Buffer): Promise<void> {
    if (this.#closed || this.socket.destroyed) return Promise.reject(new Error('TCP connection closed'));
    if (this.socket.writableLength > MAX_PENDING_WRITE_BYTES) {
      this.close();
      return Promise.reject(new Error('TCP peer is not reading; connection dropped'));
    }
    return new Promise((resolve, reject) => {
      this.socket.write(data, (err) => (err ? reject(err) : resolve()));
    });
  }

  close(): void {
    this.socket.destroy();
  }

  /** True on the first call only, so onClose fires once. */
  #markClosed(): boolean {
    if (this.#closed) return false;
    this.#closed = true;
    clearTimeout(this.#idle);
    this.#clearMessageTimer();
    return true;
  }
}

/** TCP listener plus the table of live connections (accepted and outbound), indexed by id and by remote address. */
export class TcpTransport {
  readonly #connections = new Map<number, TcpConnection>();
  readonly #byRemote = new Map<string, TcpConnection>();
  readonly #connecting = new Map<string, Promise<TcpConnection>>();
  /** Accepted connections per source address (outbound ones are ours and not counted). */
  readonly #perIp = new Map<string, number>();
  readonly #accepted = new WeakSet<TcpConnection>();
  #nextId = 1;
  #closed = false;

  private constructor(
    private readonly server: net.Server,
    private readonly bindHost: string,
    private readonly limits: TcpLimits,
    private readonly events: TcpEvents,
  ) {}

  static async listen(host: string, port: number, limits: TcpLimits, events: TcpEvents, sharing?: PortSharing): Promise<TcpTransport> {
    const server = net.createServer({ noDelay: true });
    // `reusePort` is in Node's net from 22.12 (the caller checks nodeSetsReusePort); @types/node 20 lacks it
    const at: (net.ListenOptions & { reusePort?: boolean }) | { fd: number } =
      sharing?.kind === 'inherited' ? { fd: sharing.tcpFd } : { host, port, exclusive: true, ...(sharing?.kind === 'reuse-port' ? { reusePort: true } : {}) };
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const tcp = new TcpTransport(server, host, limits, events);
    server.on('connection', (socket) => tcp.#accept(socket));
    server.on('error', () => {}); // accept errors (EMFILE) must not crash; connections already counted
    return tcp;
  }

  get address(): { address: string; port: number } {
    const a = this.server.address() as net.AddressInfo;
    return { address: a.address, port: a.port };
  }

  get size(): number {
    return this.#connections.size;
  }

  get(id: number): TcpConnection | undefined {
    const c = this.#connections.get(id);
    return c !== undefined && !c.closed ? c : undefined;
  }

  findByRemote(address: string, port: number): TcpConnection | undefined {
    const c = this.#byRemote.get(`${address}:${port}`);
    return c !== undefined && !c.closed ? c : undefined;
  }

  /** Reuses a live connection to host:port (RFC 3261 §18.1.1 / RFC 5923 spirit) or opens one. */
  connect(host: string, port: number): Promise<TcpConnection> {
    const existing = this.findByRemote(host, port);
    if (existing !== undefined) return Promise.resolve(existing);
    const key = `${host}:${port}`;
    const pending = this.#connecting.get(key);
    if (pending !== undefined) return pending;
    const p = this.#open(host, port).finally(() => this.#connecting.delete(key));
    this.#connecting.set(key, p);
    return p;
  }

  /** A new connection to host:port, never shared by connect() callers' reuse wait (a caller's own pool). */
  open(host: string, port: number): Promise<TcpConnection> {
    return this.#open(host, port);
  }

  #open(host: string, port: number): Promise<TcpConnection> {
    if (this.#closed) return Promise.reject(new Error('TCP transport closed'));
    if (this.#connections.size >= this.limits.maxConnections) return Promise.reject(new Error('TCP connection limit reached'));
    return new Promise((resolve, reject) => {
      const wildcard = this.bindHost === '0.0.0.0' || this.bindHost === '::';
      const socket = net.connect({ host, port, ...(wildcard ? {} : { localAddress: this.bindHost }) });
      const timer = setTimeout(() => socket.destroy(new Error(`TCP connect to ${host}:${port} timed out`)), this.limits.connectTimeoutMs);
      timer.unref();
      const onError = (err: Error): void => {
        clearTimeout(timer);
        reject(err);
      };
      socket.once('error', onError);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        if (this.#closed) {
          socket.destroy();
          reject(new Error('TCP transport closed'));
          return;
        }
        resolve(this.#adopt(socket));
      });
    });
  }

  #accept(socket: net.Socket): void {
    const ip = socket.remoteAddress ?? '';
    const fromIp = this.#perIp.get(ip) ?? 0;
    if (this.#closed || this.#connections.size >= this.limits.maxConnections || fromIp >= this.limits.maxConnectionsPerIp) {
      this.events.onRejected({ address: ip, port: socket.remotePort ?? 0 }, fromIp >= this.limits.maxConnectionsPerIp ? 'per-ip-limit' : 'limit');
      socket.on('error', () => {});
      socket.destroy();
      return;
    }
    this.#perIp.set(ip, fromIp + 1);
    this.#accepted.add(this.#adopt(socket));
  }

  #forget(conn: TcpConnection): void {
    if (!this.#accepted.delete(conn)) return;
    const ip = conn.flow.remoteAddress;
    const n = (this.#perIp.get(ip) ?? 1) - 1;
    if (n <= 0) this.#perIp.delete(ip);
    else this.#perIp.set(ip, n);
  }

  #adopt(socket: net.Socket): TcpConnection {
    const conn = new TcpConnection(this.#nextId++, socket, this.limits, {
      ...this.events,
      onClose: (c, reason) => {
        this.#connections.delete(c.id);
        this.#forget(c);
        const key = `${c.flow.remoteAddress}:${c.flow.remotePort}`;
        if (this.#byRemote.get(key) === c) this.#byRemote.delete(key);
        this.events.onClose(c, reason);
      },
    });
    this.#connections.set(conn.id, conn);
    this.#byRemote.set(`${conn.flow.remoteAddress}:${conn.flow.remotePort}`, conn);
    this.events.onOpen(conn);
    return conn;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of this.#connections.values()) c.close();
    await done;
  }
}
