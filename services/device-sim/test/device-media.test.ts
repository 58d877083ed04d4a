// INVITE → SDP answer → ACK → RTP/PS actually received, over UDP, TCP (device connects) and TCP
// (platform connects); BYE stops it; playback INFO (MANSRTSP) honoured; MediaStatus 121 at the end.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  buildDownloadOffer, buildMansrtspPause, buildMansrtspResume, buildMansrtspSpeed, buildPlaybackOffer, buildPlayOffer, decodeMediaStatusNotify,
  describeSdp, MANSRTSP_CONTENT_TYPE, parseSdp, type MediaTransport,
} from '@vms/gb28181';
import type { SimulatedDevice } from '../src/index.ts';
import { DEVICE_ID, registeredDevice } from './support/device.ts';
import { SERVER_ID, TestPlatform } from './support/platform.ts';
import { psLayout, RtpReceiver } from './support/rtp-receiver.ts';

const SSRC = '0340200001';
let platform: TestPlatform;
let device: SimulatedDevice;
let receivers: RtpReceiver[] = [];

function receiver(): RtpReceiver {
  const r = new RtpReceiver();
  receivers.push(r);
  return r;
}

before(async () => {
  platform = await TestPlatform.start();
  device = await registeredDevice(platform, { channels: 2, playbackMaxMs: 600 });
});
afterEach(() => {
  for (const r of receivers) r.close();
  receivers = [];
});
after(async () => {
  await device.close();
  await platform.close();
});

describe('live Play', () => {
  const cases: Array<{ transport: MediaTransport; label: string }> = [
    { transport: 'udp', label: 'UDP' },
    { transport: 'tcp-passive', label: 'TCP, platform listens (a=setup:passive): device connects' },
    { transport: 'tcp-active', label: 'TCP, platform connects (a=setup:active): device listens' },
  ];
  for (const { transport, label } of cases) {
    it(`${label}: answer echoes y=, RTP PT 96 with the y= SSRC carries PS at ~25 fps, BYE stops it`, async () => {
      const rx = receiver();
      const port = transport === 'udp' ? await rx.listenUdp() : transport === 'tcp-passive' ? await rx.listenTcp() : 9;
      const channelId = device.channelIds[1] as string;
      const offer = buildPlayOffer({ ownerId: SERVER_ID, address: '127.0.0.1', port, ssrc: SSRC, transport });
      const { dialog, answer, callId } = await platform.invite(DEVICE_ID, channelId, offer);

      const a = describeSdp(parseSdp(answer));
      assert.equal(a.ssrc, SSRC, 'y= echoed');
      assert.equal(a.ownerId, channelId);
      assert.equal(a.sessionName, 'Play');
      assert.deepEqual(a.payloads, [{ payloadType: 96, encoding: 'PS', clockRate: 90000 }]);
      assert.equal(a.direction, 'sendonly');
      assert.match(a.format ?? '', /^v\/2\/5\/25\/1\/2048a\/\/\/$/);
      assert.equal(a.transport, transport === 'udp' ? 'udp' : 'tcp');
      if (transport === 'tcp-passive') assert.equal(a.setup, 'active');
      if (transport === 'tcp-active') {
        assert.equal(a.setup, 'passive');
        assert.ok(a.port > 0 && a.port !== 9);
        await rx.connectTcp(a.port);
      }

      await platform.waitFor(() => rx.frames().length >= 10, 'ten frames');
      const t0 = Date.now();
      const n0 = rx.frames().length;
      await sleep(1000);
      const fps = ((rx.frames().length - n0) * 1000) / (Date.now() - t0);
      assert.ok(fps > 18 && fps < 32, `~25 fps, got ${fps.toFixed(1)}`);

      const first = rx.packets[0] ?? assert.fail('no packet');
      assert.ok(rx.packets.every((p) => p.payloadType === 96 && p.ssrc === 340200001), 'PT 96, SSRC = y=');
      assert.ok(rx.packets.every((p, i) => i === 0 || p.sequence === ((rx.packets[i - 1]?.sequence ?? 0) + 1) % 65536), 'consecutive sequence numbers');
      if (transport === 'udp') assert.equal(first.sourcePort, a.port, 'RTP from the answered port');
      const frames = rx.frames();
      assert.deepEqual(psLayout(frames[0] as Buffer), { pack: true, systemHeader: true, psm: true, videoPes: true }, 'key frame');
      assert.deepEqual(psLayout(frames[1] as Buffer), { pack: true, systemHeader: false, psm: false, videoPes: true }, 'P frame');
      assert.equal(frames[0]?.subarray(0, 14).toString('hex'), first.payload.subarray(0, 14).toString('hex'));
      const ts = rx.packets.filter((p) => p.marker).map((p) => p.timestamp);
      assert.equal(((ts[1] as number) - (ts[0] as number)) >>> 0, 3600, '90 kHz clock, 25 fps');

      const session = device.sessions.find((s) => s.callId === callId) ?? assert.fail('no session');
      assert.equal(session.state, 'playing');
      await dialog.destroy(); // BYE
      await platform.waitFor(() => session.state === 'closed', 'session closed by BYE');
      await sleep(100);
      const stopped = rx.packets.length;
      await sleep(300);
      assert.equal(rx.packets.length, stopped, 'no RTP after BYE');
      assert.ok(session.sinkStats.packets >= stopped);
    });
  }

  it('an offer for an unknown channel: 404; s=Talk: 488', async () => {
    const offer = buildPlayOffer({ ownerId: SERVER_ID, address: '127.0.0.1', port: 10000, ssrc: SSRC });
    await assert.rejects(platform.invite(DEVICE_ID, '34020000001310009999', offer), (e: unknown) => (e as { response?: { status: number } }).response?.status === 404);
    const talk = offer.replace('s=Play', 's=Talk');
    await assert.rejects(platform.invite(DEVICE_ID, device.channelIds[0] as string, talk), (e: unknown) => (e as { response?: { status: number } }).response?.status === 488);
  });
});

describe('playback', () => {
  const start = new Date('2024-05-01T08:00:00+08:00');
  const end = new Date('2024-05-01T09:00:00+08:00');

  it('INFO PAUSE stops RTP, PLAY resumes, Scale is recorded; all kept in session.infos', async () => {
    const rx = receiver();
    const port = await rx.listenUdp();
    const channelId = device.channelIds[0] as string;
    const offer = buildPlaybackOffer({ ownerId: SERVER_ID, address: '127.0.0.1', port, ssrc: '1340200002', channelId, start, end });
    const { dialog, answer, callId } = await platform.invite(DEVICE_ID, channelId, offer);
    const a = describeSdp(parseSdp(answer));
    assert.equal(a.sessionName, 'Playback');
    assert.equal(a.ssrc, '1340200002');
    assert.deepEqual([a.start, a.stop], [String(start.getTime() / 1000), String(end.getTime() / 1000)]);
    const session = device.sessions.find((s) => s.callId === callId) ?? assert.fail('no session');
    await platform.waitFor(() => rx.packets.length > 0, 'RTP');

    const info = (body: string) => dialog.request('INFO', { body, contentType: MANSRTSP_CONTENT_TYPE });
    assert.equal((await info(buildMansrtspPause(1))).status, 200);
    assert.equal(session.state, 'paused');
    await sleep(100);
    const paused = rx.packets.length;
    await sleep(200);
    assert.equal(rx.packets.length, paused, 'no RTP while paused');
    assert.equal((await info(buildMansrtspResume(2))).status, 200);
    await platform.waitFor(() => rx.packets.length > paused, 'RTP again after PLAY');
    assert.equal((await info(buildMansrtspSpeed(3, 2))).status, 200);
    assert.equal(session.scale, 2);
    assert.deepEqual(session.infos.map((r) => [r.method, r.cseq]), [['PAUSE', 1], ['PLAY', 2], ['PLAY', 3]]);
    assert.equal(session.infos[2]?.scale, 2);
    await dialog.destroy();
  });

  it('at the end of the range (capped by playbackMaxMs): MediaStatus 121 with the INVITE Call-ID, RTP stops', async () => {
    const rx = receiver();
    const port = await rx.listenUdp();
    const channelId = device.channelIds[1] as string;
    const offer = buildPlaybackOffer({ ownerId: SERVER_ID, address: '127.0.0.1', port, ssrc: '1340200003', channelId, start, end });
    const { dialog, callId } = await platform.invite(DEVICE_ID, channelId, offer);
    const status = await platform.waitFor(() => platform.messagesOf('MediaStatus').find((m) => m.req.headers.get('Call-ID') === callId), 'MediaStatus');
    const notify = decodeMediaStatusNotify(status.msg);
    assert.deepEqual([notify.deviceId, notify.notifyType], [channelId, '121']);
    const session = device.sessions.find((s) => s.callId === callId) ?? assert.fail('no session');
    assert.equal(session.state, 'ended');
    assert.equal(session.framesSent, 15, '600 ms of media at 25 fps');
    const sent = rx.packets.length;
    await sleep(200);
    assert.equal(rx.packets.length, sent, 'nothing after the end');
    await dialog.destroy();
  });

  it('Download at a=downloadspeed:4 sends the range four times faster', async () => {
    const rx = receiver();
    const port = await rx.listenUdp();
    const channelId = device.channelIds[0] as string;
    const offer = buildDownloadOffer({ ownerId: SERVER_ID, address: '127.0.0.1', port, ssrc: '1340200004', channelId, start, end, downloadSpeed: 4 });
    const t0 = Date.now();
    const { dialog, answer, callId } = await platform.invite(DEVICE_ID, channelId, offer);
    assert.equal(describeSdp(parseSdp(answer)).fileSize, String(3600 * 256 * 1024));
    await platform.waitFor(() => platform.messagesOf('MediaStatus').some((m) => m.req.headers.get('Call-ID') === callId), 'MediaStatus');
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 500, `600 ms of media at 4x took ${elapsed} ms`);
    await dialog.destroy();
  });
});
