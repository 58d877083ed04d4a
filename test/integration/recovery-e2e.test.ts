// Session continuity across a crash (SPEC §11 RECOVER, issue 15) with real processes: redis-server, mariadbd,
// three signaling instances with DEFAULT timings (node heartbeat 5 s, online window 15 s, give-up 30 s), the ZLM
// stand-in (hooks to node-b) and simulated cameras (services/device-sim) sending real RTP/PS.
//
// Two cameras stream through node-a, each with a viewer (a reader on the media node). The viewer of the second
// one stops; node-a is killed (SIGKILL) right after that stop was answered. Both cameras reboot and register on
// node-b. Then:
//   - the first camera's stream id receives RTP again, after a gap printed and bounded by window + 2 s; node-b sent
//     exactly one recovery INVITE (node-c, scanning the same index, sent none); the viewer's URL is the same stream
//     id on the same media node; the old viewer session id still stops the stream (BYE, port closed);
//   - the stopped session is not resurrected: the second camera gets no INVITE;
//   - nothing of node-a is left in the session index.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_SECRET, type StartAnswer } from './media-e2e-fixture.ts';
import { api, eventually, logLines, SERVER_ID, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

const DEV1 = '34020000001320000151';
const DEV2 = '34020000001320000152';
/** Default node heartbeat 5 s × 3 (SPEC NODE-1): the online window. */
const ONLINE_WINDOW_MS = 15_000;
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
let c: Instance;
const devices: SimulatedDevice[] = [];

function camera(instance: Instance, deviceId: string): SimulatedDevice {
  const d = createSimulatedDevice({ server: { host: '127.0.0.1', port: instance.sipPort, id: SERVER_ID }, deviceId, password: 'unused', channels: 1, keyFrameBytes: 2000, deltaFrameBytes: 400 });
  devices.push(d);
  return d;
}

async function readers(streamId: string, delta: number): Promise<number> {
  const res = await fetch(`${zlm.apiBaseUrl}/standin/readers?secret=${ZLM_SECRET}&stream=${encodeURIComponent(streamId)}&delta=${delta}`);
  return ((await res.json()) as { readers: number }).readers;
}

before(async () => {
  stores = await startStores();
  const bPort = await freePort();
  // rtp_proxy.timeoutSec must outlast the online window (docs/architecture.md): 30 s here
  zlm = await startStandIn(bPort, { rtpTimeoutMs: 30_000 });
  const media = { VMS_MEDIA_NODES: mediaNodesEnv(zlm), LOG_LEVEL: 'debug' };
  a = await startInstance(stores, 'node-a', { env: media });
  b = await startInstance(stores, 'node-b', { env: { ...media, SERVER_PORT: String(bPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${bPort}` } });
  c = await startInstance(stores, 'node-c', { env: media });
  await waitForOnline(a, ['node-a', 'node-b', 'node-c'], 30_000);
});

after(async () => {
  await Promise.all(devices.map((d) => d.close()));
  await Promise.all([a, b, c].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await zlm?.close();
  await stores?.stop();
});

async function play(on: Instance, channel: string): Promise<StartAnswer> {
  const start = await api(on, `/vms/play/start?channelId=${channel}`, { method: 'POST' });
  assert.equal(start.json.success, true, start.bytes.toString());
  return start.json.data as StartAnswer;
}

describe('session continuity (SPEC §11)', () => {
  it('kill -9 of the owner: the camera re-registers elsewhere, its stream id gets RTP again within the online window + 2 s; a stopped session stays stopped', async () => {
    const cam1 = camera(a, DEV1);
    const cam2 = camera(a, DEV2);
    await Promise.all([cam1.start(), cam2.start()]);
    await waitFor(() => cam1.registered && cam2.registered, { timeoutMs: 10_000, description: 'cameras registered on node-a' });
    const apiOf = { api: async (m: string, p: string) => (await api(a, p, { method: m })).json as never };
    await syncChannels(apiOf, DEV1, 1);
    await syncChannels(apiOf, DEV2, 1);
    const live = await play(c, cam1.channelIds[0] as string); // forwarded to node-a
    const ended = await play(c, cam2.channelIds[0] as string);
    await waitFor(() => (zlm.stats(live.streamId)?.registered ?? false) && (zlm.stats(ended.streamId)?.registered ?? false), { timeoutMs: 10_000, description: 'both streams at the media node' });
    assert.equal(await readers(live.streamId, +1), 1, 'a viewer on the first stream');
    await readers(ended.streamId, +1);
    await waitFor(async () => (await stores.redisClient.scard('vms:rec:{node-a}:idx')) === 2, { timeoutMs: 5000, description: 'two snapshots in node-a’s index' });

    // the second viewer leaves; node-a dies right after the stop was answered
    const stop = await api(a, `/vms/play/stop?sessionId=${ended.sessionId}`, { method: 'POST' });
    assert.equal(stop.json.success, true);
    const stoppedAt = Date.now();
    const killing = a.proc.kill(); // SIGKILL now; resolves once the process is reaped
    const killedAt = Date.now();
    await killing;
    assert.ok(killedAt - stoppedAt < 100, `killed ${killedAt - stoppedAt} ms after the stop`);

    // the cameras reboot (their RTP stops) and register on node-b
    const before = zlm.stats(live.streamId)?.rtpPackets ?? 0;
    void cam1.close();
    void cam2.close();
    const cam1b = camera(b, DEV1);
    const cam2b = camera(b, DEV2);
    await Promise.all([cam1b.start(), cam2b.start()]);
    await waitFor(() => cam1b.registered && cam2b.registered, { timeoutMs: 10_000, description: 'cameras registered on node-b' });

    // RTP of the first stream: when the old camera's stopped, when the new one's arrived
    let last = before;
    let lastChangeAt = killedAt;
    let silentFrom: number | null = null;
    await waitFor(
      () => {
        const n = zlm.stats(live.streamId)?.rtpPackets ?? 0;
        const now = Date.now();
        if (n > last) {
          if (silentFrom !== null && now - lastChangeAt > 500) return true; // flowing again after a silence
          lastChangeAt = now;
          last = n;
        } else if (now - lastChangeAt > 500) {
          silentFrom ??= lastChangeAt;
        }
        return false;
      },
      { timeoutMs: ONLINE_WINDOW_MS + 15_000, intervalMs: 10, description: 'RTP again on the recovered stream id' },
    );
    const resumedAt = Date.now();
    const gap = resumedAt - (silentFrom ?? killedAt);
    const sinceKill = resumedAt - killedAt;
    console.log(`recovery: RTP gap ${gap} ms (from the old camera's last packet), ${sinceKill} ms after the kill; online window ${ONLINE_WINDOW_MS} ms`);
    assert.ok(sinceKill <= ONLINE_WINDOW_MS + 2000, `RTP back ${sinceKill} ms after the kill`);

    // exactly one recovery INVITE, sent by the device's new owner
    const plays = cam1b.sessions.filter((s) => s.kind === 'Play');
    assert.equal(plays.length, 1, 'one INVITE for the recovery');
    await eventually(() => logLines(b, 'orphaned session recovered').length === 1, 'node-b logged the recovery');
    assert.equal(logLines(c, 'orphaned session recovered').length, 0);
    assert.equal(logLines(b, 'media stream recovered')[0]?.streamId, live.streamId);
    assert.equal(zlm.stats(live.streamId)?.readers, 1, 'the viewer stayed on the same stream id');
    const metrics = await (await fetch(`${b.httpUrl}/metrics`)).text();
    assert.match(metrics, /^vms_session_recovery_total\{outcome="recovered",reason=""\} 1$/m);

    // the stopped session is never resurrected
    assert.equal(cam2b.sessions.length, 0, 'no INVITE for the stopped session');
    assert.equal(zlm.stats(ended.streamId), undefined, 'its RTP server stayed closed');
    await waitFor(async () => (await stores.redisClient.scard('vms:rec:{node-a}:idx')) === 0, { timeoutMs: 5000, description: 'node-a’s index empty' });
    assert.equal(await stores.redisClient.scard('vms:rec:{node-b}:idx'), 1, 'the recovered dialog is journaled by node-b');

    // the viewer's session id still works: its stop (on node-c) reaches node-b, which ends the recovered dialog
    const stopLive = await api(c, `/vms/play/stop?sessionId=${live.sessionId}`, { method: 'POST' });
    assert.equal(stopLive.json.success, true, stopLive.bytes.toString());
    await waitFor(() => plays[0]?.state === 'closed', { timeoutMs: 5000, description: 'BYE at the camera' });
    await waitFor(() => zlm.stats(live.streamId) === undefined, { timeoutMs: 5000, description: 'RTP server closed' });
    assert.equal(await stores.redisClient.scard('vms:rec:{node-b}:idx'), 0);
  });
});
