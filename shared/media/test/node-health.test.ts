// Health transitions (active / probing / inactive) with a hand-driven clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodeHealthTracker, UNKNOWN_HEALTH, healthState, recordFailure, type HealthPolicy } from '../src/index.ts';

const policy: HealthPolicy = { staleAfterMs: 30_000, failureThreshold: 3, probeAfterMs: 15_000 };

function setup(): { t: NodeHealthTracker; clock: { now(): number; advance(ms: number): void } } {
  let now = 1_000_000;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  return { t: new NodeHealthTracker(clock, policy), clock };
}

describe('node health', () => {
  it('an unknown node is probing and due for a probe', () => {
    const { t } = setup();
    assert.equal(t.state('zlm-a'), 'probing');
    assert.equal(t.dueForProbe('zlm-a'), true);
  });

  it('a keepalive makes it active and records the reported stream count', () => {
    const { t } = setup();
    t.keepalive('zlm-a', 4);
    assert.equal(t.state('zlm-a'), 'active');
    assert.equal(t.get('zlm-a').reportedStreams, 4);
    assert.equal(t.dueForProbe('zlm-a'), false);
    t.keepalive('zlm-a', undefined);
    assert.equal(t.get('zlm-a').reportedStreams, 4, 'a keepalive without stats keeps the last count');
  });

  it('silence: due for a probe after probeAfterMs, probing after staleAfterMs', () => {
    const { t, clock } = setup();
    t.keepalive('zlm-a', 0);
    clock.advance(15_000);
    assert.deepEqual([t.state('zlm-a'), t.dueForProbe('zlm-a')], ['active', true]);
    clock.advance(15_000);
    assert.equal(t.state('zlm-a'), 'active', 'exactly staleAfterMs is still fresh');
    clock.advance(1);
    assert.equal(t.state('zlm-a'), 'probing');
    t.result('zlm-a', true);
    assert.equal(t.state('zlm-a'), 'active', 'a successful probe confirms it again');
  });

  it('consecutive failures: probing below the threshold, inactive at it; one success recovers', () => {
    const { t, clock } = setup();
    t.keepalive('zlm-a', 1);
    t.result('zlm-a', false);
    assert.equal(t.state('zlm-a'), 'probing');
    t.result('zlm-a', false);
    assert.equal(t.state('zlm-a'), 'probing');
    t.result('zlm-a', false);
    assert.equal(t.state('zlm-a'), 'inactive');
    clock.advance(60_000);
    assert.equal(t.state('zlm-a'), 'inactive', 'time alone does not revive it');
    t.keepalive('zlm-a', 0);
    assert.deepEqual([t.state('zlm-a'), t.get('zlm-a').consecutiveFailures], ['active', 0]);
  });

  it('a success in between resets the failure count', () => {
    const { t } = setup();
    t.result('zlm-a', false);
    t.result('zlm-a', false);
    t.result('zlm-a', true);
    t.result('zlm-a', false);
    t.result('zlm-a', false);
    assert.equal(t.state('zlm-a'), 'probing');
  });

  it('forget drops the node back to unknown; pure functions do not mutate', () => {
    const { t } = setup();
    t.keepalive('zlm-a', 1);
    t.forget('zlm-a');
    assert.equal(t.get('zlm-a'), UNKNOWN_HEALTH);
    const next = recordFailure(UNKNOWN_HEALTH, 5, policy);
    assert.equal(UNKNOWN_HEALTH.consecutiveFailures, 0);
    assert.equal(healthState(next, 5, policy), 'probing');
  });
});
