// The audio recovering side with the real decisions and store (memory) and fake edges (SIP stack, media node,
// the broadcast service): who re-establishes, what a release frees, what waits, the race of two instances.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Dialog } from '@vms/sip';
import pino from 'pino';
import { FakeClock } from '../core/clock.ts';
import { createAudioRecovery, type AudioRecoveryOutcome } from './audio-recovery.ts';
import { AUDIO_SNAPSHOT_CODEC, parseAudioSnapshot, serializeAudioSnapshot, type AudioSnapshot } from './audio-snapshot.ts';
import type { MediaView } from './recovery-decision.ts';
import { createMemorySnapshotStore } from './session-snapshots.memory.ts';
import type { SessionSnapshotStore } from './session-snapshots.port.ts';

const DEV = '34020000001320000001';
const CH = '34020000001370000001';
const snap = (callId: string, over: Partial<AudioSnapshot> = {}): AudioSnapshot => ({
  v: 1,
  holder: 'node-a',
  run: 'r-old',
  expiresAt: 1e12,
  purpose: 'talk',
  deviceId: DEV,
  channelId: CH,
  source: { mediaNodeId: 'zlm-1', app: 'rtp', stream: 'mic-1' },
  ssrc: '0100000001',
  deviceAudio: { host: '127.0.0.1', port: 40_000 },
  sendPort: 30_000,
  receiveStreamId: `talk_${CH}`,
  dialog: { callId, localTag: 'l', remoteTag: 'r', local: `<sip:34020000002000000001@3402000000>`, remote: `<sip:${CH}@3402000000>`, localSeq: null, remoteSeq: 1, routeSet: [], remoteTarget: `sip:${CH}@127.0.0.1:5060`, transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 5060 },
  createdAt: 1,
  ...over,
});

interface Opts {
  readonly source?: MediaView;
  readonly received?: MediaView;
  readonly here?: boolean;
  readonly busy?: boolean;
  readonly startFails?: boolean;
  readonly clock?: FakeClock;
}

function instance(store: SessionSnapshotStore<AudioSnapshot>, self: string, o: Opts = {}) {
  const clock = o.clock ?? new FakeClock(10_000);
  const calls: string[] = [];
  const outcomes: AudioRecoveryOutcome[] = [];
  const recovery = createAudioRecovery({
    store,
    self,
    run: 'r-now',
    audio: {
      start: async (t, s, mode) => {
        calls.push(`${self} ${mode} ${t.channelId} from ${s.stream}`);
        if (o.startFails === true) throw new Error('device timeout');
        return { mode, sessionId: 'new', deviceId: t.deviceId, channelId: t.channelId, ssrc: '0100000002', mediaNodeId: s.mediaNodeId, deviceAudio: '127.0.0.1:40002', startedAt: clock.now() };
      },
      busy: () => o.busy ?? false,
    },
    stopSending: async (s, ssrc) => void calls.push(`${self} stop ${s.stream} ${ssrc}`),
    probe: async (_n, _app, stream) => (stream.startsWith('talk_') ? (o.received ?? { kind: 'present', readers: 1 }) : (o.source ?? { kind: 'present', readers: 0 })),
    stack: { restoreDialog: (state) => ({ callId: state.callId, destroy: async () => void calls.push(`${self} BYE ${state.callId} as ${state.role}`) }) as unknown as Dialog },
    flowOf: () => ((o.here ?? true) ? { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 5062, localAddress: '0.0.0.0', localPort: 5060 } : undefined),
    ownedHere: () => o.here ?? true,
    giveUpMs: 30_000,
    scanPeriodMs: 5000,
    lockTtlMs: 60_000,
    clock,
    log: pino({ level: 'silent' }),
    onOutcome: (x) => void outcomes.push(x),
  });
  recovery.setGoneHolders(['node-a']);
  return { recovery, calls, outcomes, clock };
}

const memory = () => createMemorySnapshotStore(new FakeClock(10_000), AUDIO_SNAPSHOT_CODEC);

describe('audio recovery (SPEC §11 for GB/T 28181 §9.12)', () => {
  it('a talk still wanted, device here: old dialog BYE (as UAS), old sending stopped, a new talk into the same source, entry ended', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const b = instance(store, 'node-b');
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, ['node-b BYE c1 as uas', 'node-b stop mic-1 0100000001', `node-b talk ${CH} from mic-1`]);
    assert.deepEqual(b.outcomes, [{ outcome: 'recovered' }]);
    assert.equal((await store.list('node-a', 10)).length, 0);
    assert.equal(await store.save(snap('c1'), 60_000), false, 'tombstoned: never brought back');
    await b.recovery.close();
  });

  it('two instances racing on the same index: exactly one re-establishes', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const b = instance(store, 'node-b');
    const c = instance(store, 'node-c');
    await Promise.all([b.recovery.scanNow(), c.recovery.scanNow()]);
    assert.equal([...b.calls, ...c.calls].filter((x) => x.includes(' talk ')).length, 1);
    await Promise.all([b.recovery.close(), c.recovery.close()]);
  });

  it('the operator’s source gone: released (BYE, sending stopped, entry ended), no new talk', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const b = instance(store, 'node-b', { source: { kind: 'absent' } });
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, ['node-b BYE c1 as uas', 'node-b stop mic-1 0100000001']);
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'operator source gone' }]);
    assert.equal((await store.list('node-a', 10)).length, 0);
    await b.recovery.close();
  });

  it('a broadcast is re-established as a broadcast; the talk stream is not asked about', async () => {
    const store = memory();
    const { receiveStreamId: _, ...rest } = snap('c1');
    await store.save({ ...rest, purpose: 'broadcast' }, 60_000);
    const b = instance(store, 'node-b', { received: { kind: 'unreachable' } });
    await b.recovery.scanNow();
    assert.deepEqual(b.calls.at(-1), `node-b broadcast ${CH} from mic-1`);
    await b.recovery.close();
  });

  it('the device not here: nothing touched; still away at give-up: released without a BYE (no flow), sending stopped', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const clock = new FakeClock(10_000);
    const b = instance(store, 'node-b', { here: false, clock });
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, []);
    assert.equal((await store.list('node-a', 10)).length, 1);
    clock.advance(30_000);
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, ['node-b stop mic-1 0100000001']);
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'not recovered in time' }]);
    assert.equal((await store.list('node-a', 10)).length, 0);
    await b.recovery.close();
  });

  it('the device does not answer the new Notify: tried again next scan, then released at give-up', async () => {
    const store = memory();
    await store.save(snap('c1'), 60_000);
    const clock = new FakeClock(10_000);
    const b = instance(store, 'node-b', { startFails: true, clock });
    const tries = (): number => b.calls.filter((x) => x.includes(' talk ')).length;
    await b.recovery.scanNow(); // (after the scan setGoneHolders started)
    const first = tries();
    assert.ok(first >= 1);
    assert.deepEqual(b.outcomes, []);
    assert.equal((await store.list('node-a', 10)).length, 1, 'kept for the next scan');
    await b.recovery.scanNow();
    assert.equal(tries(), first + 1, 'the lock was released for the next try');
    clock.advance(30_000);
    await b.recovery.scanNow();
    assert.deepEqual(b.outcomes, [{ outcome: 'released', reason: 'not recovered in time' }]);
    await b.recovery.close();
  });

  it('own entries of this run are live sessions, not orphans; a handed-off entry (another run) is recovered', async () => {
    const store = memory();
    await store.save(snap('mine', { holder: 'node-b', run: 'r-now' }), 60_000);
    await store.save(snap('handed', { holder: 'node-b', run: 'handed-off', previousHolder: 'node-a' }), 60_000);
    const b = instance(store, 'node-b');
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, ['node-b BYE handed as uas', 'node-b stop mic-1 0100000001', `node-b talk ${CH} from mic-1`]);
    assert.deepEqual((await store.list('node-b', 10)).map((e) => e.callId), ['mine']);
    await b.recovery.close();
  });

  it('an unreadable snapshot is forgotten (ended), nothing else done', async () => {
    const store = memory();
    await store.save(snap('c1', { ssrc: 'x; rm -rf' }), 60_000);
    const b = instance(store, 'node-b');
    await b.recovery.scanNow();
    assert.deepEqual(b.calls, []);
    assert.deepEqual(b.outcomes, [{ outcome: 'forgotten', reason: 'malformed' }]);
    assert.equal((await store.list('node-a', 10)).length, 0);
    await b.recovery.close();
  });
});

describe('audio snapshot format', () => {
  it('round-trips, and refuses hostile or broken input naming the field', () => {
    const s = snap('c1');
    assert.deepEqual(parseAudioSnapshot(serializeAudioSnapshot(s)), s);
    const bad = (over: Record<string, unknown>, field: RegExp) => assert.throws(() => parseAudioSnapshot(JSON.stringify({ ...s, ...over })), field);
    bad({ v: 2 }, /\bv\b/);
    bad({ purpose: 'live' }, /purpose/);
    bad({ channelId: '1 OR 1' }, /channelId/);
    bad({ receiveStreamId: 'talk_34020000001370000002' }, /receiveStreamId/);
    bad({ purpose: 'broadcast' }, /receiveStreamId/);
    bad({ source: { mediaNodeId: 'zlm-1', app: '../x', stream: 's' } }, /source.app/);
    bad({ deviceAudio: { host: '127.0.0.1', port: 0 } }, /deviceAudio.port/);
    bad({ dialog: { ...s.dialog, remotePort: 70_000 } }, /remotePort/);
    assert.throws(() => parseAudioSnapshot('{'), /not JSON/);
    assert.throws(() => parseAudioSnapshot('x'.repeat(20_000)), /longer/);
  });
});
