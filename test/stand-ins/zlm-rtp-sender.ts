/**
 * startSendRtp of the stand-in: re-sends every RTP packet the stream receives to a destination,
 * with the SSRC the caller asked for (what ZLM does when a platform forwards a stream to its
 * upstream, CASC-6). UDP, or TCP active (connect to dst, RFC 4571 framing). With ZLM's
 * `recv_stream_id` (two-way talk) the packets leave from the receive port of that stream instead
 * (`through`), so the device's audio comes back to the port it hears from.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { frameRfc4571, withSsrc } from './rtp-packets.ts';

const HOST = '127.0.0.1';

export interface RtpSenderOptions {
  ssrc: number;
  dstHost: string;
  dstPort: number;
  udp: boolean;
  /** 0: from the OS. */
  srcPort: number;
}

/** The receive port a talk sender sends from. */
export interface SharedPort {
  readonly port: number;
  sendUdp(packet: Buffer, host: string, port: number): void;
  close(): Promise<void>;
}

export class StandInRtpSender {
  sent = 0;
  readonly #opts: RtpSenderOptions;
  readonly #udp: UdpSocket | undefined;
  readonly #tcp: Socket | undefined;
  readonly #through: SharedPort | undefined;
  readonly localPort: number;

  private constructor(opts: RtpSenderOptions, udp: UdpSocket | undefined, tcp: Socket | undefined, through?: SharedPort) {
    this.#opts = opts;
    this.#udp = udp;
    this.#tcp = tcp;
    this.#through = through;
    this.localPort = through?.port ?? udp?.address().port ?? tcp?.localPort ?? 0;
  }

  /** UDP from an existing receive port (talk: `recv_stream_id`); closing the sender closes that port's stream. */
  static through(opts: RtpSenderOptions, port: SharedPort): StandInRtpSender {
    return new StandInRtpSender(opts, undefined, undefined, port);
  }

  static async start(opts: RtpSenderOptions): Promise<StandInRtpSender> {
    if (opts.udp) {
      const udp = createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(opts.srcPort, HOST, () => {
          udp.off('error', reject);
          resolve();
        });
      });
      udp.on('error', () => undefined);
      return new StandInRtpSender(opts, udp, undefined);
    }
    const tcp = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host: opts.dstHost, port: opts.dstPort, localAddress: HOST, localPort: opts.srcPort || undefined }, () => {
        s.off('error', reject);
        resolve(s);
      });
      s.once('error', reject);
    });
    tcp.on('error', () => undefined);
    return new StandInRtpSender(opts, undefined, tcp);
  }

  send(packet: Buffer): void {
    const out = withSsrc(packet, this.#opts.ssrc);
    if (this.#through !== undefined) this.#through.sendUdp(out, this.#opts.dstHost, this.#opts.dstPort);
    else if (this.#udp !== undefined) this.#udp.send(out, this.#opts.dstPort, this.#opts.dstHost);
    else this.#tcp?.write(frameRfc4571(out));
    this.sent++;
  }

  async close(): Promise<void> {
    await this.#through?.close();
    this.#tcp?.destroy();
    if (this.#udp !== undefined) await new Promise<void>((resolve) => this.#udp?.close(() => resolve()));
  }
}
