// The recovering side with real decisions and store (memory; Redis for the cross-instance race) and fake edges
// (session manager, media node, signaling): who recovers, who waits, what a release frees.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createRedisClient, waitForRedisReady, type RedisClient } from '@vms/cluster';
import { startRedis, type RedisServer } from '@vms/harness';
import { createMemorySsrcAllocator, type MediaNode, type ZlmClient } from '@vms/media';
import pino from 'pino';
import { createMemoryDeviceKeyIndex } from '../cluster/device-index.memory.ts';
import { FakeClock } from '../core/clock.ts';
import type { MediaPlane } from '../media/media-plane.ts';
import { SAMPLE_DEVICE, sampleSnapshot } from '../../test/recovery/snapshot-samples.ts';
import type { SessionSnapshot } from './session-snapshot.ts';
import { createMemorySessionSnapshots } from './session-snapshots.memory.ts';
import type { SessionSnapshotStore } from './session-snapshots.port.ts';
import { createRedisSessionSnapshots } from './session-snapshots.redis.ts';
import { createSessionRecovery, type RecoveryOutcome } from './session-recovery.ts';

const DEV = SAMPLE_DEVICE;
const NODE = { id: 'zlm-1' } as MediaNode;
/** A live session of DEV on NODE that node-a held in its run before the crash. */
const snap = (callId: string, over: Partial<SessionSnapshot> = {}): SessionSnapshot =>
  sampleSnapshot(callId, { run: 'r-old', nodeId: NODE.id, ssrc: '0200000007', allocatedSsrc: '0200000007', sessionIds: ['v1'], ...over });

function instance(store: SessionSnapshotStore, self: string, o: { ownedHere?: boolean; readers?: number | 'down'; clock?: FakeClock; recoverDelayMs?: number } = {}) {
  const clock = o.clock ?? new FakeClock(10_000);
  const calls: string[] = [];
  const outcomes: RecoveryOutcome[] = [];
  const ssrcs = createMemorySsrcAllocator({ serverId: '34020000002000000001' });
  const client = {
    getMediaList: async () => {
      if (o.readers === 'down') throw new Error('unreachable');
      return o.readers === undefined ? [] : [{ app: 'rtp', stream: 's', schema: 'rtsp', vhost: '', readerCount: o.readers, totalReaderCount: o.readers, originType: 3 }];
    },
    closeRtpServer: async (id: string) => (calls.push(`close ${id}`), { hit: true }),
  } as unknown as ZlmClient;
  const plane = { node: (id: string) => (id === NODE.id ? NODE : undefined), client: () => client, ssrcs, callResult: () => undefined } as unknown as MediaPlane;
  const directory = createMemoryDeviceKeyIndex(clock);
  const recovery = createSessionRecovery({
    store,
    self,
    run: 'r-now',
    sessions: {
      recover: async (s) => {
        calls.push(`recover ${s.dialog.callId}`);
        if (o.recoverDelayMs !== undefined) await new Promise((r) => setTimeout(r, o.recoverDelayMs));
        return `new-${s.dialog.callId}`;
      },
      holds: () => false,
    },
    signaling: { restore: (_d, saved) => ({ callId: saved.callId, answer: Buffer.alloc(0), info: async () => 200, bye: async () => void calls.push(`bye ${saved.callId}`), onEnded: () => undefined, saved: () => saved, drop: () => undefined }) },
    plane,
    holders: null,
    directory,
    ownedHere: () => o.ownedHere ?? true,
    reachable: () => o.ownedHere ?? true,
    giveUpMs: 30_000,
    scanPeriodMs: 5000,
    lockTtlMs: 60_000,
    clock,
    log: pino({ level: 'silent' }),
    onOutcome: (x) => void outcomes.push(x),
  });
  return { recovery, calls, outcomes, clock, ssrcs, directory };
}

describe('session recovery', () => {
  it('the device owner re-INVITEs a stream that still has viewers and ends the old entry; its own live entries are left alone', async () => {
    const store = createMemorySessionSnapshots(new FakeClock(10_000));
    await store.save(snap('c1'), 600_000);
    await store.save(snap('mine', { holder: 'node-b', run: 'r-now' }), 600_000);
    const b = instance(store, 'node-b', { readers: 2 });
    b.recovery.setGoneHolders(['node-a']);
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, ['recover c1']);
    assert.deepEqual(b.outcomes, [{ outcome: 'recovered' }]);
    assert.deepEqual(await store.list('node-a', 10), []);
    assert.deepEqual((await store.list('node-b', 10)).map((e) => e.callId), ['mine']);
  });

  it('no viewers left: released — BYE on the old dialog, RTP server closed, SSRC freed, session ids forgotten, entry ended', async () => {
    const store = createMemorySessionSnapshots(new FakeClock(10_000));
    await store.save(snap('c1'), 600_000);
    const b = instance(store, 'node-b', { readers: 0 });
    await b.directory.remember('v1', DEV, 60_000);
    await b.ssrcs.reserve(NODE.id, '0200000007');
    b.recovery.setGoneHolders(['node-a']);
    await b.recovery.scanNow();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(b.calls.sort(), ['bye c1', `close ${DEV}_c1`]);
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'no viewers' }]);
    assert.equal(await b.ssrcs.inUse(NODE.id), 0);
    assert.equal(await b.directory.deviceOf('v1'), null);
    assert.deepEqual(await store.list('node-a', 10), []);
  });

  it('a device that does not come back: nothing before give-up, then released by an instance that does not own it (no BYE: no flow)', async () => {
    const clock = new FakeClock(10_000);
    const store = createMemorySessionSnapshots(clock);
    await store.save(snap('c1'), 600_000);
    const c = instance(store, 'node-c', { ownedHere: false, clock });
    c.recovery.setGoneHolders(['node-a']);
    await c.recovery.scanNow();
    clock.advance(29_000);
    await c.recovery.scanNow();
    assert.deepEqual(c.calls, []);
    clock.advance(1000);
    await c.recovery.scanNow();
    assert.deepEqual(c.calls, [`close ${DEV}_c1`]);
    assert.deepEqual(c.outcomes, [{ outcome: 'released', reason: 'not recovered in time' }]);
  });

  it('media node unreachable: retried at the next scan, the entry kept', async () => {
    const store = createMemorySessionSnapshots(new FakeClock(10_000));
    await store.save(snap('c1'), 600_000);
    const b = instance(store, 'node-b', { readers: 'down' });
    b.recovery.setGoneHolders(['node-a']);
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, []);
    assert.equal((await store.list('node-a', 10)).length, 1);
  });

  it('this instance restarted: its entries of the earlier run are orphans too', async () => {
    const store = createMemorySessionSnapshots(new FakeClock(10_000));
    await store.save(snap('c1', { holder: 'node-a', run: 'r-before-crash' }), 600_000);
    const a = instance(store, 'node-a', { readers: 1 });
    await a.recovery.scanNow();
    assert.deepEqual(a.calls, ['recover c1']);
  });
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

describe('session recovery racing (real redis-server)', () => {
  it('two instances that both believe they own the device scan at once: exactly one recovery INVITE per session', async () => {
    const store = createRedisSessionSnapshots(client, `t${randomBytes(4).toString('hex')}:`);
    for (let i = 0; i < 20; i++) await store.save(snap(`c${i}`), 600_000);
    const b = instance(store, 'node-b', { readers: 1, recoverDelayMs: 20 });
    const c = instance(store, 'node-c', { readers: 1, recoverDelayMs: 20 });
    b.recovery.setGoneHolders(['node-a']);
    c.recovery.setGoneHolders(['node-a']);
    await Promise.all([b.recovery.scanNow(), c.recovery.scanNow()]);
    const all = [...b.calls, ...c.calls].filter((x) => x.startsWith('recover')).sort();
    assert.equal(all.length, 20, `b ${b.calls.length}, c ${c.calls.length}`);
    assert.equal(new Set(all).size, 20, 'no session recovered twice');
    assert.deepEqual(await store.list('node-a', 100), []);
  });
});
