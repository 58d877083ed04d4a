import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideMedia, decideOrphan, type OrphanFacts } from './recovery-decision.ts';
import type { SessionSnapshot } from './session-snapshot.ts';

const snapshot = { purpose: 'live' } as SessionSnapshot;
const base: OrphanFacts = { now: 10_000, entry: { callId: 'c', state: 'ok', snapshot }, orphanSince: 9000, giveUpAfterMs: 30_000, ownedHere: true, reachable: true };

describe('decideOrphan', () => {
  it('forgets entries without a usable snapshot, whoever owns the device', () => {
    assert.deepEqual(decideOrphan({ ...base, entry: { callId: 'c', state: 'expired' } }), { kind: 'forget', reason: 'expired' });
    assert.deepEqual(decideOrphan({ ...base, entry: { callId: 'c', state: 'malformed', error: new Error('x') } }), { kind: 'forget', reason: 'malformed' });
  });

  it('recovers only when the device is owned here and its flow is known', () => {
    assert.equal(decideOrphan(base).kind, 'recover');
    assert.equal(decideOrphan({ ...base, reachable: false }).kind, 'wait');
    assert.equal(decideOrphan({ ...base, ownedHere: false }).kind, 'wait');
  });

  it('releases once the give-up time has passed without the device (exactly at the bound, not before)', () => {
    const away = { ...base, ownedHere: false, reachable: false };
    assert.equal(decideOrphan({ ...away, now: base.orphanSince + 29_999 }).kind, 'wait');
    assert.deepEqual(decideOrphan({ ...away, now: base.orphanSince + 30_000 }), { kind: 'release', reason: 'not recovered in time' });
    // a device here whose recovery kept failing is released at the same bound (it gets a BYE then)
    assert.deepEqual(decideOrphan({ ...base, now: base.orphanSince + 30_000 }), { kind: 'release', reason: 'not recovered in time' });
  });

  it('a device back in time is recovered even after a long wait of other entries (the clock is per entry)', () => {
    assert.equal(decideOrphan({ ...base, now: base.orphanSince + 29_000 }).kind, 'recover');
  });

  it('never resumes a download: it is released (its range would restart)', () => {
    assert.deepEqual(decideOrphan({ ...base, entry: { callId: 'c', state: 'ok', snapshot: { ...snapshot, purpose: 'download' } } }), { kind: 'release', reason: 'download not resumed' });
  });
});

describe('decideMedia', () => {
  it('re-INVITEs only a stream the media node still has with readers', () => {
    assert.deepEqual(decideMedia({ media: { kind: 'present', readers: 2 }, streamIdInUseHere: false }), { kind: 'reinvite' });
    assert.deepEqual(decideMedia({ media: { kind: 'present', readers: 0 }, streamIdInUseHere: false }), { kind: 'release', reason: 'no viewers' });
    assert.deepEqual(decideMedia({ media: { kind: 'absent' }, streamIdInUseHere: false }), { kind: 'release', reason: 'stream gone from the media node' });
  });

  it('retries when the media node cannot be asked', () => {
    assert.equal(decideMedia({ media: { kind: 'unreachable' }, streamIdInUseHere: false }).kind, 'retry');
  });

  it('a stream id already running here (a new play after the crash) wins over the snapshot', () => {
    assert.deepEqual(decideMedia({ media: { kind: 'present', readers: 3 }, streamIdInUseHere: true }), { kind: 'release', reason: 'stream taken over by a new play' });
  });
});
