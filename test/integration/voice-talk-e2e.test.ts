// Two-way talk (语音对讲) end to end: GB/T 28181-2016 §9.12 signalling (Notify/Broadcast, the device's
// audio INVITE) with the device offering sendrecv. The platform answers with the media node's side
// — the ZLM stand-in's startSendRtp with `recv_stream_id` — so the operator's G.711A reaches the
// simulated device with its y= SSRC, and the device's own audio, sent from the same port back to the
// answer's port, becomes the node's stream talk_<channelId>. Stop (platform BYE), a device BYE and a
// speaker-only device (recvonly offer) are checked too.
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import type { SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { buildRtpPacket } from '../stand-ins/rtp-packets.ts';
import { startSimDevice, startSingleStack, ZLM_ID, ZLM_SECRET, type SingleStack } from './media-e2e-fixture.ts';

const DEV = '34020000001320000083';
const DEV2 = '34020000001320000084';
const MIC = 'operator-mic-talk';

interface Talk {
  readonly mode: string;
  readonly sessionId: string;
  readonly channelId: string;
  readonly ssrc: string;
  readonly deviceAudio: string;
  readonly deviceStream?: { app: string; stream: string };
}

describe('talk: API → Notify → device sendrecv INVITE → audio both ways through the media node', () => {
  let stack: SingleStack;
  let device: SimulatedDevice;
  let channel: string;
  let mic: Socket;
  let feeding: NodeJS.Timeout | undefined;
  const talks = async (): Promise<Talk[]> => (await stack.instance.api<Talk[]>('GET', `/vms/talk?deviceId=${DEV}`)).data;

  before(async () => {
    stack = await startSingleStack();
    device = await startSimDevice(stack.instance, DEV, { channels: 1 });
    channel = device.channelIds[0] ?? '';
    // the operator's microphone: an RTP stream on the media node, G.711A every 20 ms
    const open = (await (await fetch(`${stack.zlm.apiBaseUrl}/index/api/openRtpServer?secret=${ZLM_SECRET}&stream_id=${MIC}&port=0&tcp_mode=0`)).json()) as { code: number; port: number };
    assert.equal(open.code, 0);
    mic = createSocket('udp4');
    let seq = 0;
    feeding = setInterval(() => {
      seq++;
      mic.send(buildRtpPacket({ ssrc: 0x4321, seq, timestamp: seq * 160, payloadType: 8, payload: Buffer.alloc(160, 0xd5) }), open.port, '127.0.0.1');
    }, 20);
    await waitFor(() => (stack.zlm.stats(MIC)?.registered ?? false) === true, { timeoutMs: 5000, description: 'the microphone stream reached the media node' });
  });
  after(async () => {
    clearInterval(feeding);
    mic?.close();
    await device?.close();
    await stack?.stop();
  });

  it('audio flows both ways; stop sends BYE and releases the node’s sender and the received stream', async () => {
    device.talks = true;
    const r = await stack.instance.api<Talk>('POST', `/vms/talk/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
    assert.deepEqual([r.code, r.success], [200, true], r.msg);
    assert.equal(r.data.mode, 'talk');
    assert.deepEqual(r.data.deviceStream, { app: 'rtp', stream: `talk_${channel}` });
    const call = device.audioCalls[0];
    assert.ok(call !== undefined, 'the device INVITEd the platform');
    assert.equal(r.data.deviceAudio, `127.0.0.1:${call.port}`);

    // platform → device: the operator's audio with the SSRC of the device's y=
    await waitFor(() => call.packets >= 10, { timeoutMs: 5000, description: 'operator audio at the device' });
    assert.deepEqual([...call.ssrcs], [Number(r.data.ssrc)]);
    assert.deepEqual([...call.payloadTypes], [8]);
    // device → media node: the device's audio on the port the node sends from, published as talk_<channel>
    assert.ok(call.sendingTo !== undefined, 'the answer let the device send (sendrecv)');
    const talkStream = `talk_${channel}`;
    await waitFor(() => (stack.zlm.stats(talkStream)?.rtpPackets ?? 0) >= 10, { timeoutMs: 5000, description: 'device audio at the media node' });
    const st = stack.zlm.stats(talkStream);
    assert.equal(st?.registered, true, 'the device’s audio is a stream on the node');
    assert.equal(st?.port, call.sendingTo.port, 'one node port both ways (symmetric RTP)');
    assert.deepEqual(st?.peer, { ip: '127.0.0.1', port: call.port }, 'received from the device’s audio port');
    assert.ok(stack.zlm.hookCalls.some((h) => h.name === 'on_stream_changed' && h.body.stream === talkStream && h.body.regist === true), 'on_stream_changed for the talk stream');

    assert.equal((await talks()).length, 1);
    assert.equal((await stack.instance.api<unknown[]>('GET', `/vms/broadcast?deviceId=${DEV}`)).data.length, 0, 'a talk is not a broadcast');
    const wrongKind = await stack.instance.api('POST', `/vms/broadcast/stop?channelId=${channel}`);
    assert.equal(wrongKind.code, 404, 'broadcast/stop does not end a talk');
    const busy = await stack.instance.api('POST', `/vms/broadcast/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
    assert.equal(busy.success, false, 'one audio session per channel');

    const stop = await stack.instance.api('POST', `/vms/talk/stop?channelId=${channel}`);
    assert.deepEqual([stop.code, stop.success], [200, true], stop.msg);
    await waitFor(() => call.ended, { timeoutMs: 5000, description: 'the device saw the BYE' });
    assert.equal(stack.zlm.stats(talkStream), undefined, 'the received stream is released with the sender');
    assert.equal((await talks()).length, 0);
    const again = await stack.instance.api('POST', `/vms/talk/stop?channelId=${channel}`);
    assert.equal(again.code, 404, 'nothing left to stop');
  });

  it('a BYE from the device ends the talk on the platform and on the media node', async () => {
    device.talks = true;
    const r = await stack.instance.api<Talk>('POST', `/vms/talk/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
    assert.equal(r.success, true, r.msg);
    const call = device.audioCalls.at(-1);
    assert.ok(call !== undefined && !call.ended);
    await waitFor(() => (stack.zlm.stats(`talk_${channel}`)?.rtpPackets ?? 0) >= 5, { timeoutMs: 5000, description: 'device audio at the media node' });
    // the operator's player comes and goes: ZLM asks whether to close the talk stream; it must not
    for (const delta of ['1', '-1']) {
      const rd = await fetch(`${stack.zlm.apiBaseUrl}/standin/readers?secret=${ZLM_SECRET}&stream=talk_${channel}&delta=${delta}`);
      assert.equal(((await rd.json()) as { code: number }).code, 0);
    }
    const hook = await waitFor(
      () => stack.zlm.hookCalls.find((h) => h.name === 'on_stream_none_reader' && h.body.stream === `talk_${channel}` && h.status !== undefined),
      { timeoutMs: 5000, description: 'none-reader hook answered' },
    );
    assert.deepEqual([hook?.status, hook?.reply?.code, hook?.reply?.close], [200, 0, false], 'the talk audio stays while the talk lasts');
    assert.equal(stack.zlm.stats(`talk_${channel}`)?.registered, true);
    assert.equal((await talks()).length, 1);
    await call.hangUp();
    await waitFor(async () => (await talks()).length === 0, { timeoutMs: 5000, description: 'talk ended on the platform' });
    await waitFor(() => stack.zlm.stats(`talk_${channel}`) === undefined, { timeoutMs: 5000, description: 'talk stream released on the node' });
  });

  it('a speaker-only device (recvonly offer) cannot talk: 4607, its INVITE refused, nothing left on the node', async () => {
    device.talks = false;
    const calls = device.audioCalls.length;
    const sentBefore = stack.zlm.stats(MIC)?.forwarded ?? 0;
    const r = await stack.instance.api('POST', `/vms/talk/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
    assert.deepEqual([r.code, r.success], [4607, false], r.msg);
    assert.equal(device.audioCalls.length, calls, 'no call set up on the device');
    assert.equal(stack.zlm.stats(`talk_${channel}`), undefined);
    assert.equal((await talks()).length, 0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(stack.zlm.stats(MIC)?.forwarded ?? 0, sentBefore, 'no sender started on the node');
    // the channel is free again: a broadcast (recvonly is fine there) starts
    const b = await stack.instance.api('POST', `/vms/broadcast/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
    assert.equal(b.success, true, b.msg);
    assert.equal((await stack.instance.api('POST', `/vms/broadcast/stop?channelId=${channel}`)).success, true);
  });

  it('a device that unregisters during a talk: the talk ends as device offline and the node releases it', async () => {
    const other = await startSimDevice(stack.instance, DEV2, { channels: 1 });
    const ch2 = other.channelIds[0] ?? '';
    other.talks = true;
    const r = await stack.instance.api<Talk>('POST', `/vms/talk/start?channelId=${ch2}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
    assert.equal(r.success, true, r.msg);
    await waitFor(() => (stack.zlm.stats(`talk_${ch2}`)?.rtpPackets ?? 0) >= 5, { timeoutMs: 5000, description: 'device audio at the node' });
    await other.close(); // unregisters (Expires: 0) before it hangs up
    const ended = (): string[] => stack.instance.proc.output().split('\n').filter((l) => l.includes('audio session ended') && l.includes(ch2));
    await waitFor(() => ended().length > 0, { timeoutMs: 5000, description: `talk ended: ${stack.instance.proc.output().split('\n').filter((l) => l.includes(ch2)).slice(-5).join(' | ')}` });
    assert.match(ended()[0] ?? '', /device offline/);
    await waitFor(() => stack.zlm.stats(`talk_${ch2}`) === undefined, { timeoutMs: 5000, description: 'talk stream released on the node' });
    assert.equal((await stack.instance.api<Talk[]>('GET', `/vms/talk?deviceId=${DEV2}`)).data.length, 0);
  });
});
