// Voice broadcast end to end (GB/T 28181-2016 §9.12): the API sends Notify/Broadcast to the simulated
// device's channel, the device answers and INVITEs the platform for audio, the platform answers with
// the media node's side (the ZLM stand-in's startSendRtp of an audio stream the test feeds with G.711A
// RTP), and the device receives that RTP with its own y= SSRC. Stop (platform BYE) and a device BYE
// both end the sending.
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import type { SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { buildRtpPacket } from '../stand-ins/rtp-packets.ts';
import { startSimDevice, startSingleStack, ZLM_ID, ZLM_SECRET, type SingleStack } from './media-e2e-fixture.ts';

const DEV = '34020000001320000081';
const AUDIO_STREAM = 'operator-mic-1';

interface Broadcast {
  readonly sessionId: string;
  readonly channelId: string;
  readonly ssrc: string;
  readonly deviceAudio: string;
}

describe('voice broadcast: API → Notify → device INVITE → media node audio → device', () => {
  let stack: SingleStack;
  let device: SimulatedDevice;
  let channel: string;
  let mic: Socket;
  let feeding: NodeJS.Timeout | undefined;

  before(async () => {
    stack = await startSingleStack();
    device = await startSimDevice(stack.instance, DEV, { channels: 1 });
    channel = device.channelIds[0] ?? '';
    // the operator's microphone: an RTP stream on the media node (ZLM openRtpServer), G.711A every 20 ms
    const open = (await (await fetch(`${stack.zlm.apiBaseUrl}/index/api/openRtpServer?secret=${ZLM_SECRET}&stream_id=${AUDIO_STREAM}&port=0&tcp_mode=0`)).json()) as { code: number; port: number };
    assert.equal(open.code, 0);
    mic = createSocket('udp4');
    let seq = 0;
    feeding = setInterval(() => {
      seq++;
      mic.send(buildRtpPacket({ ssrc: 0x1234, seq, timestamp: seq * 160, payloadType: 8, payload: Buffer.alloc(160, 0xd5) }), open.port, '127.0.0.1');
    }, 20);
    await waitFor(() => (stack.zlm.stats(AUDIO_STREAM)?.registered ?? false) === true, { timeoutMs: 5000, description: 'the microphone stream reached the media node' });
  });
  after(async () => {
    clearInterval(feeding);
    mic?.close();
    await device?.close();
    await stack?.stop();
  });

  it('the device receives the audio with its SSRC; stop sends BYE and the sending ends', async () => {
    const r = await stack.instance.api<Broadcast>('POST', `/vms/broadcast/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${AUDIO_STREAM}`);
    assert.deepEqual([r.code, r.success], [200, true], r.msg);
    const call = device.audioCalls[0];
    assert.ok(call !== undefined, 'the device INVITEd the platform');
    assert.equal(r.data.deviceAudio, `127.0.0.1:${call.port}`);
    await waitFor(() => call.packets >= 10, { timeoutMs: 5000, description: 'audio RTP at the device' });
    assert.deepEqual([...call.ssrcs], [Number(r.data.ssrc)], 'sent with the SSRC of the device’s y=');
    assert.deepEqual([...call.payloadTypes], [8]);
    assert.equal((await stack.instance.api<Broadcast[]>('GET', `/vms/broadcast?deviceId=${DEV}`)).data.length, 1);

    const stop = await stack.instance.api('POST', `/vms/broadcast/stop?channelId=${channel}`);
    assert.deepEqual([stop.code, stop.success], [200, true], stop.msg);
    await waitFor(() => call.ended, { timeoutMs: 5000, description: 'the device saw the BYE' });
    assert.equal((await stack.instance.api<Broadcast[]>('GET', `/vms/broadcast?deviceId=${DEV}`)).data.length, 0);
    const again = await stack.instance.api('POST', `/vms/broadcast/stop?channelId=${channel}`);
    assert.equal(again.code, 404, 'nothing left to stop');
  });

  it('a BYE from the device ends the broadcast on the platform and the media node', async () => {
    const r = await stack.instance.api<Broadcast>('POST', `/vms/broadcast/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${AUDIO_STREAM}`);
    assert.equal(r.success, true, r.msg);
    const call = device.audioCalls[1];
    assert.ok(call !== undefined);
    await waitFor(() => call.packets >= 5, { timeoutMs: 5000, description: 'audio RTP at the device' });
    await call.hangUp();
    await waitFor(async () => (await stack.instance.api<Broadcast[]>('GET', `/vms/broadcast?deviceId=${DEV}`)).data.length === 0, { timeoutMs: 5000, description: 'broadcast ended on the platform' });
  });

  it('an audio stream the media node does not have: 4609, the device gets 488, no broadcast left behind', async () => {
    const r = await stack.instance.api('POST', `/vms/broadcast/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=no-such-stream`);
    assert.deepEqual([r.code, r.success], [4609, false], r.msg);
    assert.equal((await stack.instance.api<Broadcast[]>('GET', `/vms/broadcast?deviceId=${DEV}`)).data.length, 0);
  });
});
