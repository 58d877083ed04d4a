// Session continuity when a device moves between two live instances (SPEC §11 RECOVER with OWN-4), with real
// processes: redis-server, mariadbd, two signaling instances with DEFAULT timings, the ZLM stand-in (hooks to
// node-b) and simulated cameras (services/device-sim) sending real RTP/PS.
//
// A camera streams through node-a with a viewer (a reader on the media node). It reboots and registers on node-b
// while node-a stays up. node-a notices the move (OWN-4) and hands the stream over instead of ending it: no BYE,
// RTP server, SSRC and viewer session id kept, the snapshot moved to node-b's index. node-b then recovers it
// exactly once: one INVITE into the same stream id; RTP flows again, the viewer's URL and session id still work.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, sleep, waitFor } from '@vms/harness';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_SECRET, type StartAnswer } from './media-e2e-fixture.ts';
import { api, eventually, logLines, SERVER_ID, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000161';
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
const devices: SimulatedDevice[] = [];

function camera(instance: Instance): SimulatedDevice {
  const d = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId: DEV, password: 'unused', channels: 1, keyFrameBytes: 2000, deltaFrameBytes: 400 });
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
  await waitForOnline(a, ['node-a', 'node-b'], 30_000);
});

after(async () => {
  await Promise.all(devices.map((d) => d.close()));
  await Promise.all([a, b].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await zlm?.close();
  await stores?.stop();
});

describe('session continuity: the device moves between live instances (SPEC §11, OWN-4)', () => {
  it('the camera re-registers on node-b while node-a runs: node-a hands the stream off without a BYE, node-b recovers it once into the same stream id', async () => {
    const cam = camera(a);
    await cam.start();
    await waitFor(() => cam.registered, { timeoutMs: 10_000, description: 'camera registered on node-a' });
    await syncChannels({ api: async (m: string, p: string) => (await api(a, p, { method: m })).json as never }, DEV, 1);
    const start = await api(b, `/vms/play/start?channelId=${cam.channelIds[0] as string}`, { method: 'POST' }); // forwarded to node-a
    assert.equal(start.json.success, true, start.bytes.toString());
    const live = start.json.data as StartAnswer;
    await waitFor(() => zlm.stats(live.streamId)?.registered ?? false, { timeoutMs: 10_000, description: 'stream at the media node' });
    await fetch(`${zlm.apiBaseUrl}/standin/readers?secret=${ZLM_SECRET}&stream=${encodeURIComponent(live.streamId)}&delta=1`);
    await waitFor(async () => (await stores.redisClient.scard('vms:rec:{node-a}:idx')) === 1, { timeoutMs: 5000, description: 'snapshot in node-a’s index' });

    // the camera reboots onto node-b; node-a stays up
    const movedAt = Date.now();
    await cam.powerOff(); // no BYE, no unregister: a reboot
    const camB = camera(b);
    await camB.start();
    await waitFor(() => camB.registered, { timeoutMs: 10_000, description: 'camera registered on node-b' });
    const before = zlm.stats(live.streamId)?.rtpPackets ?? 0;
    await waitFor(() => (zlm.stats(live.streamId)?.rtpPackets ?? 0) > before + 20, { timeoutMs: 40_000, intervalMs: 20, description: 'RTP again on the same stream id' }).catch((err: unknown) => {
      for (const [n, i] of [['a', a], ['b', b]] as const)
        console.log(n, i.proc.output().split('\n').filter((l) => /moved|handed|orphan|recover|owned by another|media stream/.test(l)).join('\n'));
      throw err;
    });
    const backMs = Date.now() - movedAt;
    console.log(`device move: RTP back on the same stream id ${backMs} ms after the camera left node-a (default timings)`);

    await eventually(() => logLines(a, 'media stream handed off: the device moved').length === 1, 'node-a handed the stream off');
    assert.equal(logLines(a, 'media stream ended').length, 0, 'node-a did not end the stream (no BYE, no closeRtpServer)');
    await eventually(() => logLines(b, 'media stream recovered').length === 1, 'node-b recovered it');
    assert.equal(logLines(b, 'media stream recovered')[0]?.streamId, live.streamId);
    const plays = camB.sessions.filter((s) => s.kind === 'Play');
    assert.equal(plays.length, 1, 'exactly one INVITE to the camera on node-b');
    await sleep(1000);
    assert.notEqual(plays[0]?.state, 'closed', 'nobody BYEs the camera’s new dialog');
    assert.equal(zlm.stats(live.streamId)?.readers, 1, 'the viewer stayed on the same stream id');
    assert.equal(await stores.redisClient.scard('vms:rec:{node-a}:idx'), 0, 'nothing left in node-a’s index');
    assert.equal(await stores.redisClient.scard('vms:rec:{node-b}:idx'), 1, 'the new dialog journaled by node-b');

    // the viewer's session id still stops the stream (routed by device to node-b): BYE, RTP server closed
    const stop = await api(a, `/vms/play/stop?sessionId=${live.sessionId}`, { method: 'POST' });
    assert.equal(stop.json.success, true, stop.bytes.toString());
    await waitFor(() => plays[0]?.state === 'closed', { timeoutMs: 5000, description: 'BYE at the camera' });
    await waitFor(() => zlm.stats(live.streamId) === undefined, { timeoutMs: 5000, description: 'RTP server closed' });
    assert.equal(await stores.redisClient.scard('vms:rec:{node-b}:idx'), 0);
  });
});
