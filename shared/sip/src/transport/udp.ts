import dgram from 'node:dgram';
import { isIP } from 'node:net';

export interface UdpDatagram {
  data: Buffer;
  remoteAddress: string;
  remotePort: number;
}

/**
 * One UDP socket per stack: requests to devices leave from the same address:port the devices
 * registered to, which is what their NAT binding (and many device firmwares) expect.
 */
export class UdpSocket {
  readonly #socket: dgram.Socket;
  /** Fixed once bound; socket.address() is a getsockname() syscall, too dear per datagram. */
  readonly #address: { readonly address: string; readonly port: number };
  #closed = false;

  private constructor(socket: dgram.Socket) {
    this.#socket = socket;
    const a = socket.address();
    this.#address = Object.freeze({ address: a.address, port: a.port });
  }

  static async bind(
    host: string,
    port: number,
    onDatagram: (d: UdpDatagram) => void,
    onError: (err: Error) => void,
    receiveBufferBytes?: number,
  ): Promise<UdpSocket> {
    const socket = dgram.createSocket({ type: isIP(host) === 6 ? 'udp6' : 'udp4', ...(receiveBufferBytes === undefined ? {} : { recvBufferSize: receiveBufferBytes }) });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    const udp = new UdpSocket(socket);
    socket.on('message', (data, rinfo) => onDatagram({ data, remoteAddress: rinfo.address, remotePort: rinfo.port }));
    // ICMP port-unreachable and friends surface here; they must never crash the process.
    socket.on('error', onError);
    return udp;
  }

  get address(): { readonly address: string; readonly port: number } {
    return this.#address;
  }

  send(data: Buffer, port: number, host: string): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('UDP socket closed'));
    return new Promise((resolve, reject) => {
      this.#socket.send(data, port, host, (err) => (err ? reject(err) : resolve()));
    });
  }

  /**
   * Fire and forget: without a completion callback Node tries the send synchronously
   * (uv_udp_try_send) and skips the completion round trip. Failures surface as the socket's 'error'
   * event. For stateless answers, which nobody waits on.
   */
  sendNoWait(data: Buffer, port: number, host: string): boolean {
    if (this.#closed) return false;
    this.#socket.send(data, port, host);
    return true;
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }
}
