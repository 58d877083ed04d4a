// The tenant check before routing (SPEC SEC-2, §12) across real processes: redis-server, mariadbd,
// two signaling instances sharing a forward secret, a SIPp device of tenant 000000 registered on
// node-a. A token of another tenant must learn nothing about that device from any instance: not
// whether it is online, not which node holds it (4601..4604 would say), and its answer must equal the
// one for an id that does not exist. The entry instance refuses before routing, on fastify's hook and
// on the HTTP edge; the owner refuses too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FORWARD_HEADERS } from '@vms/cluster';
import { api, eventually, logLines, SECRET, seedDevice, seedOwner, startDevice, startInstance, startStores, token, waitForOnline, type Instance, type SimDevice, type Stores } from './routing-cluster.ts';

const DEV_A = '34020000001320000001'; // tenant 000000, a SIPp camera on node-a
const DEV_GONE = '34020000001320000002'; // tenant 000000, owned by a node that is not running (4603)
const DEV_OFFLINE = '34020000001320000003'; // tenant 000000, nobody owns it (4601)
const DEV_T = '34020000001320000011'; // tenant 100001, owned by node-a
const DEV_UNKNOWN = '34020000001320000099';
const OTHER = '100001';

let stores: Stores;
let a: Instance;
let b: Instance;
let device: SimDevice | undefined;

before(async () => {
  stores = await startStores();
  a = await startInstance(stores, 'node-a', { cascade: true, env: { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '1' } });
  b = await startInstance(stores, 'node-b', { env: { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '1' } });
  device = await startDevice(stores, a, DEV_A, 2000);
  await seedDevice(stores, DEV_GONE);
  await seedOwner(stores, DEV_GONE, 'node-ghost');
  await seedDevice(stores, DEV_OFFLINE);
  await seedDevice(stores, DEV_T, OTHER);
  await seedOwner(stores, DEV_T, 'node-a');
  await waitForOnline(b, ['node-a', 'node-b']);
});

after(async () => {
  await device?.stop();
  await Promise.all([a, b].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await stores?.stop();
});

/** Log lines of `instance` with message `msg` whose url carries `probe` (log lines arrive asynchronously). */
const withProbe = (instance: Instance, msg: string, probe: string) => logLines(instance, msg).filter((l) => String(l.url).includes(probe));

/** True when neither instance shows a trace of a forward of the request tagged `probe`, after the logs settled. */
async function neverForwarded(probe: string): Promise<boolean> {
  await new Promise((r) => setTimeout(r, 500));
  return withProbe(b, 'request forwarded', probe).length === 0 && withProbe(a, 'forwarded request accepted', probe).length === 0;
}

describe('tenant check before routing (SPEC SEC-2)', () => {
  it("another tenant's device: 403 on every instance, the same bytes as an unknown id, never routed", async () => {
    const foreign = await token(OTHER);
    // its own tenant sees the routing state of each device
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV_A}`)).json.code, 200);
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV_GONE}`)).json.code, 4603);
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV_OFFLINE}`)).json.code, 4601);

    const unknown = await api(b, `/vms/device/info?deviceId=${DEV_UNKNOWN}`, { token: foreign });
    assert.equal(unknown.status, 403);
    for (const on of [a, b]) {
      for (const dev of [DEV_A, DEV_GONE, DEV_OFFLINE]) {
        for (const path of [`/vms/device/info?deviceId=${dev}`, `/blade-iot/vms/device/status?deviceId=${dev}`]) {
          const r = await api(on, `${path}&probe=foreign-1`, { token: foreign });
          assert.equal(r.status, 403, `${on.code} ${path}`);
          assert.deepEqual(r.bytes, unknown.bytes, `${on.code} ${path}: no existence oracle`);
          assert.doesNotMatch(r.bytes.toString(), /node-/);
        }
      }
    }
    const control = await api(b, `/vms/device/control?deviceId=${DEV_A}&action=reboot&probe=foreign-1`, { method: 'POST', token: foreign });
    assert.deepEqual([control.status, control.bytes], [403, unknown.bytes]);
    assert.ok(await neverForwarded('foreign-1'), 'nothing was forwarded for the foreign token');
    assert.equal(withProbe(b, 'forwarded request accepted', 'foreign-1').length, 0);
  });

  it('the HTTP edge, with the owner and tenant of the device in memory, still refuses the other tenant (fastify answers 403)', async () => {
    const own = await token();
    const foreign = await token(OTHER);
    await api(b, '/vms/devices', { token: foreign }); // the foreign token is now verified on B
    for (let i = 0; i < 3; i++) assert.equal((await api(b, `/vms/device/info?deviceId=${DEV_A}`, { token: own })).json.code, 200);
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV_A}&probe=own-2`, { token: own })).json.code, 200);
    await eventually(() => withProbe(b, 'request forwarded', 'own-2').length === 1, 'own tenant: forwarded at the edge');
    const r = await api(b, `/vms/device/info?deviceId=${DEV_A}&probe=foreign-2`, { token: foreign });
    assert.equal(r.status, 403);
    assert.ok(await neverForwarded('foreign-2'), 'the foreign request never left B');
  });

  it("the owner refuses a verified forward carrying another tenant's token; the device's own tenant and the operator role get through", async () => {
    const foreign = await token(OTHER);
    const forged = await api(a, `/vms/device/info?deviceId=${DEV_A}`, { token: foreign, headers: { [FORWARD_HEADERS.marker]: 'node-b', [FORWARD_HEADERS.secret]: SECRET } });
    assert.equal(forged.status, 403);
    // tenant 100001's own device, owned by node-a: routed from B (its handler runs on A; no SIP side for it there)
    const mine = await api(b, `/vms/device/info?deviceId=${DEV_T}`, { token: foreign });
    assert.notEqual(mine.status, 403);
    assert.ok(logLines(b, 'forwarded to owner').some((l) => l.deviceId === DEV_T), 'forwarded to its owner');
    // the operator role (explicit claim), whatever its own tenant
    const ops = await token(OTHER, 'operator');
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV_A}`, { token: ops })).json.code, 200);
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV_GONE}`, { token: ops })).json.code, 4603);
    assert.equal((await api(b, '/vms/nodes', { token: ops })).status, 200);
    assert.equal((await api(b, '/vms/nodes', { token: foreign })).status, 403, 'the node table is infrastructure');
  });
});
