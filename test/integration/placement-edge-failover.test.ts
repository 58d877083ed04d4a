// Device placement (issue 14), failover and trust: devices behind the SIP edge; another device behind the
// same edge cannot speak for a registered one (SEC-1); kill -9 of one shard → its devices are online on the
// other two within one keepalive interval + one registration once the node table says it is gone, and no
// other device moved; a 2022 device (X-GB-ver: 3.0) following 302 registers on its placed shard, a 2016 one
// is served where it registered.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { buildKeepalive } from '@vms/gb28181';
import { waitFor } from '@vms/harness';
import { createSipStack } from '@vms/sip';
import { api, SERVER_ID, TENANT, token, waitForOnline } from './routing-cluster.ts';
import { CODES, ONLINE_WINDOW_MS, PASSWORD, placedAmong, POLL_MS, startPlacementCluster, type PlacementCluster } from './placement-edge-cluster.ts';

const DEVICES = 45;
const KEEPALIVE_S = 2;
let c: PlacementCluster;

before(async () => {
  c = await startPlacementCluster({ devices: DEVICES, firstId: '34020000001320200000', keepaliveS: KEEPALIVE_S });
  await waitFor(async () => (await c.owners(c.ids)).every((o, i) => o === placedAmong(CODES, c.ids[i]!)), { timeoutMs: 30_000, intervalMs: 200, description: 'every device on its placed shard' });
});

after(async () => {
  await c?.close();
});

describe('devices through the SIP edge: trust and failover', () => {
  it('another device behind the same edge cannot speak for a registered one (SEC-1): 401, owner unchanged', async () => {
    const victim = c.ids[5]!;
    const before = (await c.owners([victim]))[0];
    const attacker = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
    try {
      const res = await attacker.request({
        method: 'MESSAGE',
        uri: `sip:${SERVER_ID}@3402000000`,
        headers: { From: `<sip:${victim}@3402000000>`, To: `<sip:${SERVER_ID}@3402000000>` },
        body: buildKeepalive({ sn: '1', deviceId: victim, status: 'OK' }),
        contentType: 'Application/MANSCDP+xml',
        target: { host: '127.0.0.1', port: c.edge.port, transport: 'udp' },
      });
      assert.equal(res.status, 401);
    } finally {
      await attacker.close();
    }
    assert.equal((await c.owners([victim]))[0], before);
    const info = await api(c.shards.get('shard-a')!, `/vms/device/info?deviceId=${victim}`, { timeoutMs: 15_000 });
    assert.equal(info.json.success, true, `the real device is still reached: ${info.bytes.toString()}`);
  });

  it('kill -9 of one shard: its devices come back on the other two within keepalive + registration, nobody else moved', async () => {
    const dead = 'shard-b';
    const survivors = CODES.filter((x) => x !== dead);
    const before = await c.owners(c.ids);
    const movers = c.ids.filter((_, i) => before[i] === dead);
    const stayers = c.ids.filter((_, i) => before[i] !== dead);
    assert.ok(movers.length > 0);
    const changes = c.edge.shards.changes();
    const t0 = Date.now();
    await c.shards.get(dead)!.proc.kill();
    // gone from the node table one online window after its last beat, read by the edge within a poll; then
    // each mover's next keepalive (or its retransmission) reaches a survivor, which answers 401, and the
    // device registers there (401 + REGISTER with digest). The allowance covers every mover at once on two
    // cores shared with other suites.
    const bound = ONLINE_WINDOW_MS + POLL_MS + KEEPALIVE_S * 1000 + 10_000;
    await waitFor(async () => (await c.owners(movers)).every((o, i) => o === placedAmong(survivors, movers[i]!)), {
      timeoutMs: bound,
      intervalMs: 200,
      description: `${movers.length} devices of ${dead} re-placed on ${survivors.join(', ')}`,
    });
    const took = Date.now() - t0;
    assert.ok(c.edge.shards.changes() > changes, 'the edge counted the placement change (vms_edge_placement_changes_total)');
    assert.deepEqual(await c.owners(stayers), before.filter((o) => o !== dead), 'no device of a live shard moved');
    process.stdout.write(`# ${movers.length} devices of a killed shard back online in ${took} ms (window ${ONLINE_WINDOW_MS} ms + poll ${POLL_MS} ms + keepalive ${KEEPALIVE_S} s + registration)\n`);
    await waitForOnline(c.shards.get('shard-a')!, survivors);
    const info = await api(c.shards.get('shard-a')!, `/vms/device/info?deviceId=${movers[0]!}`, { timeoutMs: 15_000 });
    assert.equal(info.json.success, true, `a re-placed device is reached through the edge: ${info.bytes.toString()}`);
  });
});

describe('GB/T 28181-2022 register redirect (shard-b is gone: placement over shard-a, shard-c)', () => {
  const sims: SimulatedDevice[] = [];
  after(async () => {
    await Promise.all(sims.map((d) => d.close()));
  });

  const survivors = ['shard-a', 'shard-c'];
  const idOn = (want: string, from: number): string => {
    for (let i = from; ; i++) {
      const id = `340200000013203${String(i).padStart(5, '0')}`;
      if (placedAmong(survivors, id) === want) return id;
    }
  };
  const sim = (deviceId: string, o: { gbVersion: '2016' | '2022'; followRedirect?: boolean }): SimulatedDevice => {
    const a = c.shards.get('shard-a')!;
    const d = createSimulatedDevice({ server: { host: '127.0.0.1', port: a.sipPort, id: SERVER_ID }, deviceId, password: PASSWORD, keepaliveIntervalS: KEEPALIVE_S, registerRetryMs: 500, ...o });
    sims.push(d);
    return d;
  };

  it('X-GB-ver 3.0 and following 302: registered on its placed shard (shard-c), not on the redirect server (shard-a)', async () => {
    const id = idOn('shard-c', 0);
    await sim(id, { gbVersion: '2022', followRedirect: true }).start();
    await waitFor(async () => (await c.owners([id]))[0] === 'shard-c', { timeoutMs: 15_000, intervalMs: 100, description: `${id} owned by shard-c` });
    const info = await api(c.shards.get('shard-a')!, `/vms/device/info?deviceId=${id}`, { timeoutMs: 15_000 });
    assert.equal(info.json.success, true, info.bytes.toString());
  });

  it('a 2016 device (no X-GB-ver, not following 302) placed elsewhere is still served where it registered', async () => {
    const id = idOn('shard-c', 1000);
    await sim(id, { gbVersion: '2016' }).start();
    await waitFor(async () => (await c.owners([id]))[0] === 'shard-a', { timeoutMs: 15_000, intervalMs: 100, description: `${id} owned by shard-a` });
  });
});

describe('draining a shard (operator API)', () => {
  it('POST /vms/nodes/drain: operator only, unknown node 400; the drained shard’s devices move at their next message, then undrain', async () => {
    const a = c.shards.get('shard-a')!;
    const operator = await token(TENANT, 'operator');
    assert.equal((await api(a, '/vms/nodes/drain?nodeCode=shard-c&draining=true', { method: 'POST' })).status, 403, 'a tenant token');
    assert.equal((await api(a, '/vms/nodes/drain?nodeCode=no-such-node&draining=true', { method: 'POST', token: operator })).json.code, 400);
    const owners = await c.owners(c.ids);
    const drained = c.ids.filter((_, i) => owners[i] === 'shard-c');
    assert.ok(drained.length > 0);
    const res = await api(a, '/vms/nodes/drain?nodeCode=shard-c&draining=true', { method: 'POST', token: operator });
    assert.deepEqual(res.json.data, { nodeCode: 'shard-c', draining: true, periodMs: 1000 });
    const listed = (await api(a, '/vms/nodes', { token: operator })).json.data as { nodes: { nodeCode: string; draining: boolean }[] };
    assert.equal(listed.nodes.find((n) => n.nodeCode === 'shard-c')?.draining, true);
    await waitFor(async () => (await c.owners(drained)).every((o) => o === 'shard-a'), {
      timeoutMs: POLL_MS + KEEPALIVE_S * 1000 + 10_000,
      intervalMs: 200,
      description: `${drained.length} devices of the drained shard-c on shard-a`,
    });
    assert.deepEqual((await api(a, '/vms/nodes/drain?nodeCode=shard-c&draining=false', { method: 'POST', token: operator })).json.data, { nodeCode: 'shard-c', draining: false, periodMs: 0 });
  });
});
