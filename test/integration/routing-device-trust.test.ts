// Device trust across instances (SPEC SEC-1, OWN-1, OWN-4), real processes:
//  - #10 item 1: a keepalive naming a device, sent from another address to another instance (the
//    "take over from the store" path), is refused and moves nothing — the claim stays with the owner;
//  - #10 item 11 (FAIL-3): after Redis restarts empty, the owner of a device keeps serving its
// control requests at once — it re-claims the device (SET NX) when routing finds no owner and it holds
// a live lease from the device's verified flow — instead of answering 4601 until the device's next
// keepalive or its own periodic check. Real redis-server (restarted empty on the same port), mariadbd,
// two signaling instances, a SIPp device whose next keepalive is far away (60 s).
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { ownershipKey } from '@vms/cluster';
import { api, eventually, logLines, SERVER_ID, startDevice, startInstance, startStores, waitForOnline, type Instance, type SimDevice, type Stores } from './routing-cluster.ts';

const DEV = '34020000001320000041';
const DEV_MOVED = '34020000001320000042';
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

/** One keepalive datagram naming `deviceId`, from a socket of our own; resolves with the status line. */
async function forgedKeepalive(instance: Instance, deviceId: string): Promise<string> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const port = sock.address().port;
  const body = `<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>7</SN>\r\n<DeviceID>${deviceId}</DeviceID>\r\n<Status>OK</Status>\r\n</Notify>\r\n`;
  const msg = [
    `MESSAGE sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bK-forged-${port}`,
    `From: <sip:${deviceId}@${SERVER_ID.slice(0, 10)}>;tag=forged`,
    `To: <sip:${SERVER_ID}@${SERVER_ID.slice(0, 10)}>`,
    `Call-ID: forged-${port}@127.0.0.1`,
    'CSeq: 1 MESSAGE',
    'Content-Type: Application/MANSCDP+xml',
    'Max-Forwards: 70',
    `Content-Length: ${body.length}`,
    '',
    body,
  ].join('\r\n');
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer to the forged keepalive')), 5000);
      sock.on('message', (d) => {
        clearTimeout(timer);
        resolve(d.toString('latin1').split('\r\n')[0] ?? '');
      });
      sock.send(msg, instance.sipPort, '127.0.0.1');
    });
  } finally {
    sock.close();
  }
}

describe('a keepalive from another address (#10 item 1)', () => {
  it('sent to another instance: 401, ownership stays with the owner, controls still reach the device', async () => {
    const dev = await startDevice(stores, a, DEV_MOVED, 60_000);
    try {
      assert.equal(await forgedKeepalive(b, DEV_MOVED), 'SIP/2.0 401 Unauthorized');
      assert.equal(await forgedKeepalive(a, DEV_MOVED), 'SIP/2.0 401 Unauthorized', 'nor on the owner itself');
      assert.equal(await stores.redisClient.get(ownershipKey(DEV_MOVED)), 'node-a');
      assert.equal((await api(b, `/vms/device/info?deviceId=${DEV_MOVED}`)).json.code, 200, 'forwarded to node-a, answered by the device');
    } finally {
      await dev.stop();
    }
  });
});

describe('empty Redis restart (#10 item 11)', () => {
  it('the owner writes its claims back once reconnected; one that vanishes later it re-claims on the first control request and runs it; the other instance forwards again', async () => {
    device = await startDevice(stores, a, DEV, 60_000);
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV}`)).json.code, 200, 'forwarded B → A before the restart');

    await stores.redis.restart(); // same port, empty
    await eventually(() => logLines(a, 'redis connection restored').length >= 1, 'node-a reconnected to Redis', 15_000);
    // back from an outage the owner's check pass reads every live lease at once and writes the vanished
    // claim back (only if vacant), without waiting for the device's next renewal
    await eventually(() => logLines(a, 'ownership claims re-written after they vanished from the store').length >= 1, 'claims re-written after the reconnect', 15_000);
    assert.equal(await stores.redisClient.get(ownershipKey(DEV)), 'node-a', 're-written by the check pass');
    // a claim that vanishes with no reconnect to notice (evicted, deleted by hand): the routing hook heals it
    await stores.redisClient.del(ownershipKey(DEV));
    assert.equal(await stores.redisClient.get(ownershipKey(DEV)), null, 'the claim is gone');

    const onOwner = await api(a, `/vms/device/info?deviceId=${DEV}`);
    assert.equal(onOwner.json.code, 200, `the owner serves its device at once: ${onOwner.bytes.toString()}`);
    assert.equal(await stores.redisClient.get(ownershipKey(DEV)), 'node-a', 're-claimed');
    assert.equal(logLines(a, 'ownership re-claimed for a device served here after its claim vanished').length, 1);
    assert.equal((await api(b, `/vms/device/info?deviceId=${DEV}`)).json.code, 200, 'B forwards to A again');
  });
});
