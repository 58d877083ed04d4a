// The SIP edge reaching the shards over TCP (issue 14, VMS_EDGE_SHARD_TRANSPORT=tcp): real redis-server,
// mariadbd, three signaling processes, the edge and two simulated cameras pointed at it, one over UDP and one
// over TCP. The edge opens its own pooled connections to the shards (each device pinned to one), the shards
// see the edge's connection plus the device flow the edge names in its Via, and reach each camera back on
// that connection through the edge. A shard is then stopped and started again on the same ports: the edge
// reconnects by itself, the cameras (challenged by the restarted shard) register again and are reached again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import { CODES, PASSWORD, placedAmong, startPlacementCluster, type PlacementCluster } from './placement-edge-cluster.ts';
import { api, SERVER_ID, startInstance, type Instance } from './routing-cluster.ts';

let c: PlacementCluster;
const placedOn = (code: string, from: number): string => {
  for (let i = from; ; i++) {
    const id = `340200000013206${String(i).padStart(5, '0')}`;
    if (placedAmong(CODES, id) === code) return id;
  }
};
// both cameras on shard-a: the shard restarted below
const UDP_DEV = placedOn('shard-a', 0);
const TCP_DEV = placedOn('shard-a', 500);
const cams: SimulatedDevice[] = [];
const keepalives = new Map<string, number>();

const shard = (code: string): Instance => c.shards.get(code)!;
const info = async (via: string, deviceId: string): Promise<string> => {
  const r = await api(shard(via), `/vms/device/info?deviceId=${deviceId}`, { timeoutMs: 20_000 });
  return r.json.success === true ? ((r.json.data as { deviceId?: string }).deviceId ?? '') : `failed: ${r.bytes.toString()}`;
};
const linkIds = (code: string): (number | undefined)[] => c.edge.links!.openFlows('127.0.0.1', shard(code).sipPort).map((f) => f.connectionId);

before(async () => {
  c = await startPlacementCluster({ devices: 0, firstId: UDP_DEV, keepaliveS: 1, edgeTransports: ['udp', 'tcp'], edgeShardTransport: 'tcp' });
  for (const [deviceId, transport] of [[UDP_DEV, 'udp'], [TCP_DEV, 'tcp']] as const) {
    const cam = createSimulatedDevice({
      server: { host: '127.0.0.1', port: c.edge.port, id: SERVER_ID },
      transport,
      deviceId,
      password: PASSWORD,
      channels: 1,
      keepaliveIntervalS: 1,
      utcOffsetMinutes: 480,
    });
    cam.on('keepalive', (status) => {
      if (status === 200) keepalives.set(deviceId, (keepalives.get(deviceId) ?? 0) + 1);
    });
    await cam.start();
    cams.push(cam);
  }
});

after(async () => {
  for (const cam of cams) await cam.close();
  await c?.close();
});

describe('edge → shards over TCP', () => {
  it('a camera over UDP and one over TCP register through the edge on shard-a, over the edge’s own TCP connections', async () => {
    await waitFor(async () => (await c.owners([UDP_DEV, TCP_DEV])).every((o) => o === 'shard-a'), { timeoutMs: 20_000, intervalMs: 100, description: 'both cameras registered on shard-a' });
    await waitFor(() => (keepalives.get(UDP_DEV) ?? 0) >= 2 && (keepalives.get(TCP_DEV) ?? 0) >= 2, { timeoutMs: 10_000, description: 'keepalives answered 200 through the TCP links' });
    const open = linkIds('shard-a');
    assert.ok(open.length >= 1 && open.length <= 2, `at most 2 connections to shard-a (the pool): ${open.length}`);
    assert.equal(c.edge.stats().toShard > 0, true);
    assert.equal(c.edge.links!.stats().refused, 0);
  });

  it('controls from other instances reach both cameras back through the edge (the shard sends on the edge’s connection)', async () => {
    assert.equal(await info('shard-b', UDP_DEV), UDP_DEV);
    assert.equal(await info('shard-c', TCP_DEV), TCP_DEV);
  });

  it('shard-a restarted on the same ports: the edge reconnects, the cameras register again there and are reached again', async () => {
    const a = shard('shard-a');
    const before = new Set(linkIds('shard-a'));
    const connects = c.edge.links!.stats().connects;
    await a.proc.stop();
    const restarted = await startInstance(c.stores, 'shard-a', { env: { ...a.proc.env } });
    (c.shards as Map<string, Instance>).set('shard-a', restarted);
    await waitFor(() => linkIds('shard-a').some((id) => !before.has(id)), { timeoutMs: 30_000, intervalMs: 100, description: 'the edge connected to the restarted shard-a' });
    assert.ok(c.edge.links!.stats().connects > connects, 'reconnected');
    // while shard-a was away the cameras may have gone to another shard; placement brings them back
    await waitFor(async () => (await c.owners([UDP_DEV, TCP_DEV])).every((o) => o === 'shard-a'), { timeoutMs: 30_000, intervalMs: 200, description: 'both cameras registered on the restarted shard-a' });
    await waitFor(async () => (await info('shard-b', UDP_DEV)) === UDP_DEV && (await info('shard-c', TCP_DEV)) === TCP_DEV, { timeoutMs: 20_000, intervalMs: 500, description: 'both cameras reached again' });
  });
});
