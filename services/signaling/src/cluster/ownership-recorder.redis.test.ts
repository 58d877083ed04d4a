// The recorder over the real Redis ownership store and a real redis-server (issue 11 target 4b): batched
// renewals give each claim the TTL again (OWN-1), a REGISTER elsewhere takes the device and the old owner
// hears the move notice at once (OWN-4), a late keepalive's renewal never takes it back, and a queue larger
// than one batch is renewed in batches of renewBatchMax. Short TTLs on the real clock.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createRedisClient, createRedisOwnershipStore, ownershipKey, waitForRedisReady, type OwnershipStore, type RedisClient } from '@vms/cluster';
import { sleep, startRedis, type RedisServer } from '@vms/harness';
import { pino } from 'pino';
import { systemClock } from '../core/clock.ts';
import { createOwnershipRecorder, type OwnershipMoved, type OwnershipRecorder } from './ownership-recorder.ts';

const TTL = 3000;
/** vms.cluster.owner-renew-after's default share */
const RENEW_AFTER = 0.4 * TTL;
const FLUSH = 50;

let redis: RedisServer;
const clients: RedisClient[] = [];
const quiet = pino({ level: 'silent' }, new Writable({ write: (_c, _e, done) => done() }));

before(async () => {
  redis = await startRedis();
});
after(async () => {
  clients.forEach((c) => c.disconnect());
  await redis.stop();
});

async function client(): Promise<RedisClient> {
  const c = createRedisClient(redis.url, { commandTimeoutMs: 10_000 });
  clients.push(c);
  await waitForRedisReady(c);
  return c;
}

/** One instance: its own connection, store and recorder on a key prefix of the test's own; renewMany calls counted. */
async function instance(instanceId: string, prefix: string, opts: { renewBatchMax?: number } = {}) {
  const c = await client();
  const inner = createRedisOwnershipStore(c, { keyPrefix: prefix });
  const batches: number[] = [];
  const store: OwnershipStore = { ...inner, renewMany: (ids, i, t) => (batches.push(ids.length), inner.renewMany(ids, i, t)) };
  const recorder = createOwnershipRecorder({
    store,
    instanceId,
    ttlMs: TTL,
    checkIntervalMs: 60_000,
    clock: systemClock,
    log: quiet,
    renewAfterMs: RENEW_AFTER,
    renewFlushMs: FLUSH,
    ...opts,
  });
  const moved: OwnershipMoved[] = [];
  recorder.onMoved((e) => moved.push(e));
  return { client: c, store: inner, recorder, batches, moved, close: async () => (await recorder.close(), await inner.close()) };
}

const prefixOf = (): string => `vms:test:renew:${randomBytes(4).toString('hex')}:`;
const deviceIdOf = (i: number): string => `3402000000132${String(i).padStart(7, '0')}`;

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await sleep(10);
  }
}

describe('ownership recorder on a real Redis (OWN-1, OWN-4, OWN-5; issue 11)', () => {
  it('a keepalive after renew-after renews the claim to the full TTL in one batched script; before it, nothing is written', async () => {
    const prefix = prefixOf();
    const a = await instance('node-a', prefix);
    const dev = deviceIdOf(1);
    const key = ownershipKey(dev, prefix);
    a.recorder.deviceSeen(dev, true); // REGISTER
    await until('the claim is written', async () => (await a.store.ownerOf(dev)) === 'node-a');
    await sleep(200);
    a.recorder.deviceSeen(dev); // a keepalive well before renew-after: skipped
    await sleep(FLUSH * 3);
    assert.deepEqual(a.batches, [], 'not renewed within renew-after');
    const left = await a.client.pttl(key);
    assert.ok(left <= TTL - 200 && left > 0, `the claim keeps its first expiry (${left} ms left)`);
    await sleep(RENEW_AFTER - 200);
    a.recorder.deviceSeen(dev);
    await until('the renewal is sent', () => a.batches.length === 1);
    await until('the claim has the full TTL again', async () => (await a.client.pttl(key)) > TTL - 500);
    assert.equal(await a.store.ownerOf(dev), 'node-a');
    await a.close();
  });

  it('a device that keeps alive at its period never loses its claim, renewed on every other keepalive', async () => {
    const prefix = prefixOf();
    const a = await instance('node-a', prefix);
    const dev = deviceIdOf(2);
    a.recorder.deviceSeen(dev, true);
    await until('the claim is written', async () => (await a.store.ownerOf(dev)) === 'node-a');
    // a keepalive every TTL / 3.5 (the defaults: 60 s of 210 s), for four TTLs
    const period = TTL / 3.5;
    const end = Date.now() + 4 * TTL;
    let next = Date.now() + period;
    while (Date.now() < end) {
      if (Date.now() >= next) {
        a.recorder.deviceSeen(dev);
        next += period;
      }
      assert.equal(await a.store.ownerOf(dev), 'node-a', 'claim held');
      await sleep(25);
    }
    const keepalives = Math.floor((4 * TTL) / period);
    assert.ok(a.batches.length >= keepalives / 2 - 1 && a.batches.length <= keepalives / 2 + 1, `${a.batches.length} renewals for ${keepalives} keepalives`);
    await a.close();
  });

  it('a REGISTER on another instance takes the device; the old owner hears the notice at once, and its late keepalive does not take it back', async () => {
    const prefix = prefixOf();
    const a = await instance('node-a', prefix);
    const b = await instance('node-b', prefix);
    const dev = deviceIdOf(3);
    a.recorder.deviceSeen(dev, true);
    await until('node-a holds it', async () => (await a.store.ownerOf(dev)) === 'node-a');
    await sleep(200); // the notice subscription is up
    b.recorder.deviceSeen(dev, true); // re-registered on node-b
    await until('node-a hears the move', () => a.moved.length === 1);
    assert.deepEqual(a.moved, [{ deviceId: dev, newOwner: 'node-b' }]);
    assert.equal(a.recorder.isLocallyOwned(dev), false);
    assert.deepEqual(b.moved, [], 'the new owner is not told it lost the device');
    // a late keepalive from the old flow reaches node-a: no lease, so a renewal that writes only a vacant claim
    a.recorder.deviceSeen(dev);
    await until('the renewal is sent', () => a.batches.length === 1);
    await until('node-a hears it is held elsewhere', () => a.moved.length === 2);
    assert.equal(await a.store.ownerOf(dev), 'node-b', 'a keepalive never moves a device');
    assert.ok((await b.client.pttl(ownershipKey(dev, prefix))) > TTL - 1000, "node-b's claim keeps its own TTL");
    await a.close();
    await b.close();
  });

  it('renewals due together go in batches of renewBatchMax, and every claim gets the full TTL again', async () => {
    const prefix = prefixOf();
    const a = await instance('node-a', prefix, { renewBatchMax: 500 });
    const ids = Array.from({ length: 1200 }, (_, i) => deviceIdOf(100 + i));
    for (const id of ids) a.recorder.deviceSeen(id, true);
    await until('the claims are written', async () => (await a.store.ownersOf(ids)).size === ids.length, 10_000);
    await sleep(RENEW_AFTER);
    for (const id of ids) a.recorder.deviceSeen(id);
    await until('all are renewed', () => a.batches.reduce((x, y) => x + y, 0) === ids.length, 10_000);
    assert.deepEqual(a.batches, [500, 500, 200]);
    const left = await Promise.all(ids.map((id) => a.client.pttl(ownershipKey(id, prefix))));
    assert.ok(Math.min(...left) > TTL - 1500, `every claim renewed to about the TTL (least ${Math.min(...left)} ms)`);
    await a.close();
  });
});
