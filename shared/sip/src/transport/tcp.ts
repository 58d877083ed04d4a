import net from 'node:net';
import { SipStreamFramer } from '../message/framer.ts';
import type { Flow } from './flow.ts';

export interface TcpLimits {
  /** Inbound + outbound connections; beyond it new inbound connections are refused. */
  maxConnections: number;
  /** A connection without traffic for this long is closed (keepalive CRLFs count as traffic). */
  idleTimeoutMs: number;
  /** Largest framed message; bigger means the stream cannot be resynchronised: close. */
  maxMessageBytes: number;
  connectTimeoutMs: number;
}

export interface TcpEvents {
  onFrame(conn: TcpConnection, frame: Buffer): void;
  /** Unrecoverable framing error (no Content-Length, oversize): the connection is closed after this. */
  onFramingError(conn: TcpConnection, err: unknown): void;
  onPing(conn: TcpConnection): void;
  onOpen(conn: TcpConnection): void;
  onClose(conn: TcpConnection, reason: 'idle-timeout' | 'closed'): void;
  onRejected(remote: { address: string; port: number }): void;
}

const CRLF = Buffer.from('\r\n', 'latin1');
/** A peer that stops reading must not make us buffer without bound: past this, drop the connection. */
export const MAX_PENDING_WRITE_BYTES = 4 * 1024 * 1024;

/** One TCP connection, either accepted or opened by us; both directions carry requests and responses. */
export class TcpConnection {
  readonly flow: Flow;
  #closed = false;

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
        if (kind === 'ping') {
          events.onPing(this);
          this.socket.write(CRLF);
        }
      },
    });
    socket.setNoDelay(true);
    socket.setTimeout(limits.idleTimeoutMs, () => {
      events.onClose(this, 'idle-timeout');
      this.#markClosed();
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = framer.push(chunk);
      } catch (err) {
        events.onFramingError(this, err);
        this.close();
        return;
      }
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
    return true;
  }
}

/** TCP listener plus the table of live connections (accepted and outbound), indexed by id and by remote address. */
export class TcpTransport {
  readonly #connections = new Map<number, TcpConnection>();
  readonly #byRemote = new Map<string, TcpConnection>();
  readonly #connecting = new Map<string, Promise<TcpConnection>>();
  #nextId = 1;
  #closed = false;

  private constructor(
    private readonly server: net.Server,
    private readonly bindHost: string,
    private readonly limits: TcpLimits,
    private readonly events: TcpEvents,
  ) {}

  static async listen(host: string, port: number, limits: TcpLimits, events: TcpEvents): Promise<TcpTransport> {
    const server = net.createServer({ noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, () => {
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
    if (this.#closed || this.#connections.size >= this.limits.maxConnections) {
      this.events.onRejected({ address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 });
      socket.on('error', () => {});
      socket.destroy();
      return;
    }
    this.#adopt(socket);
  }

  #adopt(socket: net.Socket): TcpConnection {
    const conn = new TcpConnection(this.#nextId++, socket, this.limits, {
      ...this.events,
      onClose: (c, reason) => {
        this.#connections.delete(c.id);
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
