// Media node health from API probes, end to end on one instance: two ZLM stand-ins (NOT ZLMediaKit)
// with keepalive hooks off, so the instance's getServerConfig probes are the only thing that tells it
// a node is alive. A play goes to zlm-a (least load, ties to the smaller id); zlm-a stops → the probes
// mark it inactive and the next play goes to zlm-b without a failed attempt; zlm-a comes back at the
// same address → active again, and a new stream goes to it (it is the least loaded again).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import { startZlmStandIn, type ZlmStandIn, type ZlmStandInOptions } from '../stand-ins/zlm-stand-in.ts';
import { call, startSimDevice, ZLM_SECRET, type StartAnswer } from './media-e2e-fixture.ts';
import { startInstance, type Instance } from './signaling-fixture.ts';

const DEV = '34020000001320000071';
let httpPort: number;
let zlmAPort: number;
let zlmA: ZlmStandIn;
let zlmB: ZlmStandIn;
let instance: Instance;
let device: SimulatedDevice;

const standIn = (id: string, port?: number): Promise<ZlmStandIn> => {
  const o: ZlmStandInOptions = {
    secret: ZLM_SECRET,
    mediaServerId: id,
    hookBaseUrl: `http://127.0.0.1:${httpPort}/vms/webhook?secret=${ZLM_SECRET}`,
    keepaliveIntervalMs: 0, // probes only
  };
  return startZlmStandIn(port === undefined ? o : { ...o, port });
};

/** `media node health changed` lines of the instance for a node. */
function transitions(nodeId: string): string[] {
  const out: string[] = [];
  for (const line of instance.proc.output().split('\n')) {
    if (!line.includes('"media node health changed"')) continue;
    const rec = JSON.parse(line) as { nodeId?: string; to?: string };
    if (rec.nodeId === nodeId && rec.to !== undefined) out.push(rec.to);
  }
  return out;
}

/** Waits for a transition of the node to `state` among those logged after the first `since`. */
const waitState = (nodeId: string, state: string, since: number): Promise<unknown> =>
  waitFor(() => transitions(nodeId).slice(since).includes(state), {
    timeoutMs: 20_000,
    intervalMs: 50,
    description: `${nodeId} ${state} after transition ${since} (so far: ${transitions(nodeId).join(' → ')})`,
  });

before(async () => {
  httpPort = await freePort();
  zlmAPort = await freePort();
  [zlmA, zlmB] = await Promise.all([standIn('zlm-a', zlmAPort), standIn('zlm-b')]);
  const nodes = [zlmA, zlmB].map((z) => ({ id: z.mediaServerId, apiBaseUrl: z.apiBaseUrl, secret: ZLM_SECRET, sdpIp: '127.0.0.1', httpPort: z.httpPort }));
  instance = await startInstance({
    SERVER_PORT: String(httpPort),
    VMS_MEDIA_NODES: JSON.stringify(nodes),
    VMS_MEDIA_PROBE_INTERVAL: '0.2',
    // A node nothing confirmed for twice probe-after counts as 'probing', and an active node is preferred
    // to it. At 0.5 s, probes answered late on a loaded machine made zlm-a 'probing' for a moment (logged
    // as one more probing → active) and the last play went to zlm-b; at 3 s a node only turns suspect if
    // its probes stop for 6 s.
    VMS_MEDIA_PROBE_AFTER: '3',
    VMS_MEDIA_FAILURE_THRESHOLD: '2',
  });
  device = await startSimDevice(instance, DEV, { channels: 2 });
});

after(async () => {
  await device?.close();
  await instance?.stop();
  await Promise.all([zlmA?.close(), zlmB?.close()]);
});

describe('media node health from API probes', () => {
  it('an unreachable node becomes inactive and play picks another; back at the same address it is active and chosen again', async () => {
    const [ch1, ch2] = device.channelIds as [string, string];
    await Promise.all([waitState('zlm-a', 'active', 0), waitState('zlm-b', 'active', 0)]);

    const first = (await call<StartAnswer>(instance, 'POST', `/vms/play/start?channelId=${ch1}`)).data;
    assert.equal(first.mediaNodeId, 'zlm-a', 'equal load: the smaller id');
    await call(instance, 'POST', `/vms/play/stop?sessionId=${first.sessionId}`);

    const beforeClose = transitions('zlm-a').length;
    await zlmA.close(); // the node is gone: connection refused
    await waitState('zlm-a', 'inactive', beforeClose);
    // the first attempt succeeds: the dead node is not even tried (play has no retry on another node)
    const moved = (await call<StartAnswer>(instance, 'POST', `/vms/play/start?channelId=${ch1}`)).data;
    assert.equal(moved.mediaNodeId, 'zlm-b');
    await waitFor(() => (zlmB.stats(moved.streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 5000, description: 'RTP at zlm-b' });
    assert.equal(transitions('zlm-b').at(-1), 'active', 'the healthy node stayed active');

    const beforeBack = transitions('zlm-a').length;
    zlmA = await standIn('zlm-a', zlmAPort); // back, same address
    await waitState('zlm-a', 'active', beforeBack);
    const back = (await call<StartAnswer>(instance, 'POST', `/vms/play/start?channelId=${ch2}`)).data;
    assert.equal(back.mediaNodeId, 'zlm-a', `zlm-b carries one stream, zlm-a none (zlm-a: ${transitions('zlm-a').join(' → ')})`);
    await waitFor(() => (zlmA.stats(back.streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 5000, description: 'RTP at zlm-a' });
    await call(instance, 'POST', `/vms/play/stop?sessionId=${back.sessionId}`);
    await call(instance, 'POST', `/vms/play/stop?sessionId=${moved.sessionId}`);
  });
});
