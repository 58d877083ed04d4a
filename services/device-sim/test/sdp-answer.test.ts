// From offer to media plan and SDP answer (GB/T 28181-2016 §9.2, RFC 4145 roles).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildDownloadOffer, buildPlaybackOffer, buildPlayOffer, describeSdp, parseSdp } from '@vms/gb28181';
import { DeviceSimError } from '../src/errors.ts';
import { buildAnswerSdp, planMedia } from '../src/sdp-answer.ts';

const offer = (sdp: string) => describeSdp(parseSdp(sdp));
const base = { ownerId: '34020000002000000001', address: '10.0.0.5', port: 30000, ssrc: '0340200001' };
const never = (): string => assert.fail('no fallback SSRC expected');

describe('planMedia', () => {
  it('live UDP: send to c=/m=, y= kept, endless', () => {
    assert.deepEqual(planMedia(offer(buildPlayOffer(base)), never), {
      kind: 'Play', ssrc: '0340200001', mode: 'udp', remoteHost: '10.0.0.5', remotePort: 30000, payloadType: 96, rangeMs: undefined, scale: 1,
      timing: { start: '0', stop: '0' },
    });
  });
  it('TCP: setup:passive → the device connects; setup:active → the device listens', () => {
    assert.equal(planMedia(offer(buildPlayOffer({ ...base, transport: 'tcp-passive' })), never).mode, 'tcp-connect');
    assert.equal(planMedia(offer(buildPlayOffer({ ...base, transport: 'tcp-active', port: 9 })), never).mode, 'tcp-listen');
  });
  it('playback: range from t=; download: scale from a=downloadspeed', () => {
    const history = { ...base, channelId: '34020000001310000001', start: new Date(1_700_000_000_000), end: new Date(1_700_000_600_000) };
    const pb = planMedia(offer(buildPlaybackOffer(history)), never);
    assert.deepEqual([pb.kind, pb.rangeMs, pb.scale], ['Playback', 600_000, 1]);
    const dl = planMedia(offer(buildDownloadOffer({ ...history, downloadSpeed: 4 })), never);
    assert.deepEqual([dl.kind, dl.rangeMs, dl.scale], ['Download', 600_000, 4]);
  });
  it('an invalid y= gets a fallback SSRC; s=Talk and no PS payload are refused', () => {
    const sdp = buildPlayOffer(base).replace('y=0340200001', 'y=34020000001320000001');
    assert.equal(planMedia(offer(sdp), () => '0340209999').ssrc, '0340209999');
    const talk = buildPlayOffer(base).replace('s=Play', 's=Talk');
    assert.throws(() => planMedia(offer(talk), never), (e: unknown) => e instanceof DeviceSimError && e.code === 'DSIM_ERR_BAD_OFFER');
    const h264Only = buildPlayOffer({ ...base, payloads: [{ payloadType: 98, encoding: 'H264', clockRate: 90000 }] });
    assert.throws(() => planMedia(offer(h264Only), never), (e: unknown) => e instanceof DeviceSimError && e.code === 'DSIM_ERR_BAD_OFFER');
  });
});

describe('buildAnswerSdp', () => {
  it('the answer text, written out by hand (TCP, device connects)', () => {
    const plan = planMedia(offer(buildPlayOffer({ ...base, transport: 'tcp-passive' })), never);
    assert.equal(
      buildAnswerSdp(plan, { channelId: '34020000001310000001', address: '10.0.0.9', port: 9, fps: 25 }),
      [
        'v=0',
        'o=34020000001310000001 0 0 IN IP4 10.0.0.9',
        's=Play',
        'c=IN IP4 10.0.0.9',
        't=0 0',
        'm=video 9 TCP/RTP/AVP 96',
        'a=sendonly',
        'a=rtpmap:96 PS/90000',
        'a=setup:active',
        'a=connection:new',
        'y=0340200001',
        'f=v/2/5/25/1/2048a///',
        '',
      ].join('\r\n'),
    );
  });
});
