// The glue of upstream failover (upstream-failover.ts): only upstream platforms' changes make the choice
// again, one re-choice at a time with the changes meanwhile folded into one more; registration outcomes as
// business results. The failover itself against SIPp: test/integration/upstream-failover.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { followUpstreamHealth, registrationOutcome } from './upstream-failover.ts';

type Listener = (id: string, from: 'active' | 'probing' | 'inactive', to: 'active' | 'probing' | 'inactive') => void;

describe('upstream failover glue', () => {
  it('re-chooses on a platform change only, one at a time, folding changes that arrive meanwhile', async () => {
    let listener: Listener | undefined;
    let calls = 0;
    let release: (() => void) | undefined;
    const stop = followUpstreamHealth({
      onChange: (l) => {
        listener = l;
        return () => (listener = undefined);
      },
      isPlatform: (id) => id.startsWith('3401'),
      reconcile: () => {
        calls++;
        return new Promise<void>((r) => (release = r));
      },
      log: pino({ level: 'silent' }),
    });
    listener!('zlm-a', 'active', 'inactive');
    assert.equal(calls, 0, 'not a platform');
    listener!('34010000002000000001', 'active', 'inactive');
    listener!('34010000002000000002', 'active', 'inactive');
    listener!('34010000002000000001', 'inactive', 'probing');
    assert.equal(calls, 1, 'one at a time');
    release!();
    await new Promise((r) => setImmediate(r));
    assert.equal(calls, 2, 'the changes meanwhile: one more');
    release!();
    await new Promise((r) => setImmediate(r));
    assert.equal(calls, 2);
    stop();
    assert.equal(listener, undefined, 'stopped');
  });

  it('a registration is a business success, a failed REGISTER or an offline platform a failure', () => {
    assert.equal(registrationOutcome({ type: 'registered', expiresS: 3600, refresh: false }), true);
    assert.equal(registrationOutcome({ type: 'registered', expiresS: 3600, refresh: true }), undefined);
    assert.equal(registrationOutcome({ type: 'register-failed', status: 503, attempt: 1, retryInMs: 1000 }), false);
    assert.equal(registrationOutcome({ type: 'offline', reason: 'keepalive' }), false);
    assert.equal(registrationOutcome({ type: 'keepalive-failed', status: null, consecutive: 1 }), undefined);
  });
});
