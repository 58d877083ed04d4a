// Frame pacing on a fake clock: 25 fps, pause/resume, scale, end of range.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@vms/sip';
import { MediaStream, type MediaStreamOptions } from '../src/media/stream.ts';
import { parseRtpHeader } from '../src/media/rtp.ts';
import type { MediaSink } from '../src/media/sink.ts';

function fakeSink(): MediaSink & { sent: Buffer[] } {
  const sent: Buffer[] = [];
  return {
    mode: 'udp',
    answerPort: 1,
    stats: { packets: 0, bytes: 0, dropped: 0 },
    sent,
    open: () => Promise.resolve(),
    send: (p) => sent.push(p),
    close: () => {},
  };
}

function stream(clock: FakeClock, sink: MediaSink, extra: Partial<MediaStreamOptions> = {}): MediaStream {
  return new MediaStream({
    clock, sink, ssrc: 7, payloadType: 96, fps: 25, gopFrames: 25, keyFrameBytes: 2000, deltaFrameBytes: 500, maxPayload: 1400,
    initialSequence: 0, initialTimestamp: 0, ...extra,
  });
}

const frames = (sink: { sent: Buffer[] }): number => sink.sent.filter((p) => parseRtpHeader(p)?.marker === true).length;

describe('MediaStream', () => {
  it('sends a frame at once, then one every 40 ms; RTP timestamps step by 3600', () => {
    const clock = new FakeClock(0);
    const sink = fakeSink();
    const s = stream(clock, sink);
    s.start();
    assert.equal(frames(sink), 1);
    clock.advance(1000);
    assert.equal(frames(sink), 26);
    const ts = sink.sent.map((p) => parseRtpHeader(p)).filter((h) => h?.marker === true).map((h) => h?.timestamp);
    assert.deepEqual(ts.slice(0, 3), [0, 3600, 7200]);
    assert.equal(s.framesSent, 26);
  });

  it('pause stops frames, resume continues, scale 2 doubles the rate', () => {
    const clock = new FakeClock(0);
    const sink = fakeSink();
    const s = stream(clock, sink);
    s.start();
    s.pause();
    clock.advance(1000);
    assert.equal(frames(sink), 1);
    assert.equal(s.state, 'paused');
    s.setScale(2);
    s.resume();
    clock.advance(1000);
    assert.equal(frames(sink), 1 + 1 + 50);
  });

  it('ends after durationMs of media, calling onEnd once; stop() cancels the timer', () => {
    const clock = new FakeClock(0);
    const sink = fakeSink();
    let ended = 0;
    const s = stream(clock, sink, { durationMs: 200, onEnd: () => ended++ });
    s.start();
    clock.advance(5000);
    assert.equal(frames(sink), 5);
    assert.deepEqual([s.state, ended, clock.pending], ['ended', 1, 0]);
    const live = stream(clock, fakeSink());
    live.start();
    live.stop();
    assert.equal(clock.pending, 0);
  });

  it('a key frame every gopFrames, and after a seek', () => {
    const clock = new FakeClock(0);
    const sink = fakeSink();
    const s = stream(clock, sink, { gopFrames: 3 });
    s.start();
    clock.advance(40 * 3);
    s.seek(10);
    clock.advance(40);
    // key frames carry the 15-byte system header right after the 14-byte pack header
    const firstOfFrame = sink.sent.filter((_, i) => i === 0 || parseRtpHeader(sink.sent[i - 1] as Buffer)?.marker === true);
    const keys = firstOfFrame.map((p) => (parseRtpHeader(p)?.payload.readUInt32BE(14) ?? 0) === 0x000001bb);
    assert.deepEqual(keys, [true, false, false, true, true]);
    assert.equal(s.positionMs, 10_040);
  });
});
