// #10 item 11 (SPEC OWN-1, FAIL-3): after Redis restarts empty, the owner of a device keeps serving its
// control requests at once — it re-claims the device (SET NX) when routing finds no owner and it holds
// a live lease from the device's verified flow — instead of answering 4601 until the device's next
// keepalive or its own periodic check. Real redis-server (restarted empty on the same port), mariadbd,
// two signaling instances, a SIPp device whose next keepalive is far away (60 s).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ownershipKey } from '@vms/cluster';
import { api, eventually, logLines, startDevice, startInstance, startStores, waitForOnline, type Instance, type SimDevice, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000041';
const SLOW = {
  // no keepalive and no ownership check inside the test: only the re-claim can restore the claim
  VMS_GB28181_SIP_KEEPALIVE_INTERVAL: '60',
  VMS_GB28181_SIP_OFFLINE_SCAN_PERIOD: '120',
  VMS_GB28181_SIP_NODE_HEARTBEAT_INTERVAL: '0.5',
};

let stores: Stores;
let a: Instance;
let b: Instance;
let device: SimDevice | undefined;

before(async () => {
  stores = await startStores();
  a = await startInstance(stores, 'node-a', { env: SLOW });
  b = await startInstance(stores, 'node-b', { env: SLOW });
  await waitForOnline(b, ['node-a', 'node-b']);
});

after(async () => {
  await device?.stop();
  await Promise.all([a?.proc.stop(), b?.proc.stop()]);
  await stores?.stop();
});

describe('empty Redis restart (#10 item 11)', () => {
  it('the owner re-claims its own device on the first control request and runs it; the other instance forwards again', async () => {
    device = await startDevice(stores, a, DEV, 60_000);
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV}`)).json.code, 200, 'forwarded B → A before the restart');

    await stores.redis.restart(); // same port, empty
    await eventually(() => logLines(a, 'redis connection restored').length >= 1, 'node-a reconnected to Redis', 15_000);
    assert.equal(await stores.redisClient.get(ownershipKey(DEV)).catch(() => null), null, 'the claim is gone');

    const onOwner = await api(a, `/vms/device/info?deviceId=${DEV}`);
    assert.equal(onOwner.json.code, 200, `the owner serves its device at once: ${onOwner.bytes.toString()}`);
    assert.equal(await stores.redisClient.get(ownershipKey(DEV)), 'node-a', 're-claimed');
    assert.equal(logLines(a, 'ownership re-claimed for a device served here after its claim vanished').length, 1);
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV}`)).json.code, 200, 'B forwards to A again');
  });
});
