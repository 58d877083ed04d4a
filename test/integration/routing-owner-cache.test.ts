// The owner cache's staleness bound across real processes (SPEC OWN-4, ROUTE-2; owner-cache.ts):
// redis-server, mariadbd, three signaling instances. node-b keeps forwarding requests for a device
// while its owner changes in Redis from node-a to node-c; every request sent more than
// OWNER_CACHE_TTL_MS (1 s) after the new owner is in Redis must reach node-c, and none may be lost.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, eventually, logLines, seedDevice, seedOwner, startInstance, startStores, waitForOnline, type Instance, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000031';
const TTL_MS = 1000; // OWNER_CACHE_TTL_MS of services/signaling/src/cluster/owner-cache.ts
// a request reaches node-b's hook after it was sent; the Redis read that may have cached the old owner
// completed within this much of the move
const SLACK_MS = 100;
const FAST = { VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '1' };

let stores: Stores;
let a: Instance;
let b: Instance;
let c: Instance;

before(async () => {
  stores = await startStores();
  a = await startInstance(stores, 'node-a', { env: FAST });
  b = await startInstance(stores, 'node-b', { env: FAST });
  c = await startInstance(stores, 'node-c', { env: FAST });
  await waitForOnline(b, ['node-a', 'node-b', 'node-c']);
  await seedDevice(stores, DEV);
});

after(async () => {
  await Promise.all([a, b, c].filter((x) => x !== undefined).map((x) => x.proc.stop()));
  await stores?.stop();
});

/** Which owner ran the forwarded request tagged `probe` (its log shows the URL exactly as received). */
function ranOn(probe: string): string[] {
  return [a, c].filter((i) => logLines(i, 'forwarded request accepted').some((l) => String(l.url).endsWith(`&probe=${probe}`))).map((i) => i.code);
}

describe('owner cache bound (OWN-4)', () => {
  it('a device moved in Redis: node-b forwards to the new owner at most 1 s later, every request answered', async () => {
    await seedOwner(stores, DEV, 'node-a');
    const path = (probe: string): string => `/vms/device/catalog/sync?deviceId=${DEV}&probe=${probe}`;
    // node-b (and node-c) have looked the owner up: both now remember node-a
    assert.equal((await api(b, path('warm-b'))).json.code, 200);
    assert.equal((await api(c, path('warm-c'))).json.code, 200);
    await eventually(() => ranOn('warm-b').length === 1 && ranOn('warm-c').length === 1, 'warm-up forwards reached node-a');
    assert.deepEqual([ranOn('warm-b'), ranOn('warm-c')], [['node-a'], ['node-a']]);

    await seedOwner(stores, DEV, 'node-c'); // the camera re-registered on node-c (OWN-4)
    const movedAt = performance.now();
    const sent: { probe: string; at: number }[] = [];
    // until 600 ms past the bound and at least 5 requests sent after it, however slow each one is
    const lateCount = (): number => sent.filter((s) => s.at >= TTL_MS + SLACK_MS).length;
    for (let i = 0; performance.now() - movedAt < TTL_MS + 600 || (lateCount() < 5 && performance.now() - movedAt < TTL_MS + 30_000); i++) {
      const probe = `m${i}`;
      const at = performance.now() - movedAt;
      const res = await api(b, path(probe));
      assert.equal(res.json.code, 200, `request ${probe} at +${at.toFixed(0)} ms: ${res.bytes.toString()}`);
      sent.push({ probe, at });
      await new Promise((r) => setTimeout(r, 20));
    }
    await eventually(() => sent.every((s) => ranOn(s.probe).length === 1), 'every forwarded request logged by its owner', 5000);
    const late = sent.filter((s) => s.at >= TTL_MS + SLACK_MS);
    assert.ok(late.length >= 5, `${late.length} requests after the bound`);
    for (const s of late) assert.deepEqual(ranOn(s.probe), ['node-c'], `request ${s.probe} sent +${s.at.toFixed(0)} ms after the move`);
    const toOld = sent.filter((s) => ranOn(s.probe)[0] === 'node-a');
    const lastToOld = toOld.at(-1)?.at ?? 0;
    assert.ok(lastToOld < TTL_MS + SLACK_MS, `last request routed to the old owner was sent +${lastToOld.toFixed(0)} ms after the move`);

    // node-c, the new owner, had remembered node-a too: it runs the device's requests itself within the bound
    const onC = await api(c, path('c-after'));
    assert.equal(onC.json.code, 200);
    await new Promise((r) => setTimeout(r, 300)); // a forward's log line would have arrived by now
    assert.deepEqual(ranOn('c-after'), [], 'ran on node-c directly, not forwarded to node-a');
  });
});
