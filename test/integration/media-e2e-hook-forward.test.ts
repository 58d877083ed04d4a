// ZLM hooks landing on an instance that does not hold the stream (SPEC §9 with ROUTE-3): real
// redis-server and mariadbd, two signaling processes sharing one ZLM stand-in (NOT ZLMediaKit) whose
// hooks all go to node-b, as behind a load-balanced hook URL, and a simulated device registered on
// node-a. node-a plays the channel and records itself as the stream's holder in Redis; when the last
// viewer leaves, on_stream_none_reader reaches node-b, which forwards it to node-a: node-a BYEs the
// device and closes the RTP port, and ZLM gets node-a's answer (`close: true`) through node-b.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_SECRET, type StartAnswer } from './media-e2e-fixture.ts';
import { api, eventually, logLines, SERVER_ID, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000124';
let stores: Stores;
let zlm: ZlmStandIn;
let a: Instance;
let b: Instance;
let device: SimulatedDevice;

before(async () => {
  stores = await startStores();
  const bPort = await freePort();
  zlm = await startStandIn(bPort); // every hook goes to node-b
  const media = { VMS_MEDIA_NODES: mediaNodesEnv(zlm), VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '1' };
  a = await startInstance(stores, 'node-a', { env: media });
  b = await startInstance(stores, 'node-b', { env: { ...media, SERVER_PORT: String(bPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${bPort}` } });
  device = createSimulatedDevice({ server: { host: '127.0.0.1', port: a.sipPort, id: SERVER_ID }, deviceId: DEV, password: 'unused', channels: 1 });
  await device.start();
  await waitFor(() => device.registered, { timeoutMs: 10_000, description: 'device registered on node-a' });
  await waitForOnline(b, ['node-a', 'node-b']);
  await syncChannels({ api: async (m, p) => (await api(a, p, { method: m })).json as never }, DEV, 1);
});

after(async () => {
  await device?.close();
  await Promise.all([a, b].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await zlm?.close();
  await stores?.stop();
});

describe('media hooks on a non-owner instance', () => {
  it('on_stream_none_reader delivered to node-b is forwarded to the holder node-a, which stops the device stream; ZLM gets close: true', async () => {
    const channel = device.channelIds[0] as string;
    const start = await api(a, `/vms/play/start?channelId=${channel}`, { method: 'POST' });
    assert.equal(start.json.success, true, start.bytes.toString());
    const answer = start.json.data as StartAnswer;
    const holderKey = `vms:media:holder:${zlm.mediaServerId}:${answer.streamId}`;
    assert.equal(await stores.redisClient.get(holderKey), 'node-a', 'node-a recorded as the holder');
    await waitFor(() => zlm.stats(answer.streamId)?.registered === true, { timeoutMs: 5000, description: 'stream registered at the node' });
    const dev = device.sessions.find((s) => s.kind === 'Play');
    assert.ok(dev !== undefined && dev.state !== 'closed');
    // stream_changed (regist) already went to node-b and on to the holder
    await eventually(() => logLines(b, 'media hook forwarded to holder').some((l) => l.hook === 'on_stream_changed' && l.holder === 'node-a'), 'stream_changed forwarded');

    for (const delta of ['1', '-1']) {
      const r = await fetch(`${zlm.apiBaseUrl}/standin/readers?secret=${ZLM_SECRET}&stream=${answer.streamId}&delta=${delta}`);
      assert.equal(((await r.json()) as { code: number }).code, 0);
    }
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'BYE at the device' });
    const hook = await waitFor(
      () => zlm.hookCalls.find((c) => c.name === 'on_stream_none_reader' && c.body.stream === answer.streamId && (c.status !== undefined || c.error !== undefined)),
      { timeoutMs: 5000, description: 'none-reader hook answered' },
    );
    assert.deepEqual([hook?.status, hook?.reply?.code, hook?.reply?.close], [200, 0, true], 'the holder’s answer, relayed by node-b');
    await eventually(
      () => logLines(b, 'media hook forwarded to holder').some((l) => l.hook === 'on_stream_none_reader' && l.holder === 'node-a' && l.streamId === answer.streamId),
      'node-b forwarded the none-reader hook',
    );
    await eventually(() => logLines(a, 'media stream ended').some((l) => l.streamId === answer.streamId && l.reason === 'no reader'), 'node-a ended the stream');
    assert.equal(logLines(b, 'media stream ended').length, 0, 'node-b held nothing');
    await waitFor(() => zlm.stats(answer.streamId) === undefined, { timeoutMs: 3000, description: 'RTP server closed by node-a' });
    await waitFor(async () => (await stores.redisClient.get(holderKey)) === null, { timeoutMs: 3000, description: 'holder record removed' });
    const stop = await api(a, `/vms/play/stop?sessionId=${answer.sessionId}`, { method: 'POST' });
    assert.equal(stop.json.success, false, 'the session ended with its stream');
  });
});
