// Owner routing across real processes (SPEC ROUTE-1..7, NODE-1/2): redis-server, mariadbd, four
// signaling instances (node-a cascade, node-b, node-c share a forward secret; node-d has none) and
// SIPp devices registered on node-a, node-b and node-d, which answer the platform's MESSAGEs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FORWARD_HEADERS } from '@vms/cluster';
import { waitFor } from '@vms/harness';
import { api, eventually, logLines, nodes, SECRET, startDevice, startInstance, startStores, token, waitForOnline, type Instance, type SimDevice, type Stores } from './routing-cluster.ts';

const DEV_A = '34020000001320000001';
const DEV_B = '34020000001320000002';
const DEV_D = '34020000001320000004';
const DEV_E = '34020000001320000005';

let stores: Stores;
let a: Instance;
let b: Instance;
let c: Instance;
let d: Instance;
let e: Instance | undefined;
const devices: SimDevice[] = [];
const FAST = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '1' };

before(async () => {
  stores = await startStores();
  // One at a time: each start migrates (a named lock serialises them anyway) on a small machine.
  a = await startInstance(stores, 'node-a', { cascade: true, env: FAST });
  b = await startInstance(stores, 'node-b', { env: FAST });
  c = await startInstance(stores, 'node-c', { env: FAST });
  d = await startInstance(stores, 'node-d', { secret: null, env: FAST });
  for (const [dev, owner] of [[DEV_A, a], [DEV_B, b], [DEV_D, d]] as const) devices.push(await startDevice(stores, owner, dev, 2000));
  await waitForOnline(a, ['node-a', 'node-b', 'node-c', 'node-d']);
});

after(async () => {
  await Promise.all(devices.map((x) => x.stop()));
  await Promise.all([a, b, c, d, e].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await stores?.stop();
});

/** The forward ids B logged for `deviceId` and A accepted: proof the request crossed. */
function crossed(from: Instance, to: Instance, deviceId: string): string[] {
  const sent = new Set(logLines(from, 'forwarded to owner').filter((l) => l.deviceId === deviceId).map((l) => String(l.forwardId)));
  return logLines(to, 'forwarded request accepted').map((l) => String(l.forwardId)).filter((id) => sent.has(id));
}

describe('owner routing between instances', () => {
  it('B forwards a control for a device owned by A: status, Content-Type and body bytes equal the direct answer', async () => {
    const direct = await api(a, `/vms/device/info?deviceId=${DEV_A}`);
    const viaB = await api(b, `/vms/device/info?deviceId=${DEV_A}`);
    assert.equal(direct.json.code, 200, `the device answered its owner: ${direct.bytes.toString()}`);
    assert.equal((direct.json.data as { deviceName: string }).deviceName, 'SIPp camera');
    assert.equal(viaB.status, direct.status);
    assert.equal(viaB.type, direct.type);
    assert.deepEqual(viaB.bytes, direct.bytes);
    await eventually(() => crossed(b, a, DEV_A).length === 1, 'exactly one forward B → A');
  });

  it('an operator repeating a control: forwarded at the edge after the first request, same bytes every time', async () => {
    const auth = `bearer ${await token()}`;
    const get = async (on: Instance) => {
      const res = await fetch(`${on.httpUrl}/vms/device/info?deviceId=${DEV_A}`, { headers: { 'Blade-Auth': auth } });
      return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
    };
    const atEdgeBefore = logLines(b, 'request forwarded').length;
    const direct = await get(a);
    assert.equal(JSON.parse(direct.bytes.toString()).code, 200, direct.bytes.toString());
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await get(b));
    for (const r of answers) assert.deepEqual([r.status, r.type, r.bytes], [direct.status, direct.type, direct.bytes]);
    await eventually(() => logLines(b, 'request forwarded').length - atEdgeBefore >= 3, 'B took the later requests at the edge (before fastify)');
  });

  it('C forwards to B; both path forms route, and the owner sees the path exactly as received', async () => {
    const probe = `p${Date.now()}`;
    const direct = await api(b, `/vms/device/info?deviceId=${DEV_B}`);
    const viaC = await api(c, `/blade-iot/vms/device/info?deviceId=${DEV_B}&probe=${probe}`);
    assert.equal(direct.json.code, 200);
    assert.deepEqual([viaC.status, viaC.type, viaC.bytes], [direct.status, direct.type, direct.bytes]);
    await eventually(() => crossed(c, b, DEV_B).length === 1, 'one forward C → B');
    await eventually(
      () => logLines(b, 'forwarded request accepted').some((l) => l.url === `/blade-iot/vms/device/info?deviceId=${DEV_B}&probe=${probe}`),
      'B saw the path exactly as C received it',
    );

    const post = await api(c, `/vms/device/control?deviceId=${DEV_B}&action=guard`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const postDirect = await api(b, `/vms/device/control?deviceId=${DEV_B}&action=guard`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.deepEqual([post.json.code, post.bytes], [200, postDirect.bytes]);
  });

  it('a forged forward (marker, wrong or missing secret) is refused: HTTP 403, 4605', async () => {
    const forged: Record<string, string>[] = [{ [FORWARD_HEADERS.marker]: 'node-b', [FORWARD_HEADERS.secret]: 'guess' }, { [FORWARD_HEADERS.marker]: 'node-b' }];
    for (const headers of forged) {
      const res = await api(a, `/vms/device/info?deviceId=${DEV_A}`, { headers });
      assert.deepEqual([res.status, res.json.code, res.json.success], [403, 4605, false]);
    }
  });

  it('a forwarded request is never forwarded again (no ping-pong)', async () => {
    const id = `it-${Date.now()}`;
    const forwardsBefore = crossed(b, a, DEV_A).length;
    // B receives a genuine forward for A's device: it runs it locally instead of sending it on
    const res = await api(b, `/vms/device/info?deviceId=${DEV_A}`, {
      headers: { [FORWARD_HEADERS.marker]: 'node-c', [FORWARD_HEADERS.secret]: SECRET, [FORWARD_HEADERS.forwardId]: id },
    });
    // B is not the device's owner: its own handler finds no registration there (4601), never a forward
    assert.equal(res.json.code, 4601);
    await eventually(() => logLines(b, 'forwarded request accepted').filter((l) => l.forwardId === id).length === 1, 'B accepted it');
    await new Promise((r) => setTimeout(r, 200)); // a forward would have been logged by now
    assert.equal(crossed(b, a, DEV_A).length, forwardsBefore, 'B did not send it on to A');
  });

  it('no secret on D: remote devices refused with a clear message, its own work, inbound forwards refused; one warning', async () => {
    const remote = await api(d, `/vms/device/info?deviceId=${DEV_A}`);
    assert.deepEqual([remote.status, remote.json.code, remote.json.success], [200, 4602, false]);
    assert.match(remote.json.msg, /owned by another node and forwarding is disabled \(no node-forward-secret\)/);
    const local = await api(d, `/vms/device/info?deviceId=${DEV_D}`);
    assert.equal(local.json.code, 200, local.bytes.toString());
    // and no instance forwards to D without D accepting: D refuses even a well-formed forward
    const inbound = await api(d, `/vms/device/info?deviceId=${DEV_D}`, { headers: { [FORWARD_HEADERS.marker]: 'node-a', [FORWARD_HEADERS.secret]: SECRET } });
    assert.deepEqual([inbound.status, inbound.json.code], [403, 4605]);
    const warning = 'several signaling nodes are online but no node-forward-secret is set: controls for devices owned by other nodes will be refused';
    await eventually(() => logLines(d, warning).length === 1, 'the no-secret warning on D');
    assert.equal(logLines(d, warning).length, 1, 'once, not once per heartbeat');
    assert.equal(logLines(a, warning).length, 0);
  });

  it('a device nobody owns is offline (4601); GET /vms/nodes lists every node with counts and the cascade leader', async () => {
    // an id unknown to the database: the operator role is routed (4601), a tenant is refused first (SPEC SEC-2)
    const none = await api(c, '/vms/device/info?deviceId=34020000001320000099', { token: await token('000000', 'operator') });
    assert.deepEqual([none.status, none.json.code], [200, 4601]);
    assert.equal((await api(c, '/vms/device/info?deviceId=34020000001320000099')).status, 403);
    const listing = await nodes(c);
    assert.equal(listing.cascadeLeader, 'node-a');
    assert.deepEqual(listing.nodes.map((n) => [n.nodeCode, n.online, n.self]), [
      ['node-a', true, false],
      ['node-b', true, false],
      ['node-c', true, true],
      ['node-d', true, false],
    ]);
    // NODE-2: each node reports the devices it holds at its next heartbeat
    const counts = await waitFor(
      async () => {
        const l = await nodes(c);
        const byCode = Object.fromEntries(l.nodes.map((n) => [n.nodeCode, n.onlineDeviceCount]));
        return byCode['node-a'] === 1 && byCode['node-b'] === 1 && byCode['node-d'] === 1 ? byCode : null;
      },
      { timeoutMs: 10_000, intervalMs: 200, description: 'online device counts' },
    );
    assert.equal(counts['node-c'], 0);
    assert.equal(listing.nodes.find((n) => n.nodeCode === 'node-b')?.internalBaseUrl, b.httpUrl);
  });

  it('a node started a moment ago: its device is controlled from the others at once, before their next heartbeat read', async () => {
    e = await startInstance(stores, 'node-e', { env: FAST });
    devices.push(await startDevice(stores, e, DEV_E, 2000)); // returns as soon as node-e's claim is in Redis
    // B and C last read the node table up to a heartbeat ago, most likely before node-e's row existed
    const [viaB, viaC] = await Promise.all([api(b, `/vms/device/info?deviceId=${DEV_E}`), api(c, `/vms/device/info?deviceId=${DEV_E}`)]);
    assert.deepEqual([viaB.json.code, viaC.json.code], [200, 200], `${viaB.bytes.toString()} ${viaC.bytes.toString()}`);
  });
});
