import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideAudioMedia, type AudioMediaFacts } from './audio-decision.ts';
import { decideOrphan } from './recovery-decision.ts';
import type { AudioSnapshot } from './audio-snapshot.ts';

const present = (readers: number) => ({ kind: 'present', readers }) as const;
const talk: AudioMediaFacts = { purpose: 'talk', source: present(0), received: present(1), channelBusyHere: false };
const broadcast: AudioMediaFacts = { purpose: 'broadcast', source: present(0), received: { kind: 'absent' }, channelBusyHere: false };

describe('decideAudioMedia (what "still has viewers" means for audio)', () => {
  it('talk: re-established while the operator pushes the source and someone plays the device’s audio, or that stream is gone (no evidence)', () => {
    assert.deepEqual(decideAudioMedia(talk), { kind: 'reestablish' });
    assert.deepEqual(decideAudioMedia({ ...talk, received: { kind: 'absent' } }), { kind: 'reestablish' });
  });

  it('talk: the device’s audio present with no reader: the operator stopped listening — released', () => {
    assert.deepEqual(decideAudioMedia({ ...talk, received: present(0) }), { kind: 'release', reason: 'nobody listens to the device' });
  });

  it('the operator’s source gone (talk or broadcast): released — readers of the device’s audio do not keep it', () => {
    assert.deepEqual(decideAudioMedia({ ...talk, source: { kind: 'absent' }, received: present(3) }), { kind: 'release', reason: 'operator source gone' });
    assert.deepEqual(decideAudioMedia({ ...broadcast, source: { kind: 'absent' } }), { kind: 'release', reason: 'operator source gone' });
  });

  it('broadcast: only the source counts (a broadcast receives nothing)', () => {
    assert.deepEqual(decideAudioMedia(broadcast), { kind: 'reestablish' });
    assert.deepEqual(decideAudioMedia({ ...broadcast, received: present(0) }), { kind: 'reestablish' });
    assert.deepEqual(decideAudioMedia({ ...broadcast, received: { kind: 'unreachable' } }), { kind: 'reestablish' });
  });

  it('an unreachable media node is asked again (never released for it), unless the channel is taken here', () => {
    assert.deepEqual(decideAudioMedia({ ...talk, source: { kind: 'unreachable' } }), { kind: 'retry', reason: 'media node unreachable' });
    assert.deepEqual(decideAudioMedia({ ...talk, received: { kind: 'unreachable' } }), { kind: 'retry', reason: 'media node unreachable' });
    assert.deepEqual(decideAudioMedia({ ...talk, source: { kind: 'unreachable' }, channelBusyHere: true }), { kind: 'release', reason: 'channel taken by a new audio session' });
  });

  it('a new audio session on the channel here supersedes the orphan', () => {
    assert.deepEqual(decideAudioMedia({ ...talk, channelBusyHere: true }), { kind: 'release', reason: 'channel taken by a new audio session' });
  });
});

describe('decideOrphan on audio snapshots', () => {
  const snapshot = { purpose: 'talk' } as AudioSnapshot;
  const base = { now: 10_000, entry: { callId: 'c', state: 'ok', snapshot } as const, orphanSince: 9000, giveUpAfterMs: 30_000, ownedHere: true, reachable: true };
  it('recovers a talk whose device is here, waits otherwise, releases at give-up', () => {
    assert.equal(decideOrphan(base).kind, 'recover');
    assert.equal(decideOrphan({ ...base, reachable: false }).kind, 'wait');
    assert.deepEqual(decideOrphan({ ...base, ownedHere: false, now: 39_000 }), { kind: 'release', reason: 'not recovered in time' });
  });
});
