// The cascade's recovering side with the real store (memory) and fake edges (SIP stack, media node, play path):
// who re-INVITEs, what a refusal or a missing answer frees, what waits, what a non-leader does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Dialog, SipResponse } from '@vms/sip';
import pino from 'pino';
import { FakeClock } from '../core/clock.ts';
import { createMemorySnapshotStore } from '../recovery/session-snapshots.memory.ts';
import type { SessionSnapshotStore } from '../recovery/session-snapshots.port.ts';
import { createUpstreamRecovery, judgeReinviteAnswer, type UpstreamRecoveryOutcome } from './upstream-recovery.ts';
import { parseUpstreamSnapshot, serializeUpstreamSnapshot, UPSTREAM_SNAPSHOT_CODEC, type UpstreamSnapshot } from './upstream-snapshot.ts';

const CHANNEL = '34020000001310000001';
const OFFER = 'v=0\r\no=34010000002000000001 0 0 IN IP4 127.0.0.1\r\ns=Play\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=video 40000 RTP/AVP 96\r\na=recvonly\r\na=rtpmap:96 PS/90000\r\ny=0340100091\r\n';
const snap = (callId: string, over: Partial<UpstreamSnapshot> = {}): UpstreamSnapshot => ({
  v: 1,
  holder: 'leader-a',
  run: 'r-old',
  expiresAt: 1e12,
  platformId: '34010000002000000001',
  channelId: CHANNEL,
  deviceId: '34020000001320000001',
  tenantId: 'default',
  purpose: 'live',
  viewer: { sessionId: 'v1', streamId: `34020000001320000001_${CHANNEL}`, mediaNodeId: 'zlm-1' },
  offerSdp: OFFER,
  sdpVersion: 0,
  dialog: { callId, localTag: 'l', remoteTag: 'r', local: `<sip:${CHANNEL}@3402000000>`, remote: '<sip:34010000002000000001@3401000000>', localSeq: null, remoteSeq: 1, routeSet: [], remoteTarget: 'sip:34010000002000000001@127.0.0.1:5060', transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 5060 },
  createdAt: 1,
  ...over,
});

type Answer = number | 'never';

function leader(store: SessionSnapshotStore<UpstreamSnapshot>, self: string, o: { answer?: Answer; present?: boolean; unreachable?: boolean; isLeader?: boolean; clock?: FakeClock } = {}) {
  const clock = o.clock ?? new FakeClock(10_000);
  const calls: string[] = [];
  const outcomes: UpstreamRecoveryOutcome[] = [];
  const adopted: string[] = [];
  const dialogOf = (callId: string): Dialog =>
    ({
      callId,
      terminated: false,
      reinvite: (opts: { body: string }) => {
        calls.push(`${self} re-INVITE ${callId} ${/o=\S+ 0 1 /.test(opts.body) ? 'v1' : 'v?'}`);
        if (o.answer === 'never') return new Promise<SipResponse>(() => undefined);
        return Promise.resolve({ status: o.answer ?? 200 } as SipResponse);
      },
      destroy: async () => void calls.push(`${self} BYE ${callId}`),
    }) as unknown as Dialog;
  const recovery = createUpstreamRecovery({
    store,
    self,
    run: 'r-now',
    isLeader: () => o.isLeader ?? true,
    stack: { restoreDialog: (state) => dialogOf(state.callId) },
    forwarder: {
      waitForStream: async () => undefined,
      start: async (_n, r) => (calls.push(`${self} send ${r.ssrc} to ${r.dstAddress}:${r.dstPort}`), { address: '127.0.0.1', port: 50_000 }),
      stop: async (_n, _s, ssrc) => void calls.push(`${self} stop ${ssrc}`),
    },
    probe: async () => {
      if (o.unreachable === true) throw new Error('media node does not answer');
      return (o.present ?? true) ? { kind: 'present', aliveSecond: 5 } : { kind: 'absent' };
    },
    source: { stop: async (v) => void calls.push(`${self} leave ${v.sessionId}`) },
    views: { adopt: (a) => (adopted.push(a.dialog.callId), true) },
    giveUpMs: 30_000,
    scanPeriodMs: 5000,
    lockTtlMs: 60_000,
    reinviteTimeoutMs: 8000,
    clock,
    log: pino({ level: 'silent' }),
    onOutcome: (x) => void outcomes.push(x),
  });
  recovery.setGoneHolders(['leader-a']);
  return { recovery, calls, outcomes, adopted, clock };
}

const memory = () => createMemorySnapshotStore(new FakeClock(10_000), UPSTREAM_SNAPSHOT_CODEC);

describe('upstream recovery (SPEC §11 for CASC-6)', () => {
  it('a live view of a gone leader, stream present, re-INVITE accepted: sending restarted to the SDP address, dialog adopted, entry ended', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const b = leader(store, 'leader-b');
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, ['leader-b stop 0340100091', 'leader-b send 0340100091 to 127.0.0.1:40000', 'leader-b re-INVITE c1 v1']);
    assert.deepEqual(b.adopted, ['c1']);
    assert.deepEqual(b.outcomes, [{ outcome: 'recovered' }]);
    assert.equal((await store.list('leader-a', 10)).length, 0);
    assert.equal(await store.save(snap('c1'), 60_000), false, 'tombstoned: never brought back');
    await b.recovery.close();
  });

  it('two leaders racing (a split moment): the recovery lock lets exactly one re-INVITE', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const b = leader(store, 'leader-b');
    const c = leader(store, 'leader-c');
    await Promise.all([b.recovery.scanNow(), c.recovery.scanNow()]);
    assert.equal([...b.calls, ...c.calls].filter((x) => x.includes('re-INVITE')).length, 1);
    await Promise.all([b.recovery.close(), c.recovery.close()]);
  });

  it('re-INVITE refused: BYE from the snapshot, sending stopped, viewer left, entry ended', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const b = leader(store, 'leader-b', { answer: 488 });
    await b.recovery.scanNow();
    assert.deepEqual(b.calls.slice(3).sort(), ['leader-b BYE c1', 'leader-b leave v1', 'leader-b stop 0340100091']);
    assert.deepEqual(b.adopted, []);
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'upstream re-INVITE refused' }]);
    assert.equal((await store.list('leader-a', 10)).length, 0);
    await b.recovery.close();
  });

  it('the upstream no longer has the dialog (481 to the re-INVITE): no BYE, sending stopped, viewer left, entry ended', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const b = leader(store, 'leader-b', { answer: 481 });
    await b.recovery.scanNow();
    assert.deepEqual(b.calls.slice(3).sort(), ['leader-b leave v1', 'leader-b stop 0340100091']);
    assert.deepEqual(b.adopted, []);
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'upstream dialog gone' }]);
    assert.equal((await store.list('leader-a', 10)).length, 0);
    await b.recovery.close();
  });

  it('re-INVITE unanswered: BYE after the bound (8 s), not at Timer B', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const clock = new FakeClock(10_000);
    const b = leader(store, 'leader-b', { answer: 'never', clock });
    const scan = b.recovery.scanNow();
    for (let i = 0; i < 50 && !b.calls.some((x) => x.includes('re-INVITE')); i++) await new Promise((r) => setImmediate(r));
    assert.ok(!b.calls.some((x) => x.includes('BYE')));
    clock.advance(8000);
    await scan;
    assert.ok(b.calls.includes('leader-b BYE c1'));
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'upstream re-INVITE unanswered' }]);
    await b.recovery.close();
  });

  it('the stream absent from its media node at two scans: gone for good (the device side never re-INVITEs into an absent stream), BYE then, not at the give-up', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const clock = new FakeClock(10_000);
    const b = leader(store, 'leader-b', { present: false, clock });
    await b.recovery.scanNow();
    assert.equal(b.calls.length, 0, 'one miss may be a race: nothing yet');
    clock.advance(5000);
    await b.recovery.scanNow();
    assert.ok(b.calls.includes('leader-b BYE c1') && b.calls.includes('leader-b leave v1'));
    assert.ok(!b.calls.some((x) => x.includes('re-INVITE')));
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'stream gone from the media node' }]);
    assert.equal((await store.list('leader-a', 10)).length, 0);
    await b.recovery.close();
  });

  it('the media node does not answer: waits, released after five scans without an answer', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const clock = new FakeClock(10_000);
    const b = leader(store, 'leader-b', { unreachable: true, clock });
    for (let i = 0; i < 4; i++) {
      await b.recovery.scanNow();
      clock.advance(5000);
    }
    assert.equal(b.calls.length, 0);
    await b.recovery.scanNow();
    assert.ok(b.calls.includes('leader-b BYE c1'));
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'media node unreachable' }]);
    await b.recovery.close();
  });

  it('nothing settled by the give-up: released then', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const clock = new FakeClock(10_000);
    const b = leader(store, 'leader-b', { unreachable: true, clock });
    await b.recovery.scanNow();
    assert.equal(b.calls.length, 0);
    clock.advance(30_000);
    await b.recovery.scanNow();
    assert.ok(b.calls.includes('leader-b BYE c1') && b.calls.includes('leader-b leave v1'));
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'not recovered in time' }]);
    await b.recovery.close();
  });

  it('a playback view is not resumed: BYE', async () => {
    const store = memory();
    await store.save(snap('c1', { purpose: 'playback' }), 60_000);
    const b = leader(store, 'leader-b');
    await b.recovery.scanNow();
    assert.ok(b.calls.includes('leader-b BYE c1'));
    assert.ok(!b.calls.some((x) => x.includes('re-INVITE')));
    await b.recovery.close();
  });

  it('a view that was ending when its leader crashed (the upstream had sent BYE): the teardown is finished, no BYE, no re-INVITE', async () => {
    const store = memory();
    await store.save(snap('c1', { ending: true }), 60_000);
    const b = leader(store, 'leader-b');
    await b.recovery.scanNow();
    assert.deepEqual(b.calls.sort(), ['leader-b leave v1', 'leader-b stop 0340100091']);
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'ended before the crash' }]);
    await b.recovery.close();
  });

  it('not the leader: nothing is touched', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const b = leader(store, 'leader-b', { isLeader: false });
    await b.recovery.scanNow();
    assert.equal(b.calls.length, 0);
    assert.equal((await store.list('leader-a', 10)).length, 1);
    await b.recovery.close();
  });
});

describe('judgeReinviteAnswer', () => {
  it('2xx adopts; 481/408 release without BYE (RFC 3261 §12.2.1.2); any other refusal or no answer releases with BYE', () => {
    assert.deepEqual(judgeReinviteAnswer(200), { kind: 'adopt' });
    assert.deepEqual(judgeReinviteAnswer(299), { kind: 'adopt' });
    assert.deepEqual(judgeReinviteAnswer(481), { kind: 'release', reason: 'upstream dialog gone', bye: false });
    assert.deepEqual(judgeReinviteAnswer(408), { kind: 'release', reason: 'upstream dialog gone', bye: false });
    assert.deepEqual(judgeReinviteAnswer(488), { kind: 'release', reason: 'upstream re-INVITE refused', bye: true });
    assert.deepEqual(judgeReinviteAnswer(0), { kind: 'release', reason: 'upstream re-INVITE refused', bye: true });
    assert.deepEqual(judgeReinviteAnswer(180), { kind: 'release', reason: 'upstream re-INVITE refused', bye: true });
    assert.deepEqual(judgeReinviteAnswer(null), { kind: 'release', reason: 'upstream re-INVITE unanswered', bye: true });
  });
});

describe('upstream snapshot format', () => {
  it('round-trips, and refuses hostile or broken input naming the field', () => {
    const s = snap('c1');
    assert.deepEqual(parseUpstreamSnapshot(serializeUpstreamSnapshot(s)), s);
    const bad = (over: Record<string, unknown>, field: RegExp) => assert.throws(() => parseUpstreamSnapshot(JSON.stringify({ ...s, ...over })), field);
    bad({ v: 2 }, /\bv\b/);
    bad({ channelId: '1 OR 1' }, /channelId/);
    bad({ purpose: 'talk' }, /purpose/);
    bad({ offerSdp: 'x'.repeat(5000) }, /offerSdp/);
    bad({ viewer: { sessionId: 'a b', streamId: 's', mediaNodeId: 'n' } }, /viewer.sessionId/);
    bad({ dialog: { ...s.dialog, remotePort: 70_000 } }, /remotePort/);
    bad({ sdpVersion: -1 }, /sdpVersion/);
    assert.throws(() => parseUpstreamSnapshot('{'), /not JSON/);
    assert.throws(() => parseUpstreamSnapshot('x'.repeat(20_000)), /longer/);
  });
});
