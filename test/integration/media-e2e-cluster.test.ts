// Live view across a 3-instance cluster (SPEC ROUTE-1..4 with §8/§9): real redis-server, mariadbd,
// three signaling processes sharing the media node seeded through VMS_MEDIA_NODES (upserted into the
// MySQL media node table), the ZLM stand-in with its hooks on the owner, and a simulated device
// registered on node-a. play/start on node-b is forwarded to the owner, which INVITEs the device; the
// stand-in receives RTP; play/stop with only the sessionId, sent to node-c, is routed through the
// Redis session index to node-a, which BYEs the device.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { createSocket } from 'node:dgram';
import { buildRtpPacket } from '../stand-ins/rtp-packets.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_SECRET, type StartAnswer } from './media-e2e-fixture.ts';
import { api, eventually, logLines, SERVER_ID, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000123';
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
let c: Instance;
let device: SimulatedDevice;
const FAST = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '1' };

before(async () => {
  stores = await startStores();
  const aPort = await freePort();
  zlm = await startStandIn(aPort);
  const media = { VMS_MEDIA_NODES: mediaNodesEnv(zlm), ...FAST };
  a = await startInstance(stores, 'node-a', { env: { ...media, SERVER_PORT: String(aPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${aPort}` } });
  b = await startInstance(stores, 'node-b', { env: media });
  c = await startInstance(stores, 'node-c', { env: media });
  device = createSimulatedDevice({ server: { host: '127.0.0.1', port: a.sipPort, id: SERVER_ID }, deviceId: DEV, password: 'unused', channels: 1 });
  await device.start();
  await waitFor(() => device.registered, { timeoutMs: 10_000, description: 'device registered on node-a' });
  await waitForOnline(a, ['node-a', 'node-b', 'node-c']);
  await syncChannels({ api: async (m, p) => (await api(a, p, { method: m })).json as never }, DEV, 1);
});

after(async () => {
  await device?.close();
  await Promise.all([a, b, c].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await zlm?.close();
  await stores?.stop();
});

describe('media across instances', () => {
  it('play on a non-owner → forwarded → the owner INVITEs the device → RTP at the media node → URLs; stop by sessionId from a third instance', async () => {
    const channel = device.channelIds[0] as string;
    const start = await api(b, `/vms/play/start?channelId=${channel}`, { method: 'POST' });
    assert.equal(start.json.success, true, start.bytes.toString());
    const answer = start.json.data as StartAnswer;
    assert.equal(answer.mediaNodeId, zlm.mediaServerId);
    assert.ok(answer.urls.flv?.includes(answer.streamId));
    await eventually(() => logLines(b, 'forwarded to owner').some((l) => l.deviceId === DEV), 'node-b forwarded the play to node-a');
    await eventually(() => logLines(a, 'media stream established').length === 1, 'node-a sent the INVITE (its log read)');
    assert.equal(logLines(b, 'media stream established').length, 0);
    const dev = device.sessions.find((s) => s.kind === 'Play');
    assert.ok(dev !== undefined, 'the device received the INVITE');
    await waitFor(() => (zlm.stats(answer.streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 5000, description: 'RTP at the media node' });

    // the session id is in the shared index: node-c routes it to the owner
    assert.equal(await stores.redisClient.get(`vms:session:{${answer.sessionId}}`), DEV);
    const stop = await api(c, `/vms/play/stop?sessionId=${answer.sessionId}`, { method: 'POST' });
    assert.equal(stop.json.success, true, stop.bytes.toString());
    await eventually(() => logLines(c, 'forwarded to owner').some((l) => l.deviceId === DEV), 'node-c forwarded the stop');
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'BYE at the device' });
    await waitFor(() => zlm.stats(answer.streamId) === undefined, { timeoutMs: 3000, description: 'RTP server closed' });
    await waitFor(async () => (await stores.redisClient.get(`vms:session:{${answer.sessionId}}`)) === null, { timeoutMs: 3000, description: 'session index entry removed' });

    const again = await api(c, `/vms/play/stop?sessionId=${answer.sessionId}`, { method: 'POST' });
    assert.equal(again.json.success, false, 'an ended session is not routable any more');
  });

  it('talk started on node-b reaches the owner node-a: audio both ways; stopped from node-c', async () => {
    const channel = device.channelIds[0] as string;
    const mic = 'cluster-mic';
    const open = (await (await fetch(`${zlm.apiBaseUrl}/index/api/openRtpServer?secret=${ZLM_SECRET}&stream_id=${mic}&port=0&tcp_mode=0`)).json()) as { code: number; port: number };
    assert.equal(open.code, 0);
    const sock = createSocket('udp4');
    let seq = 0;
    const feeding = setInterval(() => {
      seq++;
      sock.send(buildRtpPacket({ ssrc: 0x77, seq, timestamp: seq * 160, payloadType: 8, payload: Buffer.alloc(160, 0xd5) }), open.port, '127.0.0.1');
    }, 20);
    try {
      await waitFor(() => zlm.stats(mic)?.registered === true, { timeoutMs: 5000, description: 'microphone stream on the node' });
      device.talks = true;
      const start = await api(b, `/vms/talk/start?channelId=${channel}&mediaNodeId=${zlm.mediaServerId}&app=rtp&stream=${mic}`, { method: 'POST', timeoutMs: 25_000 });
      assert.equal(start.json.success, true, start.bytes.toString());
      await eventually(() => logLines(b, 'forwarded to owner').some((l) => l.deviceId === DEV), 'node-b forwarded the talk');
      const call = device.audioCalls.at(-1);
      assert.ok(call !== undefined);
      await waitFor(() => call.packets >= 5, { timeoutMs: 5000, description: 'operator audio at the device' });
      await waitFor(() => (zlm.stats(`talk_${channel}`)?.rtpPackets ?? 0) >= 5, { timeoutMs: 5000, description: 'device audio at the node' });
      const listed = await api(c, `/vms/talk?deviceId=${DEV}`);
      assert.equal((listed.json.data as unknown[]).length, 1, 'listed through node-c from the owner');
      const stop = await api(c, `/vms/talk/stop?channelId=${channel}`, { method: 'POST' });
      assert.equal(stop.json.success, true, stop.bytes.toString());
      await waitFor(() => call.ended, { timeoutMs: 5000, description: 'BYE at the device' });
      assert.equal(zlm.stats(`talk_${channel}`), undefined);
    } finally {
      clearInterval(feeding);
      sock.close();
    }
  });
});
