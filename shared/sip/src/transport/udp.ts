import dgram from 'node:dgram';
import { lookup as dnsLookup, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { PortSharing } from './port-sharing.ts';

/** One datagram: its bytes and where it came from (no wrapper object: this runs per keepalive). */
export type UdpDatagramHandler = (data: Buffer, remoteAddress: string, remotePort: number) => void;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;

/** The last IP literal literalFirstLookup saw, and its family (one process-wide entry). */
let lastLiteral = '';
let lastFamily = 0;

/**
 * dgram resolves the destination of every send through `lookup`, and dns.lookup answers even an IP
 * literal on the next tick: one more tick and callback per datagram. Our destinations are nearly
 * always literals (Via `received`, a flow's address), so those are answered at once and the send
 * happens synchronously; names still go to dns.lookup.
 */
function literalFirstLookup(hostname: string, options: LookupOneOptions, callback: LookupCallback): void {
  if (hostname === lastLiteral) {
    callback(null, hostname, lastFamily); // answers go to the same few addresses: no isIP regex each time
    return;
  }
  const family = isIP(hostname);
  if (family !== 0) {
    lastLiteral = hostname;
    lastFamily = family;
  }
  if (family !== 0) callback(null, hostname, family);
  else dnsLookup(hostname, options, callback); // dgram passes the socket's family (4 or 6) as options
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
    onDatagram: UdpDatagramHandler,
    onError: (err: Error) => void,
    receiveBufferBytes?: number,
    sharing?: PortSharing,
  ): Promise<UdpSocket> {
    // `reusePort` is in Node's dgram from 22.12 (the caller checks nodeSetsReusePort); @types/node 20 lacks it
    const options: dgram.SocketOptions & { reusePort?: boolean } = {
      type: isIP(host) === 6 ? 'udp6' : 'udp4',
      lookup: literalFirstLookup,
      ...(receiveBufferBytes === undefined ? {} : { recvBufferSize: receiveBufferBytes }),
      ...(sharing?.kind === 'reuse-port' ? { reusePort: true } : {}),
    };
    const socket = dgram.createSocket(options);
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      const bound = (): void => {
        socket.off('error', reject);
        resolve();
      };
      // an inherited socket is bound already: its own address stands (the caller checks the port)
      if (sharing?.kind === 'inherited') socket.bind({ fd: sharing.udpFd }, bound);
      else socket.bind(port, host, bound);
    });
    const udp = new UdpSocket(socket);
    socket.on('message', (data, rinfo) => onDatagram(data, rinfo.address, rinfo.port));
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
  sendNoWait(data: Uint8Array, port: number, host: string): boolean {
    if (this.#closed) return false;
    this.#socket.send(data, port, host);
    return true;
  }

  /** SO_RCVBUF now (the kernel doubles it for its bookkeeping and caps it at net.core.rmem_max). */
  setReceiveBuffer(bytes: number): void {
    if (!this.#closed) this.#socket.setRecvBufferSize(bytes);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }
}
