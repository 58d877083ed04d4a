/**
 * Stream state of the ZLM stand-in: one entry per openRtpServer stream id, with the media source
 * life cycle ZLM gives it — registered on the first RTP packet (on_stream_changed regist=true, once
 * per schema), RTP silence for the timeout closes the port (on_rtp_server_timeout), readers dropping
 * to 0 fire on_stream_none_reader and a `close: true` reply unregisters the stream.
 */
import type { StandInHookSender } from './zlm-hook-sender.ts';
import { StandInRtpPort, type RtpPortStats, type TcpMode } from './zlm-rtp-port.ts';
import type { StandInRtpSender } from './zlm-rtp-sender.ts';

export const APP = 'rtp';
export const VHOST = '__defaultVhost__';
const ORIGIN_RTP_PUSH = 3; // ZLM MediaOriginType::rtp_push

export interface StreamStats extends RtpPortStats {
  readonly streamId: string;
  readonly registered: boolean;
  readonly readers: number;
  /** RTP packets re-sent by startSendRtp senders. */
  readonly forwarded: number;
}

export interface StandInStream {
  readonly id: string;
  readonly port: StandInRtpPort;
  readonly ssrc: number | undefined;
  readonly reUsePort: boolean;
  registered: boolean;
  readers: number;
  timer: NodeJS.Timeout | undefined;
  noneReaderTimer: NodeJS.Timeout | undefined;
  /** startSendRtp senders by SSRC. */
  readonly senders: Map<string, StandInRtpSender>;
}

export interface StreamTimings {
  rtpTimeoutMs: number;
  noneReaderDelayMs: number;
  schemas: readonly string[];
}

export interface OpenParams {
  id: string;
  port: number;
  tcpMode: TcpMode;
  ssrc: number | undefined;
  reUsePort: boolean;
}

export class StandInStreams {
  readonly #streams = new Map<string, StandInStream>();
  readonly #hooks: StandInHookSender;
  readonly #t: StreamTimings;

  constructor(hooks: StandInHookSender, timings: StreamTimings) {
    this.#hooks = hooks;
    this.#t = timings;
  }

  get(id: string): StandInStream | undefined {
    return this.#streams.get(id);
  }

  get size(): number {
    return this.#streams.size;
  }

  registered(): StandInStream[] {
    return [...this.#streams.values()].filter((s) => s.registered);
  }

  async open(p: OpenParams): Promise<StandInStream> {
    const holder: { s?: StandInStream } = {};
    const port = await StandInRtpPort.open({ port: p.port, tcpMode: p.tcpMode, ssrc: p.ssrc, onPacket: (b) => holder.s && this.#onPacket(holder.s, b) });
    const s: StandInStream = { id: p.id, port, ssrc: p.ssrc, reUsePort: p.reUsePort, registered: false, readers: 0, timer: undefined, noneReaderTimer: undefined, senders: new Map() };
    holder.s = s;
    this.#streams.set(s.id, s);
    this.#armTimeout(s);
    return s;
  }

  /** Closes the port and senders; a registered stream unregisters. */
  async close(s: StandInStream): Promise<void> {
    this.#streams.delete(s.id);
    clearTimeout(s.timer);
    clearTimeout(s.noneReaderTimer);
    await Promise.all([s.port.close(), ...[...s.senders.values()].map((x) => x.close())]);
    s.senders.clear();
    await this.#register(s, false);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#streams.values()].map((s) => this.close(s)));
  }

  /** Simulated viewers; the drop to 0 arms on_stream_none_reader. */
  setReaders(s: StandInStream, delta: number): number {
    const before = s.readers;
    s.readers = Math.max(0, s.readers + delta);
    if (before > 0 && s.readers === 0) {
      clearTimeout(s.noneReaderTimer);
      s.noneReaderTimer = setTimeout(() => void this.#noneReader(s), this.#t.noneReaderDelayMs);
      s.noneReaderTimer.unref();
    }
    return s.readers;
  }

  /** getMediaList entries: one per registered stream and schema. */
  mediaList(): Array<Record<string, unknown>> {
    return this.registered().flatMap((s) =>
      this.#t.schemas.map((schema) => ({
        ...this.#key(schema, s),
        readerCount: s.readers,
        totalReaderCount: s.readers * this.#t.schemas.length,
        originType: ORIGIN_RTP_PUSH,
        originTypeStr: 'rtp_push',
        aliveSecond: 0,
        bytesSpeed: 0,
      })),
    );
  }

  stats(id: string): StreamStats | undefined {
    const s = this.#streams.get(id);
    if (s === undefined) return undefined;
    const forwarded = [...s.senders.values()].reduce((n, x) => n + x.sent, 0);
    return { ...s.port.stats, streamId: id, registered: s.registered, readers: s.readers, forwarded };
  }

  #key(schema: string, s: StandInStream): Record<string, unknown> {
    return { vhost: VHOST, app: APP, stream: s.id, schema };
  }

  #onPacket(s: StandInStream, packet: Buffer): void {
    this.#armTimeout(s);
    for (const sender of s.senders.values()) sender.send(packet);
    if (!s.registered) void this.#register(s, true);
  }

  async #register(s: StandInStream, regist: boolean): Promise<void> {
    if (s.registered === regist) return;
    s.registered = regist;
    for (const schema of this.#t.schemas) {
      const media = regist ? { totalReaderCount: s.readers, originType: ORIGIN_RTP_PUSH, originTypeStr: 'rtp_push' } : {};
      await this.#hooks.fire('on_stream_changed', { regist, ...this.#key(schema, s), ...media });
    }
  }

  #armTimeout(s: StandInStream): void {
    clearTimeout(s.timer);
    s.timer = setTimeout(() => void this.#timedOut(s), this.#t.rtpTimeoutMs);
    s.timer.unref();
  }

  async #timedOut(s: StandInStream): Promise<void> {
    if (this.#streams.get(s.id) !== s) return;
    await this.close(s);
    await this.#hooks.fire('on_rtp_server_timeout', {
      local_port: s.port.stats.port,
      re_use_port: s.reUsePort,
      ssrc: s.ssrc ?? 0,
      stream_id: s.id,
      tcp_mode: s.port.stats.tcpMode,
    });
  }

  async #noneReader(s: StandInStream): Promise<void> {
    if (this.#streams.get(s.id) !== s || s.readers > 0 || !s.registered) return;
    const reply = await this.#hooks.fire('on_stream_none_reader', this.#key(this.#t.schemas[0] ?? 'rtsp', s));
    if (reply?.code === 0 && reply.close === true && s.readers === 0) await this.#register(s, false);
  }
}
