// SessionSnapshotStore contract against the memory adapter and a real redis-server: snapshot and index move
// together (a save is listed, an end removes both), a tombstone blocks any later save (never resurrected),
// expiry drops the index entry, the recovery lock has exactly one holder, and a snapshot written straight
// into Redis with bad content is reported malformed, not thrown.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createRedisClient, waitForRedisReady, type RedisClient } from '@vms/cluster';
import { sleep, startRedis, type RedisServer } from '@vms/harness';
import { FakeClock } from '../core/clock.ts';
import { sampleSnapshot } from '../../test/recovery/snapshot-samples.ts';
import type { SessionSnapshot } from './session-snapshot.ts';
import { createMemorySessionSnapshots } from './session-snapshots.memory.ts';
import type { SessionSnapshotStore } from './session-snapshots.port.ts';
import { createRedisSessionSnapshots } from './session-snapshots.redis.ts';

const snap = (callId: string, holder = 'node-a'): SessionSnapshot => sampleSnapshot(callId, { holder });

interface Subject {
  store: SessionSnapshotStore;
  /** Lets `ms` pass for the store's expiry. */
  pass(ms: number): Promise<void>;
}

function contract(name: string, make: () => Promise<Subject>): void {
  describe(`session snapshots (${name})`, () => {
    it('save lists the snapshot under its holder only; end removes snapshot and index entry together', async () => {
      const { store } = await make();
      assert.equal(await store.save(snap('c1'), 60_000), true);
      assert.equal(await store.save(snap('c2'), 60_000), true);
      assert.equal(await store.save(snap('c3', 'node-b'), 60_000), true);
      const listed = await store.list('node-a', 100);
      assert.deepEqual(listed.map((e) => e.callId).sort(), ['c1', 'c2']);
      const first = listed.find((e) => e.callId === 'c1');
      assert.ok(first?.state === 'ok');
      assert.deepEqual(first.snapshot, snap('c1'));
      await store.end('node-a', 'c1', 60_000);
      assert.deepEqual((await store.list('node-a', 100)).map((e) => e.callId), ['c2']);
      assert.deepEqual((await store.list('node-b', 100)).map((e) => e.callId), ['c3']);
    });

    it('a tombstoned dialog is never saved again (a late change after the end resurrects nothing)', async () => {
      const { store } = await make();
      await store.save(snap('c1'), 60_000);
      await store.end('node-a', 'c1', 60_000);
      assert.equal(await store.save({ ...snap('c1'), sessionIds: ['s1', 's2'] }, 60_000), false);
      assert.deepEqual(await store.list('node-a', 100), []);
    });

    it('a snapshot not renewed expires and its index entry goes with the next listing; a renewed one stays', async () => {
      const { store, pass } = await make();
      await store.save(snap('old'), 300);
      await store.save(snap('kept'), 300);
      await pass(150);
      await store.renew('node-a', ['kept'], 2000);
      await pass(300);
      const listed = await store.list('node-a', 100);
      assert.deepEqual(listed.map((e) => [e.callId, e.state]).sort(), [['kept', 'ok'], ['old', 'expired']]);
      assert.deepEqual((await store.list('node-a', 100)).map((e) => e.callId), ['kept']);
    });

    it('the recovery lock: one holder at a time, re-entrant for it, free again after unlock or expiry', async () => {
      const { store, pass } = await make();
      assert.equal(await store.lock('c1', 'node-b', 300), true);
      assert.equal(await store.lock('c1', 'node-c', 300), false);
      assert.equal(await store.lock('c1', 'node-b', 300), true);
      await store.unlock('c1', 'node-c'); // not its lock: no effect
      assert.equal(await store.lock('c1', 'node-c', 300), false);
      await store.unlock('c1', 'node-b');
      assert.equal(await store.lock('c1', 'node-c', 300), true);
      await pass(400);
      assert.equal(await store.lock('c1', 'node-b', 300), true);
    });

    it('listing is bounded by its limit', async () => {
      const { store } = await make();
      for (let i = 0; i < 10; i++) await store.save(snap(`c${i}`), 60_000);
      assert.equal((await store.list('node-a', 4)).length, 4);
    });
  });
}

contract('memory', async () => {
  const clock = new FakeClock(1_000_000);
  return {
    store: createMemorySessionSnapshots(clock),
    async pass(ms) {
      clock.advance(ms);
    },
  };
});

let redis: RedisServer;
let client: RedisClient;
before(async () => {
  redis = await startRedis();
  client = createRedisClient(redis.url);
  await waitForRedisReady(client);
});
after(async () => {
  client?.disconnect();
  await redis?.stop();
});

contract('redis', async () => ({
  store: createRedisSessionSnapshots(client, `t${randomBytes(4).toString('hex')}:`),
  pass: (ms) => sleep(ms),
}));

describe('session snapshots (redis only)', () => {
  it('keeps index and snapshots on one hash slot per holder, and reports a tampered snapshot as malformed', async () => {
    const prefix = `t${randomBytes(4).toString('hex')}:`;
    const store = createRedisSessionSnapshots(client, prefix);
    await store.save(snap('c1'), 60_000);
    const keys = (await client.keys(`${prefix}*`)).sort();
    assert.deepEqual(keys, [`${prefix}{node-a}:idx`, `${prefix}{node-a}:s:c1`]);
    await client.set(`${prefix}{node-a}:s:c1`, '{"v":1,"holder":"node-a"');
    const [entry] = await store.list('node-a', 10);
    assert.ok(entry?.state === 'malformed');
    await store.end('node-a', 'c1', 60_000);
    assert.deepEqual((await client.keys(`${prefix}*`)).sort(), [`${prefix}{node-a}:t:c1`]);
  });

  it('an unreachable Redis rejects with MEDIA_ERR_STORE_UNAVAILABLE', async () => {
    const dead = createRedisClient('redis://127.0.0.1:1', { connectTimeoutMs: 200, onConnectionError: () => undefined });
    dead.on('error', () => undefined);
    try {
      const store = createRedisSessionSnapshots(dead);
      await assert.rejects(store.save(snap('c1'), 1000), (e: unknown) => (e as { code?: string }).code === 'MEDIA_ERR_STORE_UNAVAILABLE');
    } finally {
      dead.disconnect();
    }
  });
});
