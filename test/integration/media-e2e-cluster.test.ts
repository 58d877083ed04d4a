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
import { mediaNodesEnv, startStandIn, syncChannels, type StartAnswer } from './media-e2e-fixture.ts';
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
});
