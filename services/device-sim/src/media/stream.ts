// One session's video: synthetic H.264 access units muxed into PS, packetised into RTP, paced at the
// frame rate (times the playback scale) on the injected clock. Live streams run until stopped;
// playback/download streams end after `durationMs` of media time and report it through `onEnd`.
import { randomInt } from 'node:crypto';
import type { Clock, TimerHandle } from '@vms/sip';
import { psFrame, syntheticAccessUnit } from './ps.ts';
import { packetizeFrame, RTP_VIDEO_CLOCK_HZ, type RtpSequenceState } from './rtp.ts';
import type { MediaSink } from './sink.ts';

export interface FrameShape {
  fps: number;
  /** Frames from one key frame to the next. */
  gopFrames: number;
  keyFrameBytes: number;
  deltaFrameBytes: number;
  /** Max PS bytes per RTP packet. */
  maxPayload: number;
}

export interface MediaStreamOptions extends FrameShape {
  clock: Clock;
  sink: MediaSink;
  /** RTP SSRC: the y= value as a number (GB/T 28181 Annex F). */
  ssrc: number;
  payloadType: number;
  /** Media time after which the stream ends (playback/download); undefined = live, until stopped. */
  durationMs?: number | undefined;
  /** Speed multiplier: MANSRTSP Scale, or a=downloadspeed. Its magnitude paces the frames. */
  scale?: number;
  /** Called once when `durationMs` of media has been sent. */
  onEnd?: () => void;
  /** First RTP sequence number / timestamp (random per RFC 3550 §5.1 by default). */
  initialSequence?: number;
  initialTimestamp?: number;
}

export type MediaStreamState = 'idle' | 'playing' | 'paused' | 'ended' | 'stopped';

export class MediaStream {
  #state: MediaStreamState = 'idle';
  #timer: TimerHandle | undefined;
  #nextDue = 0;
  #frame = 0;
  #sinceKey = 0;
  #positionMs = 0;
  #scale: number;
  #rtpTimestamp: number;
  readonly #rtp: RtpSequenceState;

  constructor(private readonly o: MediaStreamOptions) {
    this.#scale = o.scale ?? 1;
    this.#rtp = { ssrc: o.ssrc, payloadType: o.payloadType, sequence: (o.initialSequence ?? randomUint(16)) & 0xffff };
    this.#rtpTimestamp = o.initialTimestamp ?? randomUint(32);
  }

  get state(): MediaStreamState {
    return this.#state;
  }
  /** Media time sent so far, ms from the start of the range (after seeks: from the seek point). */
  get positionMs(): number {
    return this.#positionMs;
  }
  get framesSent(): number {
    return this.#frame;
  }
  get scale(): number {
    return this.#scale;
  }

  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'playing';
    this.#nextDue = this.o.clock.now();
    this.#tick();
  }

  /** MANSRTSP PAUSE: no packets until resume(). */
  pause(): void {
    if (this.#state !== 'playing') return;
    this.#state = 'paused';
    this.#cancel();
  }

  /** MANSRTSP PLAY (Range: npt=now-): continue from where it paused. */
  resume(): void {
    if (this.#state !== 'paused') return;
    this.#state = 'playing';
    this.#nextDue = this.o.clock.now();
    this.#tick();
  }

  /** MANSRTSP PLAY (Range: npt=<s>-): continue from `seconds` into the range, with a key frame. */
  seek(seconds: number): void {
    if (this.#state === 'stopped' || this.#state === 'ended') return;
    this.#positionMs = Math.max(0, seconds * 1000);
    this.#sinceKey = 0;
  }

  /** MANSRTSP PLAY (Scale: x). Only the magnitude matters here: frames are paced at fps × |x|. */
  setScale(scale: number): void {
    if (!Number.isFinite(scale) || scale === 0) return;
    this.#scale = scale;
  }

  stop(): void {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    this.#cancel();
  }

  #cancel(): void {
    if (this.#timer !== undefined) this.o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    this.#timer = undefined;
    if (this.#state !== 'playing') return;
    this.#sendFrame();
    if (this.o.durationMs !== undefined && this.#positionMs >= this.o.durationMs) {
      this.#state = 'ended';
      this.o.onEnd?.();
      return;
    }
    // Absolute schedule: timer lateness does not accumulate into a lower frame rate.
    this.#nextDue += 1000 / this.o.fps / Math.abs(this.#scale);
    this.#timer = this.o.clock.setTimeout(() => this.#tick(), Math.max(0, this.#nextDue - this.o.clock.now()));
  }

  #sendFrame(): void {
    const key = this.#sinceKey === 0;
    const au = syntheticAccessUnit(key, this.#frame, key ? this.o.keyFrameBytes : this.o.deltaFrameBytes);
    const pts = Math.round((this.#positionMs * RTP_VIDEO_CLOCK_HZ) / 1000);
    const ps = psFrame(au, pts, key);
    for (const packet of packetizeFrame(ps, this.#rtpTimestamp >>> 0, this.#rtp, this.o.maxPayload)) this.o.sink.send(packet);
    this.#frame++;
    this.#sinceKey = (this.#sinceKey + 1) % this.o.gopFrames;
    this.#positionMs += 1000 / this.o.fps;
    this.#rtpTimestamp = (this.#rtpTimestamp + RTP_VIDEO_CLOCK_HZ / this.o.fps) >>> 0;
  }
}

function randomUint(bits: 16 | 32): number {
  return randomInt(0, 2 ** bits);
}
