import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatementGate } from './mysql-gate.ts';

describe('MySQL statement gate (SEC-3)', () => {
  it('healthy: every statement goes', () => {
    const g = new StatementGate(2500);
    assert.deepEqual([g.admit(0), g.admit(1), g.admit(2)], ['go', 'go', 'go']);
    assert.equal(g.suspect, false);
  });

  it('after a timeout: one probe at a time, the rest refused at once, for one window', () => {
    const g = new StatementGate(2500);
    g.timedOut(1000, 'go');
    assert.equal(g.admit(1100), 'probe');
    assert.equal(g.admit(1200), 'refuse', 'a second read of the same request does not wait again');
    g.timedOut(3600, 'probe');
    assert.equal(g.admit(3700), 'probe');
    g.answered('probe');
    assert.deepEqual([g.admit(3800), g.admit(3800)], ['go', 'go'], 'the server answered: open again');
    assert.equal(g.suspect, false);
  });

  it('a window that passed without a probe lets statements go again (and re-arms on their timeout)', () => {
    const g = new StatementGate(2500);
    g.timedOut(0, 'go');
    assert.equal(g.admit(2500), 'go');
    g.timedOut(5000, 'go');
    assert.equal(g.admit(5001), 'probe');
  });
});
