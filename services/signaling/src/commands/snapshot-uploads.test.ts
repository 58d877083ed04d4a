// The bounds of snapshot uploads (SPEC SEC-3): a token takes at most the pictures asked for, not after
// its window, not after the finishing Notify; past `maxPending` requests the oldest loses its slot.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSnapshotUploads } from './snapshot-uploads.ts';

const slot = (token: string, expected: number, expiresAt: number) => ({ token, deviceId: '34020000001320000001', channelId: '34020000001310000001', expected, expiresAt });

describe('snapshot uploads', () => {
  it('accepts exactly the pictures asked for, then refuses', () => {
    const u = createSnapshotUploads();
    u.open(slot('a', 2, 10_000));
    assert.equal(u.claim('a', 1000)?.received, 1);
    assert.equal(u.claim('a', 1000)?.received, 2);
    assert.equal(u.claim('a', 1000), null);
    assert.equal(u.claim('unknown', 1000), null);
  });

  it('refuses after the window and after UploadSnapShotFinished', () => {
    const u = createSnapshotUploads();
    u.open(slot('late', 5, 2000));
    assert.equal(u.claim('late', 2000), null, 'expired at its deadline');
    assert.equal(u.size, 0, 'and forgotten');
    u.open(slot('done', 5, 10_000));
    assert.equal(u.finish('done')?.token, 'done');
    assert.equal(u.claim('done', 1000), null);
  });

  it('keeps at most maxPending requests, dropping the oldest', () => {
    const u = createSnapshotUploads(2);
    u.open(slot('1', 1, 10_000));
    u.open(slot('2', 1, 10_000));
    u.open(slot('3', 1, 10_000));
    assert.equal(u.size, 2);
    assert.equal(u.claim('1', 0), null);
    assert.notEqual(u.claim('3', 0), null);
  });
});
