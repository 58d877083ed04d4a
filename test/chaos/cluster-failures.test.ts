// Chaos: instances and Redis failing under control load (issue #10, SPEC FAIL-1, FAIL-3, OWN-1, CASCADE-1).
// Real redis-server and mariadbd, four signaling instances as child processes (node-a and node-b volunteer
// for the cascade role; node-b is reached by the others through a TCP relay the test can cut), two
// simulated devices on each, keepalive every second. The scenarios run in order on the same cluster:
//   1. kill -9 of node-c, owner of two devices: every control request is answered within the bound
//      (the dead owner's devices with an error), the others' devices keep working, no row is lost;
//   2. kill -9 of node-a, the cascade leader: the survivors agree on one new leader (node-b);
//   3. partition node-d ↔ node-b (the relay drops every byte): requests on node-d for node-b's devices
//      are answered within the forward read timeout, node-d's own devices keep working, and forwarding
//      heals when the link does;
//   4. Redis restarted empty: each owner re-claims its devices (OWN-1) and answers for them again.
import assert from 'node:assert/strict';
import { after, describe } from 'node:test';
import { ownershipKey } from '@vms/cluster';
import type { SimulatedDevice } from '@vms/device-sim';
import { sleep, waitFor } from '@vms/harness';
import { startInstance, startStores, waitForOnline, type Instance, type Stores } from '../integration/routing-cluster.ts';
import { controlRequestFactory, deviceOn, leaderConverged, leadersNamed, lost, sqlRows } from './cluster-fixture.ts';
import { startLoad, type LoadResult } from './load.ts';
import { startTcpRelay, type TcpRelay } from './relays.ts';
import { chaosBefore, chaosScenario, type ScenarioRun } from './scenario.ts';

/** Control requests (catalog progress, routed to the owner) must be answered within this, ms (issue #10: 3 s). */
const CONTROL_BOUND_MS = 3000;
/**
 * Through a partition a forwarded request waits its forward read timeout (ROUTE-5): 3 s for the catalog
 * progress read the partition load uses (cluster/forward-timeouts.ts), plus 1 s of scheduling slack.
 */
const PARTITION_BOUND_MS = 4000;
/** Node heartbeat 0.5 s: a node is offline 1.5 s after its last beat; leader moves within this, ms. */
const LEADER_CONVERGENCE_MS = 6000;
/** After Redis comes back empty every owner re-claims its devices within this (keepalive every 1 s), ms. */
const RECLAIM_MS = 10_000;
/** Load before and after each fault, ms. */
const LOAD_BEFORE_MS = 1500;
const LOAD_AFTER_MS = 4000;
const FAST = {
  VMS_GB28181_SIP_KEEPALIVE_INTERVAL: '2',
  VMS_GB28181_SIP_KEEPALIVE_TIMEOUT_COUNT: '3',
  VMS_GB28181_SIP_OFFLINE_SCAN_PERIOD: '1',
  VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5',
  LOG_LEVEL: 'warn',
};
const SCENARIO_TIMEOUT_MS = 60_000;

let stores: Stores;
let relay: TcpRelay;
const inst: Record<'a' | 'b' | 'c' | 'd', Instance> = {} as Record<'a' | 'b' | 'c' | 'd', Instance>;
/** Devices per owner instance. */
const owned: Record<'a' | 'b' | 'c' | 'd', SimulatedDevice[]> = { a: [], b: [], c: [], d: [] };
let request: Awaited<ReturnType<typeof controlRequestFactory>>;

chaosBefore(async () => {
  stores = await startStores();
  relay = await startTcpRelay();
  // one after the other: four tsx start-ups at once on a busy 2-core machine missed the 60 s start timeout
  inst.a = await startInstance(stores, 'node-a', { cascade: true, env: FAST });
  inst.b = await startInstance(stores, 'node-b', { cascade: true, env: { ...FAST, VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${relay.port}` } });
  relay.target = inst.b.httpPort;
  inst.c = await startInstance(stores, 'node-c', { env: FAST });
  inst.d = await startInstance(stores, 'node-d', { env: FAST });
  await waitForOnline(inst.d, ['node-a', 'node-b', 'node-c', 'node-d']);
  // one at a time: four catalog syncs at once on a busy machine missed the 20 s wait once
  for (const [i, key] of (['a', 'b', 'c', 'd'] as const).entries()) {
    for (let k = 1; k <= 2; k++) owned[key].push(await deviceOn(stores, inst[key], `340200000013200002${i}${k}`));
  }
  request = await controlRequestFactory();
});

after(async () => {
  stores?.redis.resume();
  await Promise.all(Object.values(owned).flat().map((d) => d.close().catch(() => undefined)));
  await Promise.all(Object.values(inst).map((i) => i.proc.stop().catch(() => undefined)));
  await relay?.close();
  await stores?.stop();
});

const tracked = (run: ScenarioRun): void =>
  run.track((['a', 'b', 'c', 'd'] as const).map((k) => ({ name: k, pid: () => (inst[k].proc.isRunning() ? inst[k].proc.pid : undefined) })));

/** Answers of `label` requests other than a success. */
const failuresOf = (r: LoadResult, label: string): number =>
  [...r.codes].filter(([k]) => k.startsWith(`${label} `) && k !== `${label} 200/200`).reduce((s, [, n]) => s + n, 0);

/**
 * Load on `on` for `live` devices and, labelled apart, for `orphans`: the catalog progress read, routed by
 * device to its owner (forwarded when another instance owns it) and answered from the owner's memory. So
 * the bound measures routing and forwarding around the fault; a device round trip (device.info) would add
 * the simulated devices' own delays, in this test process on a shared machine: 3.1–3.5 s tails were seen
 * at load average 17–28 with device.info in the mix (the MariaDB file keeps device.info in its load).
 */
function controlLoad(on: readonly Instance[], live: readonly SimulatedDevice[], orphans: readonly SimulatedDevice[], boundMs = CONTROL_BOUND_MS) {
  const targets = [...live.map((d) => ['live', d] as const), ...orphans.map((d) => ['orphan', d] as const)];
  return startLoad({
    boundMs,
    next: (i) => {
      const [label, device] = targets[i % targets.length] as (typeof targets)[number];
      return request(on[i % on.length] as Instance, `/vms/device/catalog/sync?deviceId=${device.deviceId}`, label);
    },
  });
}

describe('chaos: instances and Redis failing under control load', () => {
  chaosScenario('kill -9 of an owner under control load', { boundMs: CONTROL_BOUND_MS, timeoutMs: SCENARIO_TIMEOUT_MS }, async (run) => {
    tracked(run);
    const rowsBefore = await sqlRows(stores);
    const survivors = [inst.a, inst.b, inst.d];
    const load = controlLoad(survivors, [...owned.a, ...owned.b, ...owned.d], owned.c);
    await sleep(LOAD_BEFORE_MS);
    await inst.c.proc.kill();
    await sleep(LOAD_AFTER_MS);
    const r = await load.stop();
    run.addLoad('load', r);
    run.check(failuresOf(r, 'live') === 0, `${failuresOf(r, 'live')} requests for live owners' devices failed`);
    await waitForOnline(inst.d, ['node-a', 'node-b', 'node-d'], LEADER_CONVERGENCE_MS);
    const leaders = await leadersNamed(survivors);
    run.leaders = leaders.size;
    run.check(leaders.size === 1 && leaders.has('node-a'), `leaders named: ${[...leaders].join(', ')}`);
    run.rowsLost = lost(rowsBefore, await sqlRows(stores));
    run.check(run.rowsLost === 0, `${run.rowsLost} rows lost`);
  });

  chaosScenario('kill -9 of the cascade leader', { boundMs: CONTROL_BOUND_MS, timeoutMs: SCENARIO_TIMEOUT_MS }, async (run) => {
    tracked(run);
    const rowsBefore = await sqlRows(stores);
    const survivors = [inst.b, inst.d];
    assert.ok((await leadersNamed(survivors)).has('node-a'), 'node-a leads before the kill');
    const load = controlLoad(survivors, [...owned.b, ...owned.d], owned.a);
    await sleep(LOAD_BEFORE_MS);
    await inst.a.proc.kill();
    const convergedMs = await leaderConverged(survivors, 'node-b', LEADER_CONVERGENCE_MS).catch((err: unknown) => {
      run.check(false, String(err));
      return NaN;
    });
    await sleep(Math.max(0, LOAD_AFTER_MS - (Number.isNaN(convergedMs) ? LEADER_CONVERGENCE_MS : convergedMs)));
    const r = await load.stop();
    run.addLoad('load', r);
    run.check(failuresOf(r, 'live') === 0, `${failuresOf(r, 'live')} requests for live owners' devices failed`);
    run.leaders = (await leadersNamed(survivors)).size;
    run.check(run.leaders === 1, `${run.leaders} leaders after convergence`);
    run.note(`new leader agreed after ${convergedMs.toFixed(0)} ms`);
    run.rowsLost = lost(rowsBefore, await sqlRows(stores));
    run.check(run.rowsLost === 0, `${run.rowsLost} rows lost`);
  });

  chaosScenario('network partition node-d ↔ node-b (TCP relay drops)', { boundMs: PARTITION_BOUND_MS, timeoutMs: SCENARIO_TIMEOUT_MS }, async (run) => {
    tracked(run);
    const rowsBefore = await sqlRows(stores);
    // from node-d: node-b's devices cross the link, node-d's own do not
    const load = startLoad({
      boundMs: PARTITION_BOUND_MS,
      next: (i) => {
        const remote = i % 2 === 0;
        const device = (remote ? owned.b : owned.d)[(i >> 1) % 2] as SimulatedDevice;
        return request(inst.d, `/vms/device/catalog/sync?deviceId=${device.deviceId}`, remote ? 'across' : 'local');
      },
    });
    await sleep(LOAD_BEFORE_MS);
    relay.cut();
    await sleep(LOAD_AFTER_MS + PARTITION_BOUND_MS);
    const during = load.snapshot();
    relay.heal();
    // healed: node-b's devices answer through node-d again
    const healT0 = performance.now();
    await waitFor(
      async () => {
        const res = await fetch(request(inst.d, `/vms/device/catalog/sync?deviceId=${owned.b[0]?.deviceId}`).url, { headers: request(inst.d, '').headers });
        return ((await res.json()) as { success: boolean }).success;
      },
      { timeoutMs: 10_000, intervalMs: 100, description: 'forwarding to node-b healed' },
    ).catch(() => run.check(false, 'forwarding to node-b did not heal within 10 s'));
    run.note(`healed after ${(performance.now() - healT0).toFixed(0)} ms`);
    const r = await load.stop();
    run.addLoad('load', r);
    run.check(failuresOf(r, 'local') === 0, `${failuresOf(r, 'local')} requests for node-d's own devices failed`);
    run.check(failuresOf(during, 'across') > 0, 'the cut link never showed (no failed request across it)');
    run.leaders = (await leadersNamed([inst.b, inst.d])).size;
    run.check(run.leaders === 1, `${run.leaders} leaders`);
    run.rowsLost = lost(rowsBefore, await sqlRows(stores));
    run.check(run.rowsLost === 0, `${run.rowsLost} rows lost`);
  });

  chaosScenario('Redis restarted empty', { boundMs: CONTROL_BOUND_MS, timeoutMs: SCENARIO_TIMEOUT_MS }, async (run) => {
    tracked(run);
    const rowsBefore = await sqlRows(stores);
    const survivors = [inst.b, inst.d];
    const mine = [...owned.b.map((d) => [d, 'node-b'] as const), ...owned.d.map((d) => [d, 'node-d'] as const)];
    const load = controlLoad(survivors, [...owned.b, ...owned.d], []);
    await sleep(LOAD_BEFORE_MS);
    await stores.redis.kill();
    await stores.redis.restart(); // no persistence: it comes back empty
    const t0 = performance.now();
    const reclaimed = await waitFor(
      async () => {
        const owners = await Promise.all(mine.map(([d]) => stores.redisClient.get(ownershipKey(d.deviceId)).catch(() => null)));
        return owners.every((o, k) => o === mine[k]?.[1]);
      },
      { timeoutMs: RECLAIM_MS, intervalMs: 100, description: 'owners re-claimed' },
    ).then(
      () => true,
      () => false,
    );
    const reclaimMs = performance.now() - t0;
    run.check(reclaimed, `owners did not re-claim their devices within ${RECLAIM_MS} ms`);
    await sleep(LOAD_AFTER_MS);
    const r = await load.stop();
    run.addLoad('load', r);
    if (reclaimed) run.note(`re-claimed after ${reclaimMs.toFixed(0)} ms`);
    // re-claimed: every device answers a device round trip through either instance
    for (const [device] of mine) {
      for (const on of survivors) {
        const res = await fetch(request(on, `/vms/device/info?deviceId=${device.deviceId}`).url, { headers: request(on, '').headers, signal: AbortSignal.timeout(CONTROL_BOUND_MS) }).catch(() => null);
        const body = res === null ? null : ((await res.json()) as { success: boolean; code: number });
        run.check(body?.success === true, `device.info after the restart on ${on.code} answered ${body?.code ?? 'nothing'}`);
      }
    }
    run.leaders = (await leadersNamed(survivors)).size;
    run.check(run.leaders === 1, `${run.leaders} leaders`);
    run.rowsLost = lost(rowsBefore, await sqlRows(stores));
    run.check(run.rowsLost === 0, `${run.rowsLost} rows lost`);
  });
});
