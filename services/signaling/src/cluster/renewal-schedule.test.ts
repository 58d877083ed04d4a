import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../core/clock.ts';
import { batchFull, leaseAfterFailedBatch, seenAction, type RenewalPolicy } from './renewal-schedule.ts';

// the defaults: TTL = 60 s × 3 + 30 s, vms.cluster.owner-renew-after 0.4, renewals batched
const TTL = 210_000;
const DEFAULTS: RenewalPolicy = { ttlMs: TTL, renewAfterMs: 0.4 * TTL, batching: true };

describe('renewal schedule (OWN-1, OWN-4, OWN-5; issue 11)', () => {
  it('a claim written less than renewAfterMs ago is skipped; from then on a message renews it in a batch', () => {
    const clock = new FakeClock(1_000_000);
    const lease = clock.now() + TTL; // written now
    clock.advance(84_000 - 1);
    assert.equal(seenAction(DEFAULTS, clock.now(), lease, false, false), 'skip');
    clock.advance(1);
    assert.equal(seenAction(DEFAULTS, clock.now(), lease, false, false), 'batch');
    clock.advance(TTL - 84_000 - 1);
    assert.equal(seenAction(DEFAULTS, clock.now(), lease, false, false), 'batch', 'still leased: renewed');
    clock.advance(1);
    assert.equal(seenAction(DEFAULTS, clock.now(), lease, false, false), 'batch', 'lapsed: written back if vacant, in a batch');
    assert.equal(seenAction(DEFAULTS, clock.now(), undefined, false, false), 'batch', 'no lease: the same');
  });

  it('a REGISTER always writes at once, and so does every message while writes fail (OWN-4, FAIL-3)', () => {
    const now = 1_000_000;
    const fresh = now + TTL;
    assert.equal(seenAction(DEFAULTS, now, fresh, true, false), 'write');
    assert.equal(seenAction(DEFAULTS, now, fresh, false, true), 'write');
    assert.equal(seenAction(DEFAULTS, now, undefined, false, true), 'write');
  });

  it('without batching a due renewal is a claim written at once; renewAfterMs 0 writes on every message', () => {
    const now = 1_000_000;
    assert.equal(seenAction({ ...DEFAULTS, batching: false }, now + 84_000, now + TTL, false, false), 'write');
    assert.equal(seenAction({ ...DEFAULTS, batching: false }, now + 1000, now + TTL, false, false), 'skip');
    assert.equal(seenAction({ ...DEFAULTS, renewAfterMs: 0 }, now, now + TTL, false, false), 'batch');
  });

  it('at one keepalive a minute every other keepalive renews, and a claim written on time never lapses', () => {
    const clock = new FakeClock(0);
    let lease: number | undefined;
    const renewedAt: number[] = [];
    for (let k = 0; k < 30; k++) {
      const action = seenAction(DEFAULTS, clock.now(), lease, k === 0, false);
      if (action !== 'skip') {
        assert.ok(lease === undefined || lease > clock.now(), `the claim was still live when renewed (keepalive ${k})`);
        renewedAt.push(k);
        lease = clock.now() + 1000 + TTL; // written by the batch, up to a second later
      }
      clock.advance(60_000);
    }
    assert.deepEqual(renewedAt, Array.from({ length: 15 }, (_, i) => 2 * i));
  });

  it('a batch goes when it fills one store command', () => {
    assert.equal(batchFull(499, 500), false);
    assert.equal(batchFull(500, 500), true);
    assert.equal(batchFull(1, 1), true);
  });

  it('a failed batch gives each lease back its previous expiry, unless a write since set another', () => {
    const sent = 2_000_000;
    assert.equal(leaseAfterFailedBatch(sent, sent, 1_500_000), 1_500_000, 'back to the last write known');
    assert.equal(leaseAfterFailedBatch(sent, sent, undefined), undefined, 'no lease before: none now');
    assert.equal(leaseAfterFailedBatch(sent + 5, sent, 1_500_000), sent + 5, 'written again meanwhile: kept');
    assert.equal(leaseAfterFailedBatch(undefined, sent, 1_500_000), undefined, 'released or moved meanwhile: stays dropped');
  });
});
