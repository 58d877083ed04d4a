// Session continuity of a voice talk when its device moves between two live instances (SPEC §11 with OWN-4,
// GB/T 28181-2016 §9.12), with real processes: redis-server, mariadbd, two signaling instances with DEFAULT
// timings, the ZLM stand-in (hooks to node-b) and a simulated device that talks.
//
// A device talks through node-a (the operator's microphone on the media node, the device's audio played as
// talk_<channel>). It reboots and registers on node-b while node-a stays up. node-a notices the move and hands
// the talk over instead of ending it (no BYE, no stopSendRtp, the snapshot moved to node-b's index); node-b
// re-establishes it exactly once: one Notify/INVITE, the device's audio on the same talk stream id again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep, waitFor } from '@vms/harness';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { ZLM_ID, ZLM_SECRET } from './media-e2e-fixture.ts';
import { startAudioCluster, type AudioCluster } from './recovery-audio-cluster.ts';
import { api, eventually, logLines, type Instance, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000181';
const MIC = 'operator-mic-move';
let cl: AudioCluster;
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;

before(async () => {
  cl = await startAudioCluster({ codes: ['node-a', 'node-b'], hooksTo: 'node-b', mics: [MIC] });
  ({ stores, zlm } = cl);
  [a, b] = [cl.node('node-a'), cl.node('node-b')];
});

after(async () => {
  await cl?.close();
});

describe('session continuity of a talk: the device moves between live instances (SPEC §11, OWN-4)', () => {
  it('the device re-registers on node-b while node-a runs: node-a hands the talk off without a BYE, node-b re-establishes it once into the same talk stream id', async () => {
    const dev = cl.device(a, DEV, true);
    await cl.register(a, [dev]);
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
    const devB = cl.device(b, DEV, true);
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
