// Live view end to end on one instance (SPEC §8 media, §9, §12): a real signaling process, the ZLM
// stand-in (really binds RTP ports and counts packets; NOT ZLMediaKit) and a simulated IPC/NVR that
// answers INVITE and sends RTP/PS. Proves: play → RTP reaches the media node → URLs; a second viewer
// shares the stream; stop → BYE at the device and RTP stops; the no-reader hook stops the device's
// stream; TCP passive and TCP active carry RTP too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SimulatedDevice } from '@vms/device-sim';
import { sleep, waitFor } from '@vms/harness';
import { createZlmClient } from '@vms/media';
import { call, startSimDevice, startSingleStack, ZLM_SECRET, type SingleStack, type StartAnswer } from './media-e2e-fixture.ts';

const NVR = '34020000001180000001';
let stack: SingleStack;
let nvr: SimulatedDevice;
let ch: string[];

before(async () => {
  stack = await startSingleStack();
  nvr = await startSimDevice(stack.instance, NVR, { channels: 4 });
  ch = nvr.channelIds;
});

after(async () => {
  await nvr?.close();
  await stack?.stop();
});

const liveSessionsOf = (channelId: string) => nvr.sessions.filter((s) => s.channelId === channelId && s.kind === 'Play');
const packets = (streamId: string): number => stack.zlm.stats(streamId)?.rtpPackets ?? 0;

describe('live view on one instance', () => {
  it('play → the device INVITEd → RTP/PS counted by the media node → play URLs; a second viewer shares the stream', async () => {
    const first = (await call<StartAnswer>(stack.instance, 'POST', `/vms/play/start?channelId=${ch[0]}`)).data;
    assert.equal(first.mediaNodeId, 'zlm-standin-1');
    assert.match(first.ssrc, /^0\d{9}$/, 'live SSRC starts with 0 (GB/T 28181 Annex F)');
    assert.equal(first.streamMode, 'udp');
    assert.equal(first.urls.flv, `http://127.0.0.1:${stack.zlm.httpPort}/rtp/${first.streamId}.live.flv`);
    for (const k of ['hls', 'rtsp', 'rtmp', 'webrtc']) assert.ok(first.urls[k]?.includes(first.streamId), k);
    await waitFor(() => packets(first.streamId) > 0, { timeoutMs: 5000, description: 'RTP at the media node' });
    const stats = stack.zlm.stats(first.streamId);
    assert.ok(stats !== undefined && stats.psPackHeaders > 0 && stats.ssrcMismatches === 0, JSON.stringify(stats));
    // the INVITE carried the GB/T 28181 Subject and our SSRC
    const dev = liveSessionsOf(ch[0] as string);
    assert.equal(dev.length, 1);
    assert.equal(dev[0]?.plan.ssrc, first.ssrc);

    const second = (await call<StartAnswer>(stack.instance, 'POST', `/blade-iot/vms/play/start?channelId=${ch[0]}`)).data;
    assert.notEqual(second.sessionId, first.sessionId, 'every viewer gets its own session');
    assert.equal(second.streamId, first.streamId);
    assert.deepEqual(second.urls, first.urls);
    assert.equal(second.viewers, 2);
    assert.equal(liveSessionsOf(ch[0] as string).length, 1, 'no second INVITE');

    // first viewer leaves: the stream stays for the second
    const s1 = await call<{ viewers: number }>(stack.instance, 'POST', `/vms/play/stop?sessionId=${first.sessionId}`);
    assert.equal(s1.data.viewers, 1);
    assert.equal(dev[0]?.state, 'playing');
    const before = packets(first.streamId);
    await sleep(200);
    assert.ok(packets(first.streamId) > before, 'RTP still flowing for the remaining viewer');

    // last viewer leaves: BYE at the device, RTP server closed, no more RTP sent
    await call(stack.instance, 'POST', `/vms/play/stop?sessionId=${second.sessionId}`);
    await waitFor(() => dev[0]?.state === 'closed', { timeoutMs: 5000, description: 'device session closed by BYE' });
    assert.equal(stack.zlm.stats(first.streamId), undefined, 'closeRtpServer called');
    const sent = dev[0]?.framesSent ?? 0;
    await sleep(300);
    assert.equal(dev[0]?.framesSent, sent, 'the device stopped sending');

    const again = await call(stack.instance, 'POST', `/vms/play/stop?sessionId=${second.sessionId}`, true);
    assert.deepEqual([again.code, again.success], [404, false]);
  });

  it('on_stream_none_reader from the media node stops the device stream (reply close: true)', async () => {
    const a = (await call<StartAnswer>(stack.instance, 'POST', `/vms/play/start?channelId=${ch[1]}`)).data;
    await waitFor(() => stack.zlm.stats(a.streamId)?.registered === true, { timeoutMs: 5000, description: 'stream registered at the node' });
    const dev = liveSessionsOf(ch[1] as string)[0];
    assert.ok(dev !== undefined);
    // a viewer comes and goes on the media node
    for (const delta of ['1', '-1']) {
      const r = await fetch(`${stack.zlm.apiBaseUrl}/standin/readers?secret=${ZLM_SECRET}&stream=${a.streamId}&delta=${delta}`);
      assert.equal(((await r.json()) as { code: number }).code, 0);
    }
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'device session closed after no-reader' });
    const hook = stack.zlm.hookCalls.find((c) => c.name === 'on_stream_none_reader' && c.body.stream === a.streamId);
    assert.deepEqual([hook?.status, hook?.reply?.code, hook?.reply?.close], [200, 0, true]);
    await waitFor(() => stack.zlm.stats(a.streamId) === undefined, { timeoutMs: 3000, description: 'RTP server closed' });
    const stop = await call(stack.instance, 'POST', `/vms/play/stop?sessionId=${a.sessionId}`, true);
    assert.equal(stop.code, 404, 'the session ended with its stream');
  });

  for (const [i, mode] of [[2, 'tcp-passive'], [3, 'tcp-active']] as const) {
    it(`${mode}: RTP over TCP (RFC 4571) reaches the media node`, async () => {
      const a = (await call<StartAnswer>(stack.instance, 'POST', `/vms/play/start?channelId=${ch[i]}&streamMode=${mode}`)).data;
      assert.equal(a.streamMode, mode);
      await waitFor(() => packets(a.streamId) > 0, { timeoutMs: 5000, description: `RTP over ${mode}` });
      const stats = stack.zlm.stats(a.streamId);
      assert.equal(stats?.tcpMode, mode === 'tcp-passive' ? 1 : 2);
      assert.ok((stats?.psPackHeaders ?? 0) > 0);
      const dev = liveSessionsOf(ch[i] as string)[0];
      assert.equal(dev?.plan.mode, mode === 'tcp-passive' ? 'tcp-connect' : 'tcp-listen');
      await call(stack.instance, 'POST', `/vms/play/stop?sessionId=${a.sessionId}`);
      await waitFor(() => dev?.state === 'closed', { timeoutMs: 5000, description: 'closed' });
    });
  }

  it('a device that answers its own SSRC: the media node is told to filter on it, its RTP is counted, the session reports it', async () => {
    nvr.answersOwnSsrc = true;
    try {
      const a = (await call<StartAnswer>(stack.instance, 'POST', `/vms/play/start?channelId=${ch[0]}`)).data;
      const dev = liveSessionsOf(ch[0] as string).at(-1);
      assert.ok(dev !== undefined);
      assert.notEqual(dev.plan.ssrc, dev.offer.ssrc, 'the device answered another y= than the one offered');
      assert.equal(a.ssrc, dev.plan.ssrc, 'the session reports the SSRC the stream really carries');
      await waitFor(() => packets(a.streamId) > 0, { timeoutMs: 5000, description: 'RTP with the answered SSRC accepted' });
      // the device may send its first packets (after our ACK) before the node was told: those are dropped,
      // as a real media node would; from then on every packet is accepted
      const dropped = stack.zlm.stats(a.streamId)?.ssrcMismatches ?? 0;
      const accepted = packets(a.streamId);
      await waitFor(() => packets(a.streamId) > accepted + 10, { timeoutMs: 5000, description: 'more RTP accepted' });
      assert.equal(stack.zlm.stats(a.streamId)?.ssrcMismatches, dropped, 'none dropped once the node filters on the answered SSRC');
      await call(stack.instance, 'POST', `/vms/play/stop?sessionId=${a.sessionId}`);
      await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'closed' });
    } finally {
      nvr.answersOwnSsrc = false;
    }
  });

  it('a stale RTP server left on the media node under the channel stream id (crashed owner) is closed: the play works', async () => {
    const streamId = `${NVR}_${ch[2]}`;
    const leftover = createZlmClient({ id: stack.zlm.mediaServerId, apiBaseUrl: stack.zlm.apiBaseUrl, secret: ZLM_SECRET });
    await leftover.openRtpServer({ streamId, tcpMode: 'udp', ssrc: '0200009999' });
    try {
      const a = (await call<StartAnswer>(stack.instance, 'POST', `/vms/play/start?channelId=${ch[2]}`)).data;
      assert.equal(a.streamId, streamId);
      await waitFor(() => packets(a.streamId) > 0, { timeoutMs: 5000, description: 'RTP on the reopened server' });
      assert.equal(stack.zlm.stats(a.streamId)?.ssrcMismatches, 0, 'the new server filters on the new SSRC');
      await call(stack.instance, 'POST', `/vms/play/stop?sessionId=${a.sessionId}`);
    } finally {
      await leftover.close();
    }
  });

  it('refuses a bad stream mode and an unknown channel before any INVITE', async () => {
    const bad = await call(stack.instance, 'POST', `/vms/play/start?channelId=${ch[0]}&streamMode=sctp`, true);
    assert.equal(bad.code, 400);
    const unknown = await call(stack.instance, 'POST', '/vms/play/start?channelId=34020000001319999999', true);
    assert.equal(unknown.code, 403, 'an unknown channel answers a tenant like another tenant\'s (SPEC SEC-2)');
  });

  it('snapshot of a playing channel comes from the media node (JPEG)', async () => {
    const a = (await call<StartAnswer>(stack.instance, 'POST', `/vms/play/start?channelId=${ch[0]}`)).data;
    const snap = await call<{ contentType: string; base64: string }>(stack.instance, 'GET', `/vms/snapshot?channelId=${ch[0]}`);
    const jpeg = Buffer.from(snap.data.base64, 'base64');
    assert.deepEqual([jpeg[0], jpeg[1]], [0xff, 0xd8]);
    await call(stack.instance, 'POST', `/vms/play/stop?sessionId=${a.sessionId}`);
  });
});
