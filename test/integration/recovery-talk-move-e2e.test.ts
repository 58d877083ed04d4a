// Session continuity of a voice talk when its device moves between two live instances (SPEC §11 with OWN-4,
// GB/T 28181-2016 §9.12), with real processes: redis-server, mariadbd, two signaling instances with DEFAULT
// timings, the ZLM stand-in (hooks to node-b) and a simulated device that talks.
//
// A device talks through node-a (the operator's microphone on the media node, the device's audio played as
// talk_<channel>). It reboots and registers on node-b while node-a stays up. node-a notices the move and hands
// the talk over instead of ending it (no BYE, no stopSendRtp, the snapshot moved to node-b's index); node-b
// re-establishes it exactly once: one Notify/INVITE, the device's audio on the same talk stream id again.
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, sleep, waitFor } from '@vms/harness';
import { buildRtpPacket } from '../stand-ins/rtp-packets.ts';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_ID, ZLM_SECRET } from './media-e2e-fixture.ts';
import { api, eventually, logLines, SERVER_ID, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000181';
const MIC = 'operator-mic-move';
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
let mic: Socket | undefined;
let feeding: NodeJS.Timeout | undefined;
const devices: SimulatedDevice[] = [];

function device(instance: Instance): SimulatedDevice {
  const d = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId: DEV, password: 'unused', channels: 1, keyFrameBytes: 2000, deltaFrameBytes: 400 });
  d.talks = true;
  devices.push(d);
  return d;
}

before(async () => {
  stores = await startStores();
  const bPort = await freePort();
  zlm = await startStandIn(bPort, { rtpTimeoutMs: 30_000 });
  const media = { VMS_MEDIA_NODES: mediaNodesEnv(zlm), LOG_LEVEL: 'debug' };
  a = await startInstance(stores, 'node-a', { env: media });
  b = await startInstance(stores, 'node-b', { env: { ...media, SERVER_PORT: String(bPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${bPort}` } });
  const open = (await (await fetch(`${zlm.apiBaseUrl}/index/api/openRtpServer?secret=${ZLM_SECRET}&stream_id=${MIC}&port=0&tcp_mode=0`)).json()) as { code: number; port: number };
  assert.equal(open.code, 0);
  const sock = createSocket('udp4');
  mic = sock;
  let seq = 0;
  feeding = setInterval(() => {
    seq = (seq + 1) & 0xffff;
    sock.send(buildRtpPacket({ ssrc: 0x4321, seq, timestamp: seq * 160, payloadType: 8, payload: Buffer.alloc(160, 0xd5) }), open.port, '127.0.0.1');
  }, 20);
  await waitForOnline(a, ['node-a', 'node-b'], 30_000);
});

after(async () => {
  clearInterval(feeding);
  mic?.close();
  await Promise.all(devices.map((d) => d.close()));
  await Promise.all([a, b].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await zlm?.close();
  await stores?.stop();
});

describe('session continuity of a talk: the device moves between live instances (SPEC §11, OWN-4)', () => {
  it('the device re-registers on node-b while node-a runs: node-a hands the talk off without a BYE, node-b re-establishes it once into the same talk stream id', async () => {
    const dev = device(a);
    await dev.start();
    await waitFor(() => dev.registered, { timeoutMs: 10_000, description: 'device registered on node-a' });
    await syncChannels({ api: async (m: string, p: string) => (await api(a, p, { method: m })).json as never }, DEV, 1);
    await waitFor(() => zlm.stats(MIC)?.registered ?? false, { timeoutMs: 5000, description: 'the microphone stream on the media node' });
    const ch = dev.channelIds[0] as string;
    const start = await api(b, `/vms/talk/start?channelId=${ch}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`, { method: 'POST', timeoutMs: 15_000 }); // routed to node-a
    assert.equal(start.json.success, true, start.bytes.toString());
    const stream = `talk_${ch}`;
    await waitFor(() => (zlm.stats(stream)?.rtpPackets ?? 0) >= 5, { timeoutMs: 5000, description: 'device audio at the media node' });
    await fetch(`${zlm.apiBaseUrl}/standin/readers?secret=${ZLM_SECRET}&stream=${stream}&delta=1`);
    await waitFor(async () => (await stores.redisClient.scard('vms:audio-rec:{node-a}:idx')) === 1, { timeoutMs: 5000, description: 'snapshot in node-a’s index' });

    // the device reboots onto node-b; node-a stays up
    await dev.powerOff();
    const movedAt = Date.now();
    const devB = device(b);
    await devB.start();
    await waitFor(() => devB.registered, { timeoutMs: 10_000, description: 'device registered on node-b' });
    const backAt = await waitFor(
      () => {
        const call = devB.audioCalls[0];
        const st = zlm.stats(stream);
        return call !== undefined && st?.peer?.port === call.port && st.rtpPackets > 0 ? Date.now() : null;
      },
      { timeoutMs: 40_000, intervalMs: 20, description: 'the device’s audio again on the talk stream id' },
    ).catch((err: unknown) => {
      for (const [n, i] of [['a', a], ['b', b]] as const) console.log(n, i.proc.output().split('\n').filter((l) => /moved|handed|orphan|audio|owned by another/.test(l)).slice(-20).join('\n'));
      throw err;
    });
    await eventually(() => logLines(a, 'audio session handed off: the device moved').length === 1, 'node-a handed the talk off');
    const handedAt = Number(logLines(a, 'audio session handed off: the device moved')[0]?.time);
    console.log(`talk move: the device's audio back on ${stream} ${backAt - movedAt} ms after it left node-a (handed off by node-a after ${handedAt - movedAt} ms; default timings)`);
    assert.equal(logLines(a, 'audio session ended').length, 0, 'node-a did not end the talk (no BYE, no stopSendRtp by it)');
    await eventually(() => logLines(b, 'orphaned audio session recovered').length === 1, 'node-b re-established it');
    assert.equal(devB.audioCalls.length, 1, 'exactly one Notify/INVITE on node-b');
    const call = devB.audioCalls[0];
    assert.ok(call !== undefined);
    await waitFor(() => call.packets >= 10, { timeoutMs: 5000, description: 'the operator’s audio at the device' });
    await sleep(1000);
    assert.equal(call.ended, false, 'nobody BYEs the new talk');
    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-a}:idx'), 0, 'nothing left in node-a’s index');
    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-b}:idx'), 1, 'the new talk journaled by node-b');

    const stop = await api(a, `/vms/talk/stop?channelId=${ch}`, { method: 'POST' }); // routed to node-b
    assert.equal(stop.json.success, true, stop.bytes.toString());
    await waitFor(() => call.ended, { timeoutMs: 5000, description: 'BYE at the device' });
    await waitFor(() => zlm.stats(stream) === undefined, { timeoutMs: 5000, description: 'talk stream released' });
    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-b}:idx'), 0);
  });
});
