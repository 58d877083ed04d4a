// RTP receivers a test platform points INVITE offers at: a UDP socket, a TCP listener (offer
// a=setup:passive), or a TCP connection to the device (offer a=setup:active). Packets are parsed and
// frames reassembled at the marker bit.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { parseRtpHeader, Rfc4571Deframer, type RtpHeader } from '../../src/index.ts';

export interface ReceivedPacket extends RtpHeader {
  payload: Buffer;
  at: number;
  /** Where it came from (UDP only). */
  sourcePort?: number;
}

export class RtpReceiver {
  readonly packets: ReceivedPacket[] = [];
  #udp: UdpSocket | undefined;
  #server: Server | undefined;
  #sockets: Socket[] = [];

  /** Binds a UDP socket on 127.0.0.1 and returns its port. */
  async listenUdp(): Promise<number> {
    const s = createSocket('udp4');
    s.on('message', (m, rinfo) => this.#push(m, rinfo.port));
    s.bind(0, '127.0.0.1');
    await once(s, 'listening');
    this.#udp = s;
    return s.address().port;
  }

  /** Listens on TCP (the device connects, RFC 4571 framing) and returns the port. */
  async listenTcp(): Promise<number> {
    const server = createServer((sock) => this.#adopt(sock));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    this.#server = server;
    const a = server.address();
    return typeof a === 'object' && a !== null ? a.port : 0;
  }

  /** Connects to the device's media port (offer a=setup:active). */
  async connectTcp(port: number): Promise<void> {
    const sock = connect(port, '127.0.0.1');
    await once(sock, 'connect');
    this.#adopt(sock);
  }

  get connections(): number {
    return this.#sockets.length;
  }

  /** Complete frames (payloads concatenated up to a marker), in arrival order. */
  frames(): Buffer[] {
    const out: Buffer[] = [];
    let parts: Buffer[] = [];
    for (const p of this.packets) {
      parts.push(p.payload);
      if (p.marker) {
        out.push(Buffer.concat(parts));
        parts = [];
      }
    }
    return out;
  }

  close(): void {
    this.#udp?.close();
    for (const s of this.#sockets) s.destroy();
    this.#server?.close();
  }

  #adopt(sock: Socket): void {
    this.#sockets.push(sock);
    const deframer = new Rfc4571Deframer();
    sock.on('data', (chunk: Buffer) => {
      for (const packet of deframer.push(chunk)) this.#push(packet);
    });
    sock.on('error', () => {});
  }

  #push(b: Buffer, sourcePort?: number): void {
    const h = parseRtpHeader(b);
    if (h === undefined) return;
    const p: ReceivedPacket = { ...h, payload: Buffer.from(h.payload), at: Date.now() };
    if (sourcePort !== undefined) p.sourcePort = sourcePort;
    this.packets.push(p);
  }
}

/** PS frame checks: pack header first; key frames add system header and PSM; a video PES follows. */
export function psLayout(frame: Buffer): { pack: boolean; systemHeader: boolean; psm: boolean; videoPes: boolean } {
  const has = (code: number): boolean => frame.includes(Buffer.from([0, 0, 1, code]));
  return { pack: frame.readUInt32BE(0) === 0x000001ba, systemHeader: has(0xbb), psm: has(0xbc), videoPes: has(0xe0) };
}
