/**
 * One RTP receive port of the stand-in media node, bound for real on 127.0.0.1 the way ZLM's
 * openRtpServer binds one: UDP always; with tcp_mode 1 also a TCP listener on the same port number
 * (the device connects); with tcp_mode 2 the node connects out to the device (connectRtpServer).
 * TCP carries RFC 4571 framed RTP. Counts RTP packets and PS pack headers as they arrive.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Rfc4571Deframer, parseRtpHeader, startsWithPsPack } from './rtp-packets.ts';

const HOST = '127.0.0.1';
const BIND_ATTEMPTS = 8; // UDP port from the OS, then the same number on TCP: retry on a clash

export type TcpMode = 0 | 1 | 2;

export interface RtpPortStats {
  readonly port: number;
  readonly tcpMode: TcpMode;
  rtpPackets: number;
  psPackHeaders: number;
  bytes: number;
  /** Packets dropped because their SSRC differs from the one the port was opened for. */
  ssrcMismatches: number;
  /** Datagrams or frames that are not RTP. */
  notRtp: number;
  peer: { ip: string; port: number } | undefined;
}

export interface RtpPortOptions {
  /** 0: from the OS. */
  port: number;
  tcpMode: TcpMode;
  /** Accept only this SSRC; undefined or 0: any. */
  ssrc: number | undefined;
  /** Called for every accepted RTP packet. */
  onPacket(packet: Buffer): void;
}

export class StandInRtpPort {
  readonly stats: RtpPortStats;
  readonly #udp: UdpSocket;
  readonly #tcp: Server | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #opts: RtpPortOptions;
  /** The SSRC accepted (ZLM `updateRtpServerSSRC` changes it); undefined or 0: any. */
  #ssrc: number | undefined;
  #closed = false;

  private constructor(opts: RtpPortOptions, udp: UdpSocket, tcp: Server | undefined) {
    this.#opts = opts;
    this.#ssrc = opts.ssrc;
    this.#udp = udp;
    this.#tcp = tcp;
    this.stats = { port: udp.address().port, tcpMode: opts.tcpMode, rtpPackets: 0, psPackHeaders: 0, bytes: 0, ssrcMismatches: 0, notRtp: 0, peer: undefined };
    udp.on('message', (msg, rinfo) => this.#receive(msg, rinfo.address, rinfo.port));
    tcp?.on('connection', (s) => this.#adopt(s));
  }

  filterSsrc(ssrc: number): void {
    this.#ssrc = ssrc;
  }

  static async open(opts: RtpPortOptions): Promise<StandInRtpPort> {
    for (let attempt = 1; ; attempt++) {
      const udp = await bindUdp(opts.port);
      if (opts.tcpMode !== 1) return new StandInRtpPort(opts, udp, undefined);
      try {
        return new StandInRtpPort(opts, udp, await listenTcp(udp.address().port));
      } catch (err) {
        udp.close();
        if (opts.port !== 0 || attempt >= BIND_ATTEMPTS) throw err;
      }
    }
  }

  /** tcp_mode 2: connect to the device's TCP port and read RTP from it. */
  async connectOut(host: string, port: number): Promise<void> {
    const s = await new Promise<Socket>((resolve, reject) => {
      const sock = connect({ host, port, localAddress: HOST }, () => {
        sock.off('error', reject);
        resolve(sock);
      });
      sock.once('error', reject);
    });
    this.#adopt(s);
  }

  /** Sends from this port's UDP socket: ZLM startSendRtp with `recv_stream_id` sends and receives on one port (talk). */
  sendUdp(packet: Buffer, host: string, port: number): void {
    if (this.#closed) return; // the receive side timed out; ZLM drops the packets too
    this.#udp.send(packet, port, host);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const s of this.#sockets) s.destroy();
    await Promise.all([
      new Promise<void>((resolve) => this.#udp.close(() => resolve())),
      this.#tcp === undefined ? undefined : new Promise<void>((resolve) => this.#tcp?.close(() => resolve())),
    ]);
  }

  #adopt(s: Socket): void {
    this.#sockets.add(s);
    const deframer = new Rfc4571Deframer();
    const peer = { ip: s.remoteAddress ?? '', port: s.remotePort ?? 0 };
    s.on('data', (chunk) => {
      for (const packet of deframer.push(chunk)) this.#receive(packet, peer.ip, peer.port);
    });
    s.on('error', () => undefined); // a device resetting the connection is not the stand-in's failure
    s.on('close', () => this.#sockets.delete(s));
  }

  #receive(packet: Buffer, ip: string, port: number): void {
    const h = parseRtpHeader(packet);
    if (h === undefined) {
      this.stats.notRtp++;
      return;
    }
    if (this.#ssrc !== undefined && this.#ssrc !== 0 && h.ssrc !== this.#ssrc) {
      this.stats.ssrcMismatches++;
      return;
    }
    this.stats.rtpPackets++;
    this.stats.bytes += packet.length;
    if (startsWithPsPack(packet.subarray(h.payloadOffset))) this.stats.psPackHeaders++;
    this.stats.peer ??= { ip, port };
    this.#opts.onPacket(packet);
  }
}

function bindUdp(port: number): Promise<UdpSocket> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    s.once('error', reject);
    s.bind(port, HOST, () => {
      s.off('error', reject);
      s.on('error', () => undefined);
      resolve(s);
    });
  });
}

function listenTcp(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(port, HOST, () => {
      srv.off('error', reject);
      resolve(srv);
    });
  });
}
