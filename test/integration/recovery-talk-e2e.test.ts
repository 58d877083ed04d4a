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
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@vms/harness';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { ZLM_ID, ZLM_SECRET } from './media-e2e-fixture.ts';
import { assertOneAudioRecovery, ONLINE_WINDOW_MS, startAudioCluster, type AudioCluster } from './recovery-audio-cluster.ts';
import { api, eventually, logLines, type Instance, type Stores } from './routing-cluster.ts';

const DEV1 = '34020000001320000171';
const DEV2 = '34020000001320000172';
/** Two operators' microphones (two talks from one stream would need the devices' y= to differ: ZLM keys senders by SSRC). */
const MICS = ['operator-mic-recovery-1', 'operator-mic-recovery-2'] as const;
const MIC = MICS[0];
let cl: AudioCluster;
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
let c: Instance;

before(async () => {
  cl = await startAudioCluster({ codes: ['node-a', 'node-b', 'node-c'], hooksTo: 'node-b', mics: MICS });
  ({ stores, zlm } = cl);
  [a, b, c] = [cl.node('node-a'), cl.node('node-b'), cl.node('node-c')];
});

after(async () => {
  await cl?.close();
});

const talkPath = (channel: string, mic: string = MIC): string => `/vms/talk/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${mic}`;

describe('session continuity of a voice talk (SPEC §11, GB/T 28181 §9.12)', () => {
  it('kill -9 of the owner: the device re-registers elsewhere, its audio is on the same talk stream id again within the online window + 2 s; a stopped talk stays stopped', async () => {
    const dev1 = cl.device(a, DEV1, true);
    const dev2 = cl.device(a, DEV2, true);
    await cl.register(a, [dev1, dev2]);
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
    const dev1b = cl.device(b, DEV1, true);
    const dev2b = cl.device(b, DEV2, true);
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

    // exactly one recovery exchange, by the device's new owner
    const { logged, call } = await assertOneAudioRecovery(dev1b, b, c);
    assert.equal(logged.receiveStreamId, stream1);
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
