// Session continuity of a voice broadcast (语音广播) across a crash (SPEC §11 RECOVER for GB/T 28181-2016 §9.12)
// with real processes: redis-server, mariadbd, three signaling instances with DEFAULT timings (node heartbeat 5 s,
// online window 15 s, give-up 30 s), the ZLM stand-in (hooks to node-b) and a simulated speaker-only device
// (services/device-sim, `recvonly`).
//
// The operator's microphone is a stream on the media node. A broadcast to the device runs through node-a (started
// on node-c, routed by channel): the node sends the microphone's G.711A to the device. node-a is killed (SIGKILL);
// the device reboots and registers on node-b. Then:
//   - the operator's audio reaches the rebooted device again, with the SSRC of its new y=, after a gap printed
//     and bounded by window + 2 s after the kill;
//   - node-b set the broadcast up with exactly one Notify/INVITE exchange (node-c, scanning the same index, none),
//     and the node's sending to the dead device's address was stopped (one sender left on the microphone);
//   - nothing of node-a is left in the audio index; the recovered broadcast stops like any other.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep, waitFor } from '@vms/harness';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { ZLM_ID } from './media-e2e-fixture.ts';
import { assertOneAudioRecovery, ONLINE_WINDOW_MS, startAudioCluster, type AudioCluster } from './recovery-audio-cluster.ts';
import { api, eventually, logLines, type Instance, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000191';
const MIC = 'operator-mic-broadcast-recovery';
let cl: AudioCluster;
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
let c: Instance;

before(async () => {
  cl = await startAudioCluster({ codes: ['node-a', 'node-b', 'node-c'], hooksTo: 'node-b', mics: [MIC] });
  ({ stores, zlm } = cl);
  [a, b, c] = [cl.node('node-a'), cl.node('node-b'), cl.node('node-c')];
});

after(async () => {
  await cl?.close();
});

/** Packets the node re-sends from the microphone per packet it receives: the number of senders on it. */
async function sendersOnMic(): Promise<number> {
  const at = (): { in: number; out: number } => {
    const s = zlm.stats(MIC);
    return { in: s?.rtpPackets ?? 0, out: s?.forwarded ?? 0 };
  };
  const t0 = at();
  await sleep(2000);
  const t1 = at();
  return (t1.out - t0.out) / Math.max(1, t1.in - t0.in);
}

describe('session continuity of a voice broadcast (SPEC §11, GB/T 28181 §9.12)', () => {
  it('kill -9 of the owner: the device re-registers elsewhere and hears the operator again within the online window + 2 s, one Notify/INVITE', async () => {
    const dev = cl.device(a, DEV, false);
    await cl.register(a, [dev]);
    const ch = dev.channelIds[0] as string;
    const start = await api(c, `/vms/broadcast/start?channelId=${ch}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`, { method: 'POST', timeoutMs: 15_000 }); // routed to node-a
    assert.equal(start.json.success, true, start.bytes.toString());
    const first = dev.audioCalls[0];
    assert.ok(first !== undefined, 'the device INVITEd the platform');
    await waitFor(() => first.packets >= 10, { timeoutMs: 5000, description: 'the operator’s audio at the device' });
    await waitFor(async () => (await stores.redisClient.scard('vms:audio-rec:{node-a}:idx')) === 1, { timeoutMs: 5000, description: 'the broadcast’s snapshot in node-a’s index' });

    const killedAt = Date.now();
    await a.proc.kill();
    // the device reboots (no BYE, no unregister) and registers on node-b; the node still sends to its old port
    await dev.powerOff();
    const silentFrom = Date.now();
    const dev2 = cl.device(b, DEV, false);
    await dev2.start();
    await waitFor(() => dev2.registered, { timeoutMs: 10_000, description: 'device registered on node-b' });

    const resumed = await waitFor(() => ((dev2.audioCalls[0]?.packets ?? 0) > 0 ? Date.now() : null), {
      timeoutMs: ONLINE_WINDOW_MS + 20_000,
      intervalMs: 10,
      description: 'the operator’s audio again at the rebooted device',
    }).catch((err: unknown) => {
      for (const [n, i] of [['b', b], ['c', c]] as const) console.log(n, i.proc.output().split('\n').filter((l) => /audio|orphan/.test(l)).slice(-20).join('\n'));
      throw err;
    });
    const gap = resumed - silentFrom;
    const sinceKill = resumed - killedAt;
    console.log(`broadcast recovery: operator audio back at the device after a gap of ${gap} ms (from the device's reboot), ${sinceKill} ms after the kill; online window ${ONLINE_WINDOW_MS} ms`);
    assert.ok(sinceKill <= ONLINE_WINDOW_MS + 2000, `audio back ${sinceKill} ms after the kill`);
    // exactly one recovery exchange, by the device's new owner
    const { logged, call } = await assertOneAudioRecovery(dev2, b, c);
    assert.equal(logged.purpose, 'broadcast');
    const metrics = await (await fetch(`${b.httpUrl}/metrics`)).text();
    assert.match(metrics, /^vms_session_recovery_total\{outcome="recovered",reason="audio"\} 1$/m);
    const listed = await api(c, `/vms/broadcast?deviceId=${DEV}`);
    const views = listed.json.data as { ssrc: string; deviceAudio: string }[];
    assert.equal(views.length, 1);
    assert.equal(views[0]?.deviceAudio, `127.0.0.1:${call.port}`, 'sent to the rebooted device’s m=audio');
    assert.deepEqual([...call.ssrcs], [Number(views[0]?.ssrc)], 'sent with the SSRC of the new y=');
    // the old sending (to the dead device's port) was stopped: the microphone is sent once, not twice
    const senders = await sendersOnMic();
    assert.ok(senders > 0.5 && senders < 1.5, `${senders.toFixed(2)} packets sent per microphone packet`);

    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-a}:idx'), 0, 'nothing of node-a left');
    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-b}:idx'), 1, 'the recovered broadcast is journaled by node-b');

    // the recovered broadcast is an ordinary one: stopped from any instance (BYE, sending ended)
    const stop = await api(c, `/vms/broadcast/stop?channelId=${ch}`, { method: 'POST' });
    assert.equal(stop.json.success, true, stop.bytes.toString());
    await waitFor(() => call.ended, { timeoutMs: 5000, description: 'BYE at the device' });
    assert.equal(await stores.redisClient.scard('vms:audio-rec:{node-b}:idx'), 0);
    await waitFor(async () => (await sendersOnMic()) === 0, { timeoutMs: 10_000, description: 'the node stopped sending the microphone' });
  });
});
