import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createMemoryOwnershipStore, OwnershipUnavailableError, type OwnershipStore } from '@vms/cluster';
import { pino } from 'pino';
import { FakeClock } from '../core/clock.ts';
import { createOwnershipRecorder, type OwnershipMoved } from './ownership-recorder.ts';

const DEV = '34020000001320000001';
const DEV2 = '34020000001320000002';
const TTL = 10_000;
const CHECK = 3000;

function capture() {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as { level: number; msg: string });
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

const settle = () => new Promise((r) => setImmediate(r));

/** The store as seen when its move notices are lost (an outage): the other mechanisms must notice moves. */
const noticesLost = (store: OwnershipStore): OwnershipStore => ({ ...store, watchMoves: () => () => undefined });

function setup(store?: OwnershipStore, opts: { noticesLost?: boolean } = {}) {
  const clock = new FakeClock(1_000_000);
  const memory = store ?? createMemoryOwnershipStore({ clock });
  const s = opts.noticesLost === true ? noticesLost(memory) : memory;
  const { log, lines } = capture();
  const recorder = createOwnershipRecorder({ store: s, instanceId: 'node-a', ttlMs: TTL, checkIntervalMs: CHECK, clock, log });
  const moved: OwnershipMoved[] = [];
  recorder.onMoved((e) => moved.push(e));
  return { clock, store: s, recorder, moved, lines };
}

describe('ownership recorder (OWN-1..5)', () => {
  it('reclaimIfVacant: a live lease writes a vanished claim back with the lease’s remaining TTL, never over another owner', async () => {
    const { clock, store, recorder, moved } = setup(undefined, { noticesLost: true });
    assert.equal(await recorder.reclaimIfVacant(DEV), null, 'no lease: nothing claimed');
    assert.equal(await store.ownerOf(DEV), null);
    recorder.deviceSeen(DEV);
    await settle();
    await store.releaseIfOwner(DEV, 'node-a'); // emptied store
    clock.advance(4000);
    assert.equal(await recorder.reclaimIfVacant(DEV), 'node-a');
    assert.equal(await store.ownerOf(DEV), 'node-a');
    clock.advance(TTL - 4000 - 1);
    assert.equal(await store.ownerOf(DEV), 'node-a');
    clock.advance(1);
    assert.equal(await store.ownerOf(DEV), null, 'OWN-2: the lease is not extended by a re-claim');

    recorder.deviceSeen(DEV2);
    await settle();
    await store.claim(DEV2, 'node-b', TTL); // re-registered on node-b meanwhile
    assert.equal(await recorder.reclaimIfVacant(DEV2), 'node-b');
    assert.equal(await store.ownerOf(DEV2), 'node-b');
    assert.deepEqual(moved, [{ deviceId: DEV2, newOwner: 'node-b' }]);
    assert.equal(recorder.isLocallyOwned(DEV2), false);
    await recorder.close();
  });

  it('deviceSeen counts the lease from the message time the caller read (`at`), not a later clock read', async () => {
    const { clock, recorder } = setup();
    const at = clock.now();
    clock.advance(50); // the caller's reading, handed over a little later
    recorder.deviceSeen(DEV, false, at);
    await settle();
    clock.advance(TTL - 51);
    assert.equal(recorder.isLocallyOwned(DEV), true);
    clock.advance(1);
    assert.equal(recorder.isLocallyOwned(DEV), false, 'the lease ends TTL after `at`: never after the claim written since');
    await recorder.close();
  });

  it('deviceSeen claims the device for this node with the TTL and renews the local lease (OWN-1)', async () => {
    const { clock, store, recorder } = setup();
    recorder.deviceSeen(DEV);
    await settle();
    assert.equal(await store.ownerOf(DEV), 'node-a');
    assert.equal(recorder.isLocallyOwned(DEV), true);
    assert.deepEqual(recorder.localDevices(), [DEV]);
    clock.advance(TTL - 1);
    recorder.deviceSeen(DEV); // keepalive renews
    clock.advance(TTL - 1);
    assert.equal(recorder.isLocallyOwned(DEV), true);
    assert.equal(await store.ownerOf(DEV), 'node-a');
    clock.advance(1);
    assert.equal(recorder.isLocallyOwned(DEV), false, 'OWN-2: no heartbeat, no ownership');
    assert.equal(await store.ownerOf(DEV), null);
    assert.equal(recorder.localCount(), 0);
    await recorder.close();
  });

  it('renewAfterMs: a device seen again soon is not written again; lease and claim keep one expiry; a REGISTER always writes (issue 11, OWN-1, OWN-4)', async () => {
    const clock = new FakeClock(1_000_000);
    const inner = createMemoryOwnershipStore({ clock });
    let writes = 0;
    const store: OwnershipStore = { ...inner, claim: (d, i, t) => (writes++, inner.claim(d, i, t)) };
    const recorder = createOwnershipRecorder({ store, instanceId: 'node-a', ttlMs: TTL, checkIntervalMs: CHECK, clock, log: capture().log, renewAfterMs: 2000 });
    recorder.deviceSeen(DEV);
    await settle();
    for (let i = 0; i < 19; i++) {
      clock.advance(100);
      recorder.deviceSeen(DEV); // keepalives within 2 s of the write
    }
    await settle();
    assert.equal(writes, 1, 'one write for 20 keepalives within renewAfterMs');
    // the lease is the claim's: both end TTL after the write, not after the last keepalive
    clock.advance(TTL - 1900 - 1);
    assert.equal(recorder.isLocallyOwned(DEV), true);
    assert.equal(await store.ownerOf(DEV), 'node-a');
    clock.advance(1);
    assert.equal(recorder.isLocallyOwned(DEV), false);
    assert.equal(await store.ownerOf(DEV), null);

    recorder.deviceSeen(DEV); // lapsed: written again
    clock.advance(2000);
    recorder.deviceSeen(DEV); // renewAfterMs passed: written again
    await settle();
    assert.equal(writes, 3);
    assert.equal(recorder.isLocallyOwned(DEV), true);
    clock.advance(TTL - 1);
    assert.equal(await store.ownerOf(DEV), 'node-a', 'renewed at the second write');

    // OWN-4: the device re-registered on node-b, then back here within renewAfterMs of our last write
    await inner.claim(DEV2, 'node-a', TTL);
    recorder.deviceSeen(DEV2);
    await settle();
    await inner.claim(DEV2, 'node-b', TTL);
    clock.advance(500);
    recorder.deviceSeen(DEV2, true);
    await settle();
    assert.equal(await store.ownerOf(DEV2), 'node-a', 'a verified REGISTER always writes its claim');
    await recorder.close();
  });

  describe('renewFlushMs: keepalive renewals batched into renewMany (issue 11, OWN-5)', () => {
    const FLUSH = 1000;
    function batched(wrap: (memory: OwnershipStore) => OwnershipStore = (m) => m) {
      const clock = new FakeClock(1_000_000);
      const base = wrap(createMemoryOwnershipStore({ clock }));
      const claims: string[] = [];
      const renewals: string[][] = [];
      const store: OwnershipStore = {
        ...base,
        claim: (d, i, t) => (claims.push(d), base.claim(d, i, t)),
        renewMany: (ids, i, t) => (renewals.push([...ids]), base.renewMany(ids, i, t)),
      };
      const { log, lines } = capture();
      const recorder = createOwnershipRecorder({ store, instanceId: 'node-a', ttlMs: TTL, checkIntervalMs: 60 * TTL, clock, log, renewFlushMs: FLUSH });
      const moved: OwnershipMoved[] = [];
      recorder.onMoved((e) => moved.push(e));
      return { clock, store: base, recorder, claims, renewals, moved, lines };
    }

    it('a live lease’s renewals wait and go in one renewMany, each device once; a REGISTER writes at once; lease and claim end TTL after the send', async () => {
      const { clock, store, recorder, claims, renewals } = batched();
      recorder.deviceSeen(DEV, true); // a REGISTER: at once (OWN-4)
      recorder.deviceSeen(DEV2, true);
      await settle();
      assert.deepEqual(claims, [DEV, DEV2]);
      clock.advance(100);
      for (let i = 0; i < 3; i++) recorder.deviceSeen(DEV);
      recorder.deviceSeen(DEV2);
      await settle();
      assert.deepEqual(claims, [DEV, DEV2], 'renewals are not claims');
      assert.deepEqual(renewals, [], 'nothing sent before the window ends');
      clock.advance(FLUSH - 1);
      assert.deepEqual(renewals, []);
      clock.advance(1);
      await settle();
      assert.deepEqual(renewals, [[DEV, DEV2]]);
      const sentAt = clock.now();
      recorder.deviceSeen(DEV2, true);
      await settle();
      assert.deepEqual(claims, [DEV, DEV2, DEV2], 'a REGISTER still writes at once');
      clock.advance(sentAt + TTL - 1 - clock.now());
      assert.equal(recorder.isLocallyOwned(DEV), true);
      assert.equal(await store.ownerOf(DEV), 'node-a');
      clock.advance(1);
      assert.equal(recorder.isLocallyOwned(DEV), false, 'the lease ends with the claim (OWN-2)');
      assert.equal(await store.ownerOf(DEV), null);
      await recorder.close();
    });

    it('a renewal never moves a device: one claimed elsewhere meanwhile is reported and this node stops acting for it (OWN-4)', async () => {
      const { clock, store, recorder, moved } = batched(noticesLost);
      recorder.deviceSeen(DEV, true);
      await settle();
      await store.claim(DEV, 'node-b', TTL); // re-registered on node-b
      clock.advance(100);
      recorder.deviceSeen(DEV); // a late keepalive from the old flow
      clock.advance(FLUSH);
      await settle();
      assert.equal(await store.ownerOf(DEV), 'node-b');
      assert.deepEqual(moved, [{ deviceId: DEV, newOwner: 'node-b' }]);
      assert.equal(recorder.isLocallyOwned(DEV), false);
      await recorder.close();
    });

    it('an unregister drops a queued renewal and waits for one in flight: the release is the last write (OWN-3)', async () => {
      // the store applies a renewal a turn after it is sent, as a Redis round trip does
      const { clock, store, recorder, renewals } = batched((memory) => ({
        ...memory,
        renewMany: (...a) => new Promise((resolve) => setImmediate(() => resolve(memory.renewMany(...a)))),
      }));
      recorder.deviceSeen(DEV, true);
      await settle();
      clock.advance(100);
      recorder.deviceSeen(DEV); // queued
      assert.equal(await recorder.deviceGone(DEV), true);
      clock.advance(FLUSH);
      await settle();
      assert.deepEqual(renewals, [], 'nothing left to renew');
      assert.equal(await store.ownerOf(DEV), null);

      recorder.deviceSeen(DEV2, true);
      await settle();
      clock.advance(100);
      recorder.deviceSeen(DEV2);
      clock.advance(FLUSH); // sent, not settled
      assert.equal(await recorder.deviceGone(DEV2), true);
      await settle();
      assert.equal(await store.ownerOf(DEV2), null, 'the renewal sent before the unregister does not re-create the claim');
      await recorder.close();
    });

    it('a failed renewMany is logged once; the next keepalive writes at once until writes go through again (FAIL-3)', async () => {
      let down = false;
      const { clock, recorder, claims, renewals, lines } = batched((memory) => ({
        ...memory,
        renewMany: async (...a) => {
          if (down) throw new OwnershipUnavailableError('down');
          return memory.renewMany(...a);
        },
      }));
      recorder.deviceSeen(DEV, true);
      await settle();
      down = true;
      clock.advance(100);
      recorder.deviceSeen(DEV);
      clock.advance(FLUSH);
      await settle();
      assert.equal(renewals.length, 1);
      assert.equal(lines.filter((l) => l.level === 40).length, 1);
      recorder.deviceSeen(DEV); // writes failing: straight to a claim
      await settle();
      assert.deepEqual(claims, [DEV, DEV]);
      assert.ok(lines.some((l) => l.msg === 'ownership claims are being written again'));
      await recorder.close();
    });

    it('a keepalive after the lease lapsed writes the claim back only if vacant; one held elsewhere is reported, never overwritten (OWN-1, OWN-4)', async () => {
      const { clock, store, recorder, claims, renewals, moved } = batched(noticesLost);
      recorder.deviceSeen(DEV, true);
      recorder.deviceSeen(DEV2, true);
      await settle();
      clock.advance(TTL); // both lapse: the device was silent, or its keepalives were lost
      assert.equal(await store.ownerOf(DEV), null);
      await store.claim(DEV2, 'node-b', TTL); // DEV2 re-registered on node-b meanwhile
      recorder.deviceSeen(DEV); // late keepalives from the flows bound here
      recorder.deviceSeen(DEV2);
      assert.equal(recorder.isLocallyOwned(DEV), true, 'served here again at once');
      clock.advance(FLUSH);
      await settle();
      assert.deepEqual(claims, [DEV, DEV2], 'no claim: a keepalive never overwrites');
      assert.deepEqual(renewals, [[DEV, DEV2]]);
      assert.equal(await store.ownerOf(DEV), 'node-a', 'the vacant claim is written back');
      assert.equal(await store.ownerOf(DEV2), 'node-b', 'the move stands');
      assert.deepEqual(moved, [{ deviceId: DEV2, newOwner: 'node-b' }]);
      assert.equal(recorder.isLocallyOwned(DEV2), false);
      await recorder.close();
    });

    it('renewAfterMs as a share of the TTL: renewed every other keepalive, and every write gives exactly the TTL (issue 11, OWN-1)', async () => {
      // 0.4 of a 210 s TTL at one keepalive a minute, as the defaults of vms.cluster.owner-renew-after
      const ttlMs = 210_000;
      const clock = new FakeClock(1_000_000);
      const store = createMemoryOwnershipStore({ clock });
      const renewals: number[] = [];
      const counted: OwnershipStore = { ...store, renewMany: (ids, i, t) => (renewals.push(clock.now()), store.renewMany(ids, i, t)) };
      const recorder = createOwnershipRecorder({ store: counted, instanceId: 'node-a', ttlMs, checkIntervalMs: 30_000, clock, log: capture().log, renewAfterMs: 0.4 * ttlMs, renewFlushMs: FLUSH });
      recorder.deviceSeen(DEV, true);
      await settle();
      const t0 = clock.now();
      for (let k = 1; k <= 6; k++) {
        clock.advance(60_000 - (k === 1 ? 0 : FLUSH)); // a keepalive every 60 s
        recorder.deviceSeen(DEV);
        clock.advance(FLUSH);
        await settle();
      }
      assert.deepEqual(renewals.map((t) => t - t0), [121_000, 241_000, 361_000], 'keepalives 2, 4, 6');
      assert.equal(recorder.isLocallyOwned(DEV), true);
      // the device stops after keepalive 6 (renewed): the claim lives the whole TTL after that write, no longer
      clock.advance(ttlMs - 1);
      assert.equal(await store.ownerOf(DEV), 'node-a');
      clock.advance(1);
      assert.equal(await store.ownerOf(DEV), null);
      assert.equal(recorder.isLocallyOwned(DEV), false);
      await recorder.close();
    });

    it('a batch goes at once when it fills one store command; the renewals left over follow as soon as it is done (OWN-5)', async () => {
      const clock = new FakeClock(1_000_000);
      const store = createMemoryOwnershipStore({ clock });
      const renewals: string[][] = [];
      let release: (() => void) | null = null;
      const slow: OwnershipStore = {
        ...store,
        // the first batch stays in flight until released, as a slow round trip
        renewMany: async (ids, i, t) => {
          renewals.push([...ids]);
          if (renewals.length === 1) await new Promise<void>((r) => (release = r));
          return store.renewMany(ids, i, t);
        },
      };
      const recorder = createOwnershipRecorder({ store: slow, instanceId: 'node-a', ttlMs: TTL, checkIntervalMs: 60 * TTL, clock, log: capture().log, renewFlushMs: FLUSH, renewBatchMax: 2 });
      const ids = ['34020000001320000011', '34020000001320000012', '34020000001320000013', '34020000001320000014', '34020000001320000015'];
      for (const id of ids) recorder.deviceSeen(id, true);
      await settle();
      clock.advance(100);
      recorder.deviceSeen(ids[0] as string);
      assert.deepEqual(renewals, [], 'one renewal waits for company');
      recorder.deviceSeen(ids[1] as string);
      clock.advance(0);
      await settle();
      assert.deepEqual(renewals, [ids.slice(0, 2)], 'two fill the batch: sent without waiting');
      for (const id of ids.slice(2)) recorder.deviceSeen(id);
      clock.advance(FLUSH);
      await settle();
      assert.equal(renewals.length, 1, 'one batch in flight at a time');
      (release as unknown as () => void)();
      await settle();
      clock.advance(0);
      await settle();
      assert.deepEqual(renewals, [ids.slice(0, 2), ids.slice(2, 4)], 'a full queue goes as soon as the batch in flight is done');
      clock.advance(0);
      await settle();
      assert.deepEqual(renewals, [ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)], 'the one the cap left behind waited its window already');
      await recorder.close();
    });

    it('a failed batch gives its leases back their previous expiry: at the default period the claim never expires while the device keeps alive, even when writes went through again meanwhile (OWN-1, FAIL-3)', async () => {
      // the defaults: TTL 210 s, renew after 84 s, a keepalive every 60 s, batches after 1 s
      const ttlMs = 210_000;
      const clock = new FakeClock(1_000_000);
      const store = createMemoryOwnershipStore({ clock });
      const failing = new Set([1, 3, 4]); // renewMany calls (1-based) that fail: lost batches
      let calls = 0;
      const flaky: OwnershipStore = {
        ...store,
        renewMany: async (ids, i, t) => {
          calls++;
          if (failing.has(calls)) throw new OwnershipUnavailableError('timed out');
          return store.renewMany(ids, i, t);
        },
      };
      const recorder = createOwnershipRecorder({ store: flaky, instanceId: 'node-a', ttlMs, checkIntervalMs: 60 * ttlMs, clock, log: capture().log, renewAfterMs: 0.4 * ttlMs, renewFlushMs: FLUSH });
      recorder.deviceSeen(DEV, true);
      await settle();
      const other = ['34020000001320000021', '34020000001320000022', '34020000001320000023'];
      for (let s = 1; s <= 1200; s++) {
        clock.advance(1000);
        if (s % 60 === 0) recorder.deviceSeen(DEV); // its keepalive
        // another device registers now and then: its claim goes through, so writes are not failing any more
        if (s % 150 === 0) recorder.deviceSeen(other[(s / 150) % other.length] as string, true);
        await settle();
        assert.equal(await store.ownerOf(DEV), 'node-a', `claim held at ${s} s`);
      }
      assert.ok(calls >= 6, `renewals were sent (${calls}), three of them lost`);
      await recorder.close();
    });

    it('close() sends the queued renewals once', async () => {
      const { clock, recorder, renewals } = batched();
      recorder.deviceSeen(DEV, true);
      await settle();
      clock.advance(100);
      recorder.deviceSeen(DEV);
      await recorder.close();
      assert.deepEqual(renewals, [[DEV]]);
      await recorder.close();
      assert.deepEqual(renewals, [[DEV]]);
    });
  });

  it('deviceGone deletes the claim only while it still names this node (OWN-3)', async () => {
    const { store, recorder } = setup();
    recorder.deviceSeen(DEV);
    recorder.deviceSeen(DEV2);
    await settle();
    await store.claim(DEV2, 'node-b', TTL); // DEV2 re-registered on node-b meanwhile
    assert.equal(await recorder.deviceGone(DEV), true);
    assert.equal(await recorder.deviceGone(DEV2), false);
    assert.equal(await store.ownerOf(DEV), null);
    assert.equal(await store.ownerOf(DEV2), 'node-b', "another node's claim survives our unregister");
    assert.equal(recorder.isLocallyOwned(DEV), false);
    await recorder.close();
  });

  it('a REGISTER on another instance is heard at once from the store’s move notice: the old owner stops acting for the device before any check pass (OWN-4)', async () => {
    // the drain/undrain case: node-c must forget a device that re-registered on node-a before the device
    // comes back to node-c, so node-c answers its keepalive 404 (no registration) and it registers again
    const clock = new FakeClock(1_000_000);
    const store = createMemoryOwnershipStore({ clock });
    const reads: string[][] = [];
    const counted: OwnershipStore = { ...store, ownersOf: (ids) => (reads.push([...ids]), store.ownersOf(ids)) };
    const make = (instanceId: string) => {
      const recorder = createOwnershipRecorder({ store: counted, instanceId, ttlMs: TTL, checkIntervalMs: 60 * TTL, clock, log: capture().log, renewFlushMs: 1000 });
      const moved: OwnershipMoved[] = [];
      recorder.onMoved((e) => moved.push(e));
      return { recorder, moved };
    };
    const c = make('node-c');
    const a = make('node-a');
    c.recorder.deviceSeen(DEV, true);
    c.recorder.deviceSeen(DEV2, true);
    await settle();
    clock.advance(100);
    c.recorder.deviceSeen(DEV); // a keepalive: a renewal, queued
    a.recorder.deviceSeen(DEV, true); // the device re-registered on node-a
    await settle();
    await settle();
    assert.deepEqual(c.moved, [{ deviceId: DEV, newOwner: 'node-a' }]);
    assert.equal(c.recorder.isLocallyOwned(DEV), false);
    assert.equal(c.recorder.isLocallyOwned(DEV2), true, 'nobody else moved');
    assert.deepEqual(a.moved, [], 'the new owner is not told it lost the device');
    assert.deepEqual(reads, [], 'no check pass was needed');
    clock.advance(1000); // the queued renewal went nowhere: the lease was dropped
    await settle();
    assert.equal(await store.ownerOf(DEV), 'node-a');
    await c.recorder.close();
    a.recorder.deviceSeen(DEV2, true); // after close node-c hears nothing (no listener left behind)
    await settle();
    assert.equal(c.moved.length, 1);
    await a.recorder.close();
  });

  it('the periodic check notices a device that moved to another node (OWN-4)', async () => {
    const { clock, store, recorder, moved } = setup(undefined, { noticesLost: true });
    recorder.deviceSeen(DEV);
    recorder.deviceSeen(DEV2);
    await settle();
    await store.claim(DEV, 'node-b', TTL);
    clock.advance(CHECK); // timer fires the check
    await settle();
    await settle();
    assert.deepEqual(moved, [{ deviceId: DEV, newOwner: 'node-b' }]);
    assert.equal(recorder.isLocallyOwned(DEV), false);
    assert.equal(recorder.isLocallyOwned(DEV2), true);
    await recorder.close();
  });

  it('checkAfterMs: a check pass reads only devices this node last wrote longer ago; a failed write or a store reconnect makes the next pass read all (issue 11, OWN-4)', async () => {
    const clock = new FakeClock(1_000_000);
    const inner = createMemoryOwnershipStore({ clock });
    const reads: string[][] = [];
    let down = false;
    const store: OwnershipStore = {
      ...noticesLost(inner),
      claim: async (d, i, t) => {
        if (down) throw new OwnershipUnavailableError('down');
        return inner.claim(d, i, t);
      },
      ownersOf: (ids) => (reads.push([...ids].sort()), inner.ownersOf(ids)),
    };
    const AFTER = 4000;
    const recorder = createOwnershipRecorder({ store, instanceId: 'node-a', ttlMs: TTL, checkIntervalMs: 60 * TTL, clock, log: capture().log, checkAfterMs: AFTER });
    const moved: OwnershipMoved[] = [];
    recorder.onMoved((e) => moved.push(e));
    recorder.deviceSeen(DEV, true);
    recorder.deviceSeen(DEV2, true);
    await settle();
    clock.advance(AFTER - 1);
    await recorder.checkNow();
    assert.deepEqual(reads, [], 'both written less than checkAfterMs ago: nothing read');
    recorder.deviceSeen(DEV); // written again (renewAfterMs 0)
    await settle();
    await inner.claim(DEV2, 'node-b', TTL); // DEV2 moved, its notice lost
    clock.advance(1);
    await recorder.checkNow();
    assert.deepEqual(reads, [[DEV2]], 'the device not written for checkAfterMs is read');
    assert.deepEqual(moved, [{ deviceId: DEV2, newOwner: 'node-b' }]);
    down = true;
    recorder.deviceSeen(DEV); // this write fails
    await settle();
    clock.advance(10);
    await recorder.checkNow();
    assert.deepEqual(reads[1], [DEV], 'a failed write is no proof: read all');
    down = false;
    clock.advance(10);
    await recorder.checkNow();
    assert.equal(reads.length, 2, 'then back to the overdue ones: none');
    recorder.storeReconnected(); // claims may have vanished, notices been lost
    await settle();
    assert.deepEqual(reads[2], [DEV]);
    await recorder.close();
  });

  it('the routing hook can report a move at once; listeners can unsubscribe', async () => {
    const { recorder, moved } = setup();
    const other: OwnershipMoved[] = [];
    const off = recorder.onMoved((e) => other.push(e));
    recorder.deviceSeen(DEV);
    recorder.observeOwner(DEV, 'node-a'); // still ours: nothing
    off();
    recorder.observeOwner(DEV, 'node-c');
    recorder.observeOwner(DEV, 'node-c'); // already dropped: reported once
    assert.deepEqual(moved, [{ deviceId: DEV, newOwner: 'node-c' }]);
    assert.deepEqual(other, []);
    await recorder.close();
  });

  it('a claim that vanished (Redis restarted) is re-written with the lease’s own expiry', async () => {
    const { clock, store, recorder } = setup();
    recorder.deviceSeen(DEV);
    await settle();
    clock.advance(2000); // before the first timed check
    await store.releaseIfOwner(DEV, 'node-a'); // as if Redis lost the key
    await recorder.checkNow();
    assert.equal(await store.ownerOf(DEV), 'node-a');
    clock.advance(TTL - 2000 - 1);
    assert.equal(await store.ownerOf(DEV), 'node-a');
    clock.advance(1);
    assert.equal(await store.ownerOf(DEV), null, 'never extended beyond the last sighting + TTL');
    await recorder.close();
  });

  it('the check re-writes a vanished claim only if still vacant: a device that moved meanwhile keeps its new owner (OWN-4)', async () => {
    const clock = new FakeClock(1_000_000);
    const memory = createMemoryOwnershipStore({ clock });
    // the check's read says "no owner", then node-b claims before the write (a REGISTER on node-b)
    const racing: OwnershipStore = {
      ...memory,
      ownersOf: async () => {
        await memory.claim(DEV, 'node-b', TTL);
        return new Map();
      },
    };
    const { recorder, moved } = setup(racing);
    recorder.deviceSeen(DEV);
    await settle();
    await recorder.checkNow();
    assert.equal(await memory.ownerOf(DEV), 'node-b', 'not overwritten by the old owner');
    assert.deepEqual(moved, [{ deviceId: DEV, newOwner: 'node-b' }]);
    assert.equal(recorder.isLocallyOwned(DEV), false);
    await recorder.close();
  });

  it('store down: deviceSeen never throws, keeps the local view, and logs once per outage (FAIL-3)', async () => {
    const clock = new FakeClock(0);
    const memory = createMemoryOwnershipStore({ clock });
    let down = true;
    const flaky: OwnershipStore = {
      ...memory,
      claim: async (...a) => {
        if (down) throw new OwnershipUnavailableError('down');
        return memory.claim(...a);
      },
      ownersOf: async (ids) => {
        if (down) throw new OwnershipUnavailableError('down');
        return memory.ownersOf(ids);
      },
    };
    const { recorder, lines } = setup(flaky);
    for (let i = 0; i < 5; i++) recorder.deviceSeen(DEV);
    await recorder.checkNow();
    await recorder.checkNow();
    await settle();
    assert.equal(recorder.isLocallyOwned(DEV), true);
    const warns = lines.filter((l) => l.level === 40).map((l) => l.msg);
    assert.equal(warns.length, 2, warns.join(' | ')); // one for claims, one for the check
    down = false;
    recorder.deviceSeen(DEV);
    await settle();
    assert.ok(lines.some((l) => l.msg === 'ownership claims are being written again'));
    assert.equal(await memory.ownerOf(DEV), 'node-a');
    await recorder.close();
    await recorder.close();
  });
});
