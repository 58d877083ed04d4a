// Device placement (issue 14), failover and trust: 1,000 SIPp devices (test/sipp/edge/device.xml, each with its
// own keepalives) behind the SIP edge, three shards with their default settings. Another device behind the
// same edge cannot speak for a registered one (SEC-1); kill -9 of one shard → its devices are online on the
// other two within one keepalive interval + one registration once the node table says it is gone, nobody else
// moved, a moved device answers controls asked on any instance; a 2022 device (X-GB-ver: 3.0) following 302
// registers on its placed shard, a 2016 one is served where it registered; a drained shard's devices all move,
// paced (none before its slot in the drain period), each within its slot + one keepalive interval + 6 s (the
// shard answers a moved device's keepalive 404, it registers at once), nobody else moved; undrained, it takes
// its devices back paced the same way.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { buildKeepalive } from '@vms/gb28181';
import { waitFor } from '@vms/harness';
import { drainSlot } from '@vms/routing';
import { createSipStack } from '@vms/sip';
import type { RowDataPacket } from 'mysql2/promise';
import { api, SERVER_ID, TENANT, token, waitForOnline } from './routing-cluster.ts';
import { CODES, PASSWORD, placedAmong, startPlacementCluster, type PlacementCluster } from './placement-edge-cluster.ts';

// 1,000 in the proof: VMS_EDGE_FAILOVER_DEVICES=1000 (figures in docs/placement.md); the suite runs fewer so the file
// stays within ~2 min on two loaded cores (at load ~20 a shard completes ~5–7 registrations a second)
const DEVICES = Number(process.env.VMS_EDGE_FAILOVER_DEVICES ?? 300);
// The devices' own keepalive period (SIPp -d): the device's setting, not the platform's (whose settings are
// all defaults here). At least the SIPp device's answer timeout (8 s) + its retry pause (≤ 4 s), so a device
// whose keepalive went to the dead shard tries again within one interval too.
const KEEPALIVE_S = 12;
// One registration (401 + digest REGISTER) for every mover at once, on two cores shared with other suites:
// the target sheds first REGISTERs past its ceiling (503) and SIPp tries again 1–4 s later, or a starved store
// fails it (500) and the device waits its 8 s answer timeout + up to 4 s before trying again. At least 25 s;
// more when the movers outnumber what the targets complete on a loaded machine: at load ~20 a shard finished
// ~7 registrations a second (1,000 devices registered in 46 s over three shards), so 5/s per target is the floor.
const REGISTRATION_MS = 25_000;
const LOADED_REGISTRATIONS_PER_S = 5;
const registrationMs = (movers: number, targets: number): number => Math.max(REGISTRATION_MS, Math.ceil((movers / (targets * LOADED_REGISTRATIONS_PER_S)) * 1000));
// Time to move, per drained device, once the drain released it (its slot of the period, read by the edge
// within a poll): the device learns at its next keepalive (within one interval), which shard-a answers 404 at
// once (a device it has no registration of, through the edge), then one registration (401 + digest REGISTER):
// a few round trips, 6 s allowed on two loaded cores. Before the SIPp scenario followed an optional recv's
// jump to its first message, every such device waited out its keepalive's 8 s receive timeout (the first
// drained device moved ~8.6 s after a 1 s drain) and some never registered again. At the size (1,000)
// the one target's registration rate on this machine bounds it instead (registrationMs, docs/placement.md).
const MOVE_MS = 6_000;
let c: PlacementCluster;

/** Movers later than released + one keepalive interval + `moveMs`, with how late, for the message. */
const lateMovers = (movedAt: ReadonlyMap<string, number>, releasedAt: (id: string) => number, moveMs: number): string[] =>
  [...movedAt].filter(([id, t]) => t > releasedAt(id) + KEEPALIVE_S * 1000 + moveMs).map(([id, t]) => `${id} +${t - releasedAt(id) - KEEPALIVE_S * 1000} ms`);

/** Waits until every id is owned as `want` says; returns when each was first seen there (ms after t0). */
async function waitMoved(ids: readonly string[], want: (id: string) => string, t0: number, timeoutMs: number, what: string): Promise<Map<string, number>> {
  const movedAt = new Map<string, number>();
  try {
    await waitFor(
      async () => {
        const now = Date.now() - t0;
        (await c.owners(ids)).forEach((o, i) => {
          if (o === want(ids[i]!) && !movedAt.has(ids[i]!)) movedAt.set(ids[i]!, now);
        });
        return movedAt.size === ids.length;
      },
      { timeoutMs, intervalMs: 250, description: what },
    );
  } catch (err) {
    const left = ids.filter((id) => !movedAt.has(id)).slice(0, 5);
    const where = await c.owners(left);
    // alive or not: the device's last keepalive and registration as the store has them (database clock)
    const [rows] = left.length === 0 ? [[]] : await c.stores.pool.query<RowDataPacket[]>('SELECT device_id, keepalive_at, registered_at, NOW(3) AS now FROM gb_device WHERE device_id IN (?)', [left]);
    const seen = new Map((rows as RowDataPacket[]).map((r) => [String(r.device_id), `keepalive ${String(r.keepalive_at)}, registered ${String(r.registered_at)}, now ${String(r.now)}`]));
    const stragglers = left.map((id, i) => `${id} on ${where[i]} (${seen.get(id) ?? 'no row'})`).join(', ');
    throw new Error(`${what}: ${movedAt.size} of ${ids.length} within ${timeoutMs} ms (last at ${Math.max(0, ...movedAt.values())} ms); not moved: ${stragglers}`, { cause: err });
  }
  return movedAt;
}

/** A shard's REGISTER answers by result (its /metrics), for the figures: how much was shed on the way. */
const registrations = async (code: string): Promise<string> =>
  (await (await fetch(`${c.shards.get(code)!.httpUrl}/metrics`)).text())
    .split('\n')
    .filter((l) => l.startsWith('vms_sip_registrations_total{'))
    .map((l) => l.replace('vms_sip_registrations_total', ''))
    .join(' ');

const spread = (movedAt: ReadonlyMap<string, number>): string => {
  const t = [...movedAt.values()].sort((x, y) => x - y);
  return `first ${t[0]} ms, median ${t[Math.floor(t.length / 2)]} ms, last ${t[t.length - 1]} ms`;
};

before(async () => {
  c = await startPlacementCluster({ devices: DEVICES, firstId: '34020000001320200000', keepaliveS: KEEPALIVE_S, kind: 'sipp', platformDefaults: true });
  await waitFor(async () => (await c.owners(c.ids)).every((o, i) => o === placedAmong(CODES, c.ids[i]!)), { timeoutMs: 60_000, intervalMs: 500, description: 'every device on its placed shard' });
  process.stdout.write(`# ${DEVICES} SIPp devices registered through the edge in ${c.startMs} ms\n`);
});

after(async () => {
  // SIPp's own count: a call that ended (failed) is a device that stopped, not one the platform left behind
  const sipp = await c?.sipp?.stop();
  if (sipp !== undefined) process.stdout.write(`# SIPp devices: ${JSON.stringify(sipp.stats)}\n`);
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
    // gone from the node table one online window after its last beat (default heartbeat 5 s × 3), read by the
    // edge within a poll; then each mover's next keepalive (or the retransmission of one in flight) reaches a
    // survivor, which answers 404 (no registration of it here), and the device registers there (401 + REGISTER
    // with digest)
    const registration = registrationMs(movers.length, survivors.length);
    const bound = c.onlineWindowMs + c.pollMs + KEEPALIVE_S * 1000 + registration;
    const movedAt = await waitMoved(movers, (id) => placedAmong(survivors, id), t0, bound, `${movers.length} devices of ${dead} re-placed on ${survivors.join(', ')}`);
    const took = Date.now() - t0;
    assert.ok(c.edge.shards.changes() > changes, 'the edge counted the placement change (vms_edge_placement_changes_total)');
    assert.deepEqual(await c.owners(stayers), before.filter((o) => o !== dead), 'no device of a live shard moved');
    process.stdout.write(
      `# ${movers.length} devices of a killed shard back online in ${took} ms (${spread(movedAt)}; bound ${bound}: window ${c.onlineWindowMs} + poll ${c.pollMs} + keepalive ${KEEPALIVE_S * 1000} + registration ${registration})\n`,
    );
    for (const code of survivors) process.stdout.write(`# ${code} REGISTER answers: ${await registrations(code)}\n`);
    await waitForOnline(c.shards.get('shard-a')!, survivors);
    // a control asked on each survivor reaches a moved device, wherever it landed
    for (const code of survivors) {
      const id = movers.find((m) => placedAmong(survivors, m) !== code)!;
      const info = await api(c.shards.get(code)!, `/vms/device/info?deviceId=${id}`, { timeoutMs: 15_000 });
      assert.equal(info.json.success, true, `${code} asked ${id}, moved off ${dead}: ${info.bytes.toString()}`);
    }
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
  it('POST /vms/nodes/drain: operator only, unknown node 400; the drained shard’s devices all move, paced, within period + keepalive + registration, nobody else moves; then undrain', async () => {
    const a = c.shards.get('shard-a')!;
    const operator = await token(TENANT, 'operator');
    assert.equal((await api(a, '/vms/nodes/drain?nodeCode=shard-c&draining=true', { method: 'POST' })).status, 403, 'a tenant token');
    assert.equal((await api(a, '/vms/nodes/drain?nodeCode=no-such-node&draining=true', { method: 'POST', token: operator })).json.code, 400);
    const owners = await c.owners(c.ids);
    const drained = c.ids.filter((_, i) => owners[i] === 'shard-c');
    const others = c.ids.filter((_, i) => owners[i] !== 'shard-c');
    assert.ok(drained.length > 0);
    const t0 = Date.now();
    // default settings: no period named, so the shard's online devices at vms.placement.drain-rate (100/s)
    const res = await api(a, '/vms/nodes/drain?nodeCode=shard-c&draining=true', { method: 'POST', token: operator });
    const { periodMs } = res.json.data as { periodMs: number };
    assert.deepEqual(res.json.data, { nodeCode: 'shard-c', draining: true, periodMs });
    assert.ok(periodMs >= 1000 && periodMs <= Math.ceil((DEVICES / 100) * 1000), `period ${periodMs} ms for ~${drained.length} devices at 100/s`);
    const listed = (await api(a, '/vms/nodes', { token: operator })).json.data as { nodes: { nodeCode: string; draining: boolean; drainedShare: number }[] };
    const row = listed.nodes.find((n) => n.nodeCode === 'shard-c');
    assert.equal(row?.draining, true);
    assert.ok(row.drainedShare >= 0 && row.drainedShare <= 1);
    // each drained device's first sight on shard-a: paced, none before its slot of the period
    const registration = registrationMs(drained.length, 1);
    const bound = c.pollMs + periodMs + KEEPALIVE_S * 1000 + registration;
    const movedAt = await waitMoved(drained, () => 'shard-a', t0, bound, `${drained.length} devices of the drained shard-c on shard-a`);
    const took = Date.now() - t0;
    const early = drained.filter((id) => movedAt.get(id)! < drainSlot(id) * periodMs - 250);
    assert.deepEqual(early, [], 'no device left before its slot of the drain period');
    const moveMs = DEVICES <= 300 ? MOVE_MS : registration;
    const late = lateMovers(movedAt, (id) => c.pollMs + drainSlot(id) * periodMs, moveMs);
    assert.deepEqual(late, [], `moved later than poll + its slot of the period + keepalive ${KEEPALIVE_S} s + ${moveMs} ms`);
    assert.deepEqual(await c.owners(others), others.map(() => 'shard-a'), 'no device of shard-a moved');
    process.stdout.write(
      `# ${drained.length} devices of a drained shard moved in ${took} ms (${spread(movedAt)}; bound ${bound}: poll ${c.pollMs} + period ${periodMs} + keepalive ${KEEPALIVE_S * 1000} + registration ${registration})\n`,
    );
    process.stdout.write(`# shard-a REGISTER answers: ${await registrations('shard-a')}\n`);
    const info = await api(c.shards.get('shard-c')!, `/vms/device/info?deviceId=${drained[0]!}`, { timeoutMs: 15_000 });
    assert.equal(info.json.success, true, `the drained shard routes a control to the device’s new owner: ${info.bytes.toString()}`);
  });

  it('undrain: shard-c takes its devices back paced too (none before its slot of the return period), each within its slot + keepalive + 6 s, nobody else moves', async () => {
    const a = c.shards.get('shard-a')!;
    const operator = await token(TENANT, 'operator');
    const serving = ['shard-a', 'shard-c'];
    const owners = await c.owners(c.ids);
    assert.ok(owners.every((o) => o === 'shard-a'), 'every device on shard-a after the drain');
    const returning = c.ids.filter((id) => placedAmong(serving, id) === 'shard-c');
    const staying = c.ids.filter((id) => placedAmong(serving, id) !== 'shard-c');
    const t0 = Date.now();
    // default: its share of the group's online devices (all on shard-a, over the two serving shards) at 100/s
    const res = await api(a, '/vms/nodes/drain?nodeCode=shard-c&draining=false', { method: 'POST', token: operator });
    const { periodMs } = res.json.data as { periodMs: number };
    assert.deepEqual(res.json.data, { nodeCode: 'shard-c', draining: false, periodMs });
    assert.ok(periodMs >= 1000 && periodMs <= Math.ceil((DEVICES / 2 / 100) * 1000) + 100, `period ${periodMs} ms for ~${returning.length} devices at 100/s`);
    const listed = (await api(a, '/vms/nodes', { token: operator })).json.data as { nodes: { nodeCode: string; draining: boolean; joinedShare: number }[] };
    const row = listed.nodes.find((n) => n.nodeCode === 'shard-c');
    assert.equal(row?.draining, false);
    assert.ok(row.joinedShare >= 0 && row.joinedShare <= 1);
    const registration = registrationMs(returning.length, 1);
    const bound = c.pollMs + periodMs + KEEPALIVE_S * 1000 + registration;
    const movedAt = await waitMoved(returning, () => 'shard-c', t0, bound, `${returning.length} devices back on the undrained shard-c`);
    const early = returning.filter((id) => movedAt.get(id)! < drainSlot(id) * periodMs - 250);
    assert.deepEqual(early, [], 'no device came back before its slot of the return period');
    const moveMs = DEVICES <= 300 ? MOVE_MS : registration;
    const late = lateMovers(movedAt, (id) => c.pollMs + drainSlot(id) * periodMs, moveMs);
    assert.deepEqual(late, [], `came back later than poll + its slot of the period + keepalive ${KEEPALIVE_S} s + ${moveMs} ms`);
    assert.deepEqual(await c.owners(staying), staying.map(() => 'shard-a'), 'no device of shard-a’s own moved');
    process.stdout.write(`# ${returning.length} devices back on an undrained shard in ${Date.now() - t0} ms (${spread(movedAt)}; period ${periodMs})\n`);
  });
});
