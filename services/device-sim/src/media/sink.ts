// Where a session's RTP goes (GB/T 28181-2016 §9.2, RFC 4145 / RFC 4571 as the standard adopts them):
//   udp          datagrams to the offer's address:port
//   tcp-connect  the offer says a=setup:passive (platform listens): the device connects
//   tcp-listen   the offer says a=setup:active (platform connects): the device listens and answers its port
// Over TCP every RTP packet is framed with a 2-byte length (RFC 4571 §2).
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { deviceClosedError, DeviceSimError } from '../errors.ts';
import { frameRfc4571 } from './rtp.ts';

export type MediaSinkMode = 'udp' | 'tcp-connect' | 'tcp-listen';

/** RFC 4145 §4.1: the port an active (connecting) endpoint announces. */
export const DISCARD_PORT = 9;
/** Above this many unsent bytes on a TCP connection, packets are dropped rather than queued. */
const MAX_TCP_BACKLOG_BYTES = 2 * 1024 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

export interface MediaSinkStats {
  packets: number;
  bytes: number;
  /** Packets not sent: path not open yet, closed, or TCP backlog full. */
  dropped: number;
}

export interface MediaSink {
  readonly mode: MediaSinkMode;
  /** The port for the m= line of our SDP answer. */
  readonly answerPort: number;
  readonly stats: Readonly<MediaSinkStats>;
  /** UDP: nothing to do. tcp-connect: connects. tcp-listen: waits for the platform's connection. */
  open(): Promise<void>;
  send(packet: Buffer): void;
  /** Called once if the TCP peer closes or the socket fails after open(). */
  onClosed?: (err?: Error) => void;
  close(): void;
}

export interface SinkTarget {
  mode: MediaSinkMode;
  localHost: string;
  /** The offer's c= address and m= port (unused for tcp-listen). */
  remoteHost: string;
  remotePort: number;
  connectTimeoutMs?: number;
}

export async function openMediaSink(t: SinkTarget): Promise<MediaSink> {
  switch (t.mode) {
    case 'udp':
      return UdpSink.bind(t);
    case 'tcp-connect':
      return new TcpConnectSink(t);
    case 'tcp-listen':
      return TcpListenSink.listen(t);
  }
}

class UdpSink implements MediaSink {
  readonly mode = 'udp';
  readonly stats: MediaSinkStats = { packets: 0, bytes: 0, dropped: 0 };
  onClosed?: (err?: Error) => void;
  #closed = false;

  private constructor(
    private readonly socket: UdpSocket,
    private readonly t: SinkTarget,
  ) {}

  static async bind(t: SinkTarget): Promise<UdpSink> {
    const socket = createSocket('udp4');
    socket.on('error', () => {}); // ICMP port unreachable etc.: keep sending, like a device does
    socket.bind(0, t.localHost);
    await once(socket, 'listening');
    return new UdpSink(socket, t);
  }

  get answerPort(): number {
    return this.socket.address().port;
  }

  open(): Promise<void> {
    return Promise.resolve();
  }

  send(packet: Buffer): void {
    if (this.#closed) {
      this.stats.dropped++;
      return;
    }
    this.stats.packets++;
    this.stats.bytes += packet.length;
    this.socket.send(packet, this.t.remotePort, this.t.remoteHost);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.socket.close();
  }
}

/** Shared by both TCP modes once a connection exists. */
abstract class TcpSink implements MediaSink {
  abstract readonly mode: MediaSinkMode;
  abstract readonly answerPort: number;
  readonly stats: MediaSinkStats = { packets: 0, bytes: 0, dropped: 0 };
  onClosed?: (err?: Error) => void;
  protected socket: Socket | undefined;
  protected closed = false;

  abstract open(): Promise<void>;

  protected adopt(socket: Socket): void {
    this.socket = socket;
    socket.setNoDelay(true);
    let reported = false;
    const report = (err?: Error): void => {
      if (reported || this.closed) return;
      reported = true;
      this.onClosed?.(err);
    };
    socket.on('error', report);
    socket.on('close', () => report());
    socket.on('data', () => {}); // RTCP or nothing: ignored, but drained
  }

  send(packet: Buffer): void {
    const s = this.socket;
    if (this.closed || s === undefined || s.destroyed || s.writableLength > MAX_TCP_BACKLOG_BYTES) {
      this.stats.dropped++;
      return;
    }
    const framed = frameRfc4571(packet);
    this.stats.packets++;
    this.stats.bytes += framed.length;
    s.write(framed);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket?.destroy();
  }
}

class TcpConnectSink extends TcpSink {
  readonly mode = 'tcp-connect';
  readonly answerPort = DISCARD_PORT;

  constructor(private readonly t: SinkTarget) {
    super();
  }

  async open(): Promise<void> {
    const socket = connect({ host: this.t.remoteHost, port: this.t.remotePort, localAddress: this.t.localHost });
    const timer = setTimeout(() => socket.destroy(new Error('media connect timeout')), this.t.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
    try {
      await once(socket, 'connect');
    } catch (err) {
      throw new DeviceSimError('DSIM_ERR_MEDIA', 'media TCP connect failed', { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.adopt(socket);
  }
}

class TcpListenSink extends TcpSink {
  readonly mode = 'tcp-listen';
  readonly #accepted: Promise<void>;
  #settle: ((err?: Error) => void) | undefined;

  private constructor(
    private readonly server: Server,
    private readonly t: SinkTarget,
  ) {
    super();
    this.#accepted = new Promise<void>((resolve, reject) => {
      this.#settle = (err) => {
        this.#settle = undefined;
        if (err === undefined) resolve();
        else reject(err);
      };
    });
    this.#accepted.catch(() => undefined); // open() may never be called (no ACK)
    server.on('connection', (s) => {
      if (this.socket !== undefined || this.closed) {
        s.destroy(); // one media connection per session (a=connection:new)
        return;
      }
      this.adopt(s);
      this.#settle?.();
    });
  }

  static async listen(t: SinkTarget): Promise<TcpListenSink> {
    const server = createServer();
    server.listen(0, t.localHost);
    await once(server, 'listening');
    return new TcpListenSink(server, t);
  }

  get answerPort(): number {
    const a = this.server.address();
    return typeof a === 'object' && a !== null ? a.port : 0;
  }

  async open(): Promise<void> {
    const timer = setTimeout(
      () => this.#settle?.(new DeviceSimError('DSIM_ERR_MEDIA', 'platform did not connect to the media port')),
      this.t.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    );
    try {
      await this.#accepted;
    } finally {
      clearTimeout(timer);
    }
  }

  override close(): void {
    super.close();
    this.#settle?.(deviceClosedError());
    this.server.close();
  }
}
