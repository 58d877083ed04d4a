// Destination health: consecutive thresholds on probes, business failures on the same state, manual
// override that probing never undoes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveState, initialHealth, stepHealth, type DestinationHealth, type HealthEvent } from '../src/index.ts';

const probe = (ok: boolean): HealthEvent => ({ kind: 'probe', ok });
const business = (ok: boolean): HealthEvent => ({ kind: 'business', ok });
const run = (events: HealthEvent[], start: DestinationHealth = initialHealth(0)): { states: string[]; last: DestinationHealth } => {
  let h = start;
  const states: string[] = [];
  events.forEach((e, i) => {
    h = stepHealth(h, e, (i + 1) * 1000);
    states.push(effectiveState(h));
  });
  return { states, last: h };
};

describe('destination health', () => {
  it('three consecutive probe failures take it out; a success in between resets the count', () => {
    assert.deepEqual(run([probe(false), probe(false), probe(true), probe(false), probe(false), probe(false)]).states, [
      'active',
      'active',
      'active',
      'active',
      'active',
      'inactive',
    ]);
  });

  it('comes back through probing: one success → probing, two in a row → active; a failure while probing → inactive', () => {
    const out = run([probe(false), probe(false), probe(false), probe(true), probe(false), probe(true), probe(true)]);
    assert.deepEqual(out.states, ['active', 'active', 'inactive', 'probing', 'inactive', 'probing', 'active']);
    assert.equal(out.last.since, 7000, 'since = when the state last changed');
  });

  it('business failures count against the same state (5 in a row), reset by a business success', () => {
    const four = [business(false), business(false), business(false), business(false)];
    assert.equal(run([...four, business(true), ...four]).states.at(-1), 'active');
    const out = run([...four, business(false), probe(true), probe(true)]);
    assert.deepEqual(out.states.slice(3), ['active', 'inactive', 'probing', 'active'], 'probes bring it back');
  });

  it('a manual disable holds whatever the probes say, until a manual auto', () => {
    const out = run([{ kind: 'manual', action: 'disabled' }, probe(true), probe(true), probe(true)]);
    assert.deepEqual(out.states, ['inactive', 'inactive', 'inactive', 'inactive']);
    assert.equal(out.last.auto, 'active', 'the probed state is still tracked underneath');
    assert.equal(effectiveState(stepHealth(out.last, { kind: 'manual', action: 'auto' }, 9)), 'active');
  });

  it('a manual enable holds through failing probes', () => {
    const out = run([{ kind: 'manual', action: 'enabled' }, probe(false), probe(false), probe(false), business(false)]);
    assert.deepEqual(out.states, ['active', 'active', 'active', 'active', 'active']);
    assert.equal(out.last.auto, 'inactive');
    assert.equal(effectiveState(stepHealth(out.last, { kind: 'manual', action: 'auto' }, 9)), 'inactive');
  });
});
