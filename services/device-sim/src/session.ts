// One media session (an INVITE dialog): RTP starts after the ACK, follows MANSRTSP in INFO
// (GB/T 28181-2016 Annex B: PAUSE / PLAY Range / PLAY Scale / TEARDOWN), ends at BYE. A playback or
// download whose range has been sent reports it once through `onRangeEnd` (MediaStatus 121, §9.8).
import { EventEmitter } from 'node:events';
import { isGbError, parseMansrtsp, type MansrtspRequest, type SdpSummary } from '@vms/gb28181';
import { SipStatus, type DialogTerminationReason, type RequestContext, type SipLogger, type SipRequest } from '@vms/sip';
import { MediaStream, type MediaStreamState } from './media/stream.ts';
import type { MediaSink, MediaSinkStats } from './media/sink.ts';
import { MAX_RTP_PAYLOAD_BYTES, type ResolvedDeviceOptions } from './options.ts';
import type { MediaPlan, SessionKind } from './sdp-answer.ts';

export type SessionState = 'answered' | MediaStreamState | 'failed' | 'closed';

export interface MediaSessionEvents {
  /** RTP flows (after ACK, media path open). */
  streaming: [];
  info: [request: MansrtspRequest];
  /** Playback/download range fully sent. */
  'range-end': [];
  closed: [reason: DialogTerminationReason | 'media-failed' | 'media-closed'];
}

export interface MediaSessionInit {
  callId: string;
  channelId: string;
  offer: SdpSummary;
  plan: MediaPlan;
  sink: MediaSink;
  o: ResolvedDeviceOptions;
  log: SipLogger;
}

export class MediaSession extends EventEmitter<MediaSessionEvents> {
  readonly callId: string;
  readonly channelId: string;
  readonly kind: SessionKind;
  readonly offer: SdpSummary;
  readonly plan: MediaPlan;
  /** Every MANSRTSP request received in INFO, in order. */
  readonly infos: MansrtspRequest[] = [];
  /**
   * Quirk: false makes the device swallow INFO (recorded, never answered), as devices that do not implement
   * MANSRTSP or lost their dialog do; the platform must still answer its caller in time.
   */
  answersInfo = true;
  #stream: MediaStream | undefined;
  #state: 'answered' | 'failed' | 'closed' | 'running' = 'answered';
  readonly #sink: MediaSink;
  readonly #o: ResolvedDeviceOptions;
  readonly #log: SipLogger;

  constructor(init: MediaSessionInit) {
    super();
    this.callId = init.callId;
    this.channelId = init.channelId;
    this.kind = init.plan.kind;
    this.offer = init.offer;
    this.plan = init.plan;
    this.#sink = init.sink;
    this.#o = init.o;
    this.#log = init.log;
    this.#sink.onClosed = (err) => {
      this.#log.debug({ err, callId: this.callId }, 'device media connection closed by peer');
      this.close('media-closed');
    };
  }

  get state(): SessionState {
    return this.#state === 'running' ? (this.#stream?.state ?? 'answered') : this.#state;
  }
  /** The RTP SSRC (y= as a number). */
  get ssrc(): number {
    return Number(this.plan.ssrc);
  }
  get sinkStats(): Readonly<MediaSinkStats> {
    return this.#sink.stats;
  }
  get framesSent(): number {
    return this.#stream?.framesSent ?? 0;
  }
  get scale(): number {
    return this.#stream?.scale ?? this.plan.scale;
  }

  /** Media length to send: the t= range, capped by `playbackMaxMs`; live streams are endless. */
  get durationMs(): number | undefined {
    if (this.kind === 'Play') return undefined;
    const caps = [this.plan.rangeMs, this.#o.playbackMaxMs].filter((v): v is number => v !== undefined);
    return caps.length === 0 ? undefined : Math.min(...caps);
  }

  /** On ACK: open the media path (connect / await the platform's connection), then stream. */
  async begin(): Promise<void> {
    if (this.#state !== 'answered') return;
    try {
      await this.#sink.open();
    } catch (err) {
      if (this.#state !== 'answered') return;
      this.#log.warn({ err, callId: this.callId }, 'device media path failed');
      this.#state = 'failed';
      this.#sink.close();
      this.emit('closed', 'media-failed');
      return;
    }
    if (this.#state !== 'answered') return;
    const o = this.#o;
    this.#stream = new MediaStream({
      clock: o.clock,
      sink: this.#sink,
      ssrc: this.ssrc,
      payloadType: this.plan.payloadType,
      fps: o.fps,
      gopFrames: o.gopFrames,
      keyFrameBytes: o.keyFrameBytes,
      deltaFrameBytes: o.deltaFrameBytes,
      maxPayload: MAX_RTP_PAYLOAD_BYTES,
      durationMs: this.durationMs,
      scale: this.plan.scale,
      onEnd: () => this.emit('range-end'),
    });
    this.#state = 'running';
    this.#stream.start();
    this.emit('streaming');
  }

  /** INFO with a MANSRTSP body; answered 200, or 400 when unparsable. */
  handleInfo(req: SipRequest, ctx: RequestContext): void {
    let r: MansrtspRequest;
    try {
      r = parseMansrtsp(req.body);
    } catch (err) {
      if (!isGbError(err)) throw err;
      ctx.reply(SipStatus.BadRequest);
      return;
    }
    this.infos.push(r);
    if (!this.answersInfo) return;
    const s = this.#stream;
    switch (r.method) {
      case 'PAUSE':
        s?.pause();
        break;
      case 'PLAY':
        if (r.scale !== undefined) s?.setScale(r.scale);
        if (r.range !== undefined && r.range.start !== 'now') s?.seek(r.range.start);
        s?.resume();
        break;
      case 'TEARDOWN':
        s?.stop();
        break;
    }
    ctx.reply(SipStatus.OK);
    this.emit('info', r);
  }

  /** BYE, dialog end, device close: no more RTP. Idempotent. */
  close(reason: DialogTerminationReason | 'media-closed'): void {
    if (this.#state === 'closed') return;
    const wasFailed = this.#state === 'failed';
    this.#state = 'closed';
    this.#stream?.stop();
    this.#sink.close();
    if (!wasFailed) this.emit('closed', reason);
  }
}
