// Device placement through the SIP edge (issue 14), the spread: 1,000 SIPp devices (one SIPp process,
// test/sipp/edge/device.xml) pointed at the edge's one address register (digest) on the three shards exactly
// as placement decides, within ±10 % of even, and a control asked on any instance reaches a device through
// the edge (Path → Route → the device's flow; SIPp answers it with device-ooc.xml). The edge's /metrics is
// scraped: what went through, the shards it sees.
// Failover, SEC-1 behind the edge and the 2022 redirect: placement-edge-failover.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@vms/harness';
import { createEdgeMetrics, startMetricsServer } from '@vms/sip-edge';
import { api } from './routing-cluster.ts';
import { CODES, placedAmong, startPlacementCluster, type PlacementCluster } from './placement-edge-cluster.ts';

const DEVICES = 1000;
let c: PlacementCluster;

before(async () => {
  // keepalives every 20 s: this file is about registration and spread
  c = await startPlacementCluster({ devices: DEVICES, firstId: '34020000001320100000', keepaliveS: 20, kind: 'sipp' });
  process.stdout.write(`# ${DEVICES} SIPp devices registered through the edge in ${c.startMs} ms\n`);
});

after(async () => {
  await c?.close();
});

describe('devices through the SIP edge: spread', () => {
  it(`${DEVICES} devices at one address are owned by their placed shards, within ±10 % of even`, async () => {
    const want = c.ids.map((id) => placedAmong(CODES, id));
    await waitFor(async () => (await c.owners(c.ids)).every((o, i) => o === want[i]), { timeoutMs: 60_000, intervalMs: 500, description: 'every device owned by its placed shard' });
    const count = new Map<string, number>();
    for (const o of want) count.set(o, (count.get(o) ?? 0) + 1);
    for (const code of CODES) {
      const n = count.get(code) ?? 0;
      assert.ok(Math.abs(n - DEVICES / 3) <= DEVICES / 30, `${code}: ${n} devices`);
    }
    assert.deepEqual({ shed: c.edge.stats().shed, sendErrors: c.edge.stats().sendErrors }, { shed: 0, sendErrors: 0 });
  });

  it('a DeviceInfo asked on any instance reaches the device through the edge and comes back', async () => {
    for (const [i, code] of CODES.entries()) {
      const id = c.ids[i * 7]!;
      const res = await api(c.shards.get(code)!, `/vms/device/info?deviceId=${id}`, { timeoutMs: 15_000 });
      assert.equal(res.json.success, true, `${code} asked ${id}: ${res.bytes.toString()}`);
      assert.equal((res.json.data as { deviceId?: string }).deviceId, id);
    }
  });

  it("the edge's /metrics: REGISTERs and MESSAGEs forwarded both ways, three eligible shards, nothing refused", async () => {
    const server = await startMetricsServer(createEdgeMetrics({ counters: c.edge.counters, shards: c.edge.shards, defaultMetrics: false }), { host: '127.0.0.1', port: 0 });
    try {
      const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      const value = (series: string): number => Number(text.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1] ?? NaN);
      assert.ok(value('vms_edge_requests_forwarded_total{method="REGISTER",direction="device_to_shard"}') >= 2 * DEVICES, 'a challenged and a digest REGISTER per device');
      assert.ok(value('vms_edge_requests_forwarded_total{method="MESSAGE",direction="shard_to_device"}') >= CODES.length, 'the DeviceInfo queries');
      assert.ok(value('vms_edge_responses_forwarded_total{direction="shard_to_device"}') >= 2 * DEVICES);
      assert.equal(value('vms_edge_shards{state="eligible"}'), CODES.length);
      assert.equal(value('vms_edge_refused_total{reason="flow_token"}'), 0);
      assert.equal(value('vms_edge_shed_total{bound="global"}'), 0);
    } finally {
      await server.close();
    }
  });
});
