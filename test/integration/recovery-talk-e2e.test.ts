// Session continuity of a voice talk across a crash (SPEC §11 RECOVER for GB/T 28181-2016 §9.12) with real
// processes: redis-server, mariadbd, three signaling instances with DEFAULT timings (node heartbeat 5 s, online
// window 15 s, give-up 30 s), the ZLM stand-in (hooks to node-b) and simulated devices (services/device-sim) that
// talk (sendrecv G.711A both ways).
//
// The operator's microphone is a stream on the media node. Two devices talk through node-a (started on node-c,
// routed by channel); the operator plays the first device's audio (a reader on talk_<channel>). The second talk
// is stopped and node-a is killed (SIGKILL) right after that stop was answered. Both devices reboot and register
// on node-b. Then:
//   - the first device's audio reaches talk_<channel> again — the same stream id the operator plays — after a gap
//     printed and bounded by window + 2 s; the operator's audio reaches the device again; node-b set the talk up
//     with exactly one Notify/INVITE exchange (node-c, scanning the same index, none);
//   - the stopped talk is not resurrected: the second device gets no Notify;
//   - nothing of node-a is left in the audio index; the recovered talk stops like any other.
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import { buildRtpPacket } from '../stand-ins/rtp-packets.ts';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_ID, ZLM_SECRET } from './media-e2e-fixture.ts';
import { api, eventually, logLines, SERVER_ID, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

const DEV1 = '34020000001320000171';
const DEV2 = '34020000001320000172';
/** Two operators' microphones (two talks from one stream would need the devices' y= to differ: ZLM keys senders by SSRC). */
const MICS = ['operator-mic-recovery-1', 'operator-mic-recovery-2'] as const;
const MIC = MICS[0];
/** Default node heartbeat 5 s × 3 (SPEC NODE-1): the online window. */
const ONLINE_WINDOW_MS = 15_000;
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
let c: Instance;
let mic: Socket | undefined;
let feeding: NodeJS.Timeout | undefined;
const devices: SimulatedDevice[] = [];

function device(instance: Instance, deviceId: string): SimulatedDevice {
  const d = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId, password: 'unused', channels: 1, keyFrameBytes: 2000, deltaFrameBytes: 400 });
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
  c = await startInstance(stores, 'node-c', { env: media });
  // the operators' microphones: RTP streams on the media node, G.711A every 20 ms
  const ports: number[] = [];
  for (const m of MICS) {
    const open = (await (await fetch(`${zlm.apiBaseUrl}/index/api/openRtpServer?secret=${ZLM_SECRET}&stream_id=${m}&port=0&tcp_mode=0`)).json()) as { code: number; port: number };
    assert.equal(open.code, 0);
    ports.push(open.port);
  }
  const sock = createSocket('udp4');
  mic = sock;
  let seq = 0;
  feeding = setInterval(() => {
    seq = (seq + 1) & 0xffff;
    for (const port of ports) sock.send(buildRtpPacket({ ssrc: 0x4321 + port, seq, timestamp: seq * 160, payloadType: 8, payload: Buffer.alloc(160, 0xd5) }), port, '127.0.0.1');
  }, 20);
  await waitForOnline(a, ['node-a', 'node-b', 'node-c'], 30_000);
});

after(async () => {
  clearInterval(feeding);
  mic?.close();
  await Promise.all(devices.map((d) => d.close()));
  await Promise.all([a, b, c].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await zlm?.close();
  await stores?.stop();
});

const talkPath = (channel: string, mic: string = MIC): string => `/vms/talk/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${mic}`;

describe('session continuity of a voice talk (SPEC §11, GB/T 28181 §9.12)', () => {
  it('kill -9 of the owner: the device re-registers elsewhere, its audio is on the same talk stream id again within the online window + 2 s; a stopped talk stays stopped', async () => {
    const dev1 = device(a, DEV1);
    const dev2 = device(a, DEV2);
    await Promise.all([dev1.start(), dev2.start()]);
    await waitFor(() => dev1.registered && dev2.registered, { timeoutMs: 10_000, description: 'devices registered on node-a' });
    const apiOf = { api: async (m: string, p: string) => (await api(a, p, { method: m })).json as never };
    await syncChannels(apiOf, DEV1, 1);
    await syncChannels(apiOf, DEV2, 1);
    await waitFor(() => MICS.every((m) => zlm.stats(m)?.registered ?? false), { timeoutMs: 5000, description: 'the microphone streams on the media node' });
    const ch1 = dev1.channelIds[0] as string;
    const ch2 = dev2.channelIds[0] as string;
    const talk1 = await api(c, talkPath(ch1), { method: 'POST', timeoutMs: 15_000 }); // routed to node-a
    assert.equal(talk1.json.success, true, `${talk1.bytes.toString()} ${a.proc.output().split('\n').filter((l) => /audio|SendRtp|zlm/i.test(l)).slice(-8).join('\n')}`);
    const talk2 = await api(c, talkPath(ch2, MICS[1]), { method: 'POST', timeoutMs: 15_000 });
    assert.equal(talk2.json.success, true, talk2.bytes.toString());
    const stream1 = `talk_${ch1}`;
    await waitFor(() => (zlm.stats(stream1)?.rtpPackets ?? 0) >= 5 && (zlm.stats(`talk_${ch2}`)?.rtpPackets ?? 0) >= 5, { timeoutMs: 5000, description: 'both devices’ audio at the media node' });
    // the operator plays the first device's audio
    await fetch(`${zlm.apiBaseUrl}/standin/readers?secret=${ZLM_SECRET}&stream=${stream1}&delta=1`);
    await waitFor(async () => (await stores.redisClient.scard('vms:audio-rec:{node-a}:idx')) === 2, { timeoutMs: 5000, description: 'two audio snapshots in node-a’s index' });

    // the second talk is stopped; node-a dies right after the stop was answered
    const stop = await api(a, `/vms/talk/stop?channelId=${ch2}`, { method: 'POST' });
    assert.equal(stop.json.success, true, stop.bytes.toString());
    const stoppedAt = Date.now();
    const killing = a.proc.kill();
    const killedAt = Date.now();
    await killing;
    assert.ok(killedAt - stoppedAt < 100, `killed ${killedAt - stoppedAt} ms after the stop`);

    // both devices reboot (no BYE, no unregister: their audio stops) and register on node-b
    await Promise.all([dev1.powerOff(), dev2.powerOff()]);
    const silentFrom = Date.now();
    const dev1b = device(b, DEV1);
    const dev2b = device(b, DEV2);
    await Promise.all([dev1b.start(), dev2b.start()]);
    await waitFor(() => dev1b.registered && dev2b.registered, { timeoutMs: 10_000, description: 'devices registered on node-b' });

    // the device's audio on the same stream id, from the rebooted device's new port
    const resumed = await waitFor(
      () => {
        const call = dev1b.audioCalls[0];
        const st = zlm.stats(stream1);
        return call !== undefined && st?.peer?.port === call.port && st.rtpPackets > 0 ? Date.now() : null;
      },
      { timeoutMs: ONLINE_WINDOW_MS + 20_000, intervalMs: 10, description: 'the device’s audio again on the talk stream id' },
    ).catch((err: unknown) => {
      for (const [n, i] of [['b', b], ['c', c]] as const) console.log(n, i.proc.output().split('\n').filter((l) => /audio|orphan/.test(l)).slice(-20).join('\n'));
      throw err;
    });
    const gap = resumed - silentFrom;
    const sinceKill = resumed - killedAt;
    console.log(`talk recovery: device audio back on ${stream1} after a gap of ${gap} ms (from the device's reboot), ${sinceKill} ms after the kill; online window ${ONLINE_WINDOW_MS} ms`);
    assert.ok(sinceKill <= ONLINE_WINDOW_MS + 2000, `audio back ${sinceKill} ms after the kill`);
    const call = dev1b.audioCalls[0];
    assert.ok(call !== undefined);
    await waitFor(() => call.packets >= 10, { timeoutMs: 5000, description: 'the operator’s audio at the rebooted device' });

    // exactly one recovery exchange, by the device's new owner
    assert.equal(dev1b.audioCalls.length, 1, 'one Notify/INVITE for the recovery');
    await eventually(() => logLines(b, 'orphaned audio session recovered').length === 1, 'node-b logged the recovery');
    assert.equal(logLines(c, 'orphaned audio session recovered').length, 0);
    assert.equal(logLines(b, 'orphaned audio session recovered')[0]?.receiveStreamId, stream1);
    const metrics = await (await fetch(`${b.httpUrl}/metrics`)).text();
    assert.match(metrics, /^vms_session_recovery_total\{outcome="recovered",reason="audio"\} 1$/m);

    // the stopped talk is never resurrected
    assert.equal(dev2b.audioCalls.length, 0, 'no Notify/INVITE for the stopped talk');
    assert.equal(zlm.stats(`talk_${ch2}`), undefined, 'its talk stream stayed released');
    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-a}:idx'), 0, 'nothing of node-a left');
    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-b}:idx'), 1, 'the recovered talk is journaled by node-b');

    // the recovered talk is an ordinary one: listed, and stopped from any instance (BYE, stream released)
    const list = await api(c, `/vms/talk?deviceId=${DEV1}`);
    assert.equal((list.json.data as unknown[]).length, 1);
    const stop1 = await api(c, `/vms/talk/stop?channelId=${ch1}`, { method: 'POST' });
    assert.equal(stop1.json.success, true, stop1.bytes.toString());
    await waitFor(() => call.ended, { timeoutMs: 5000, description: 'BYE at the device' });
    await waitFor(() => zlm.stats(stream1) === undefined, { timeoutMs: 5000, description: 'talk stream released' });
    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-b}:idx'), 0);
  });
});
