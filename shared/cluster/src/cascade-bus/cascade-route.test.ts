import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { receivedAction, routeCascadeAction, type CascadeAction, type CascadeRouteContext } from './cascade-route.ts';

const owners: Record<string, string> = { 'cam-on-a': 'node-a', 'cam-on-b': 'node-b' };
const ctx = (selfId: string, leaderId: string | null): CascadeRouteContext => ({ selfId, leaderId, ownerOf: (d) => owners[d] ?? null });
const notify = (stage: CascadeAction['stage']): CascadeAction => ({ stage, kind: 'notify.catalog' });
const control = (stage: CascadeAction['stage'], targetDeviceId: string): CascadeAction => ({ stage, kind: 'control.upstream', targetDeviceId });

describe('routeCascadeAction (CASC-3, CASC-5)', () => {
  it('NOTIFY at the trigger: the leader sends it itself, any other instance publishes', () => {
    for (const kind of ['notify.catalog', 'notify.alarm', 'notify.mobilePosition', 'response.upstream'] as const) {
      assert.equal(routeCascadeAction({ stage: 'trigger', kind }, ctx('node-a', 'node-a')), 'local', kind);
      assert.equal(routeCascadeAction({ stage: 'trigger', kind }, ctx('node-b', 'node-a')), 'publish', kind);
    }
  });

  it('NOTIFY at receipt: only the current leader executes, the rest skip silently', () => {
    assert.equal(routeCascadeAction(notify('receipt'), ctx('node-a', 'node-a')), 'local');
    assert.equal(routeCascadeAction(notify('receipt'), ctx('node-b', 'node-a')), 'skip');
  });

  it('leadership judged at receipt: a leader change in flight is followed (the publisher itself may execute)', () => {
    // node-b published while node-a led; by the time it arrives node-b leads
    assert.equal(routeCascadeAction(notify('receipt'), ctx('node-b', 'node-b')), 'local');
    assert.equal(routeCascadeAction(notify('receipt'), ctx('node-a', 'node-b')), 'skip');
  });

  it('control at the trigger: the owner sends it, the leader that received it from upstream publishes', () => {
    assert.equal(routeCascadeAction(control('trigger', 'cam-on-a'), ctx('node-a', 'node-a')), 'local');
    assert.equal(routeCascadeAction(control('trigger', 'cam-on-b'), ctx('node-a', 'node-a')), 'publish');
  });

  it('control at receipt: only the owner executes, whoever leads', () => {
    assert.equal(routeCascadeAction(control('receipt', 'cam-on-b'), ctx('node-b', 'node-a')), 'local');
    assert.equal(routeCascadeAction(control('receipt', 'cam-on-b'), ctx('node-a', 'node-a')), 'skip');
    assert.equal(routeCascadeAction(control('receipt', 'cam-on-b'), ctx('node-c', 'node-a')), 'skip');
  });

  it('unknown leader or owner: the trigger publishes, receivers skip', () => {
    assert.equal(routeCascadeAction(notify('trigger'), ctx('node-a', null)), 'publish');
    assert.equal(routeCascadeAction(notify('receipt'), ctx('node-a', null)), 'skip');
    assert.equal(routeCascadeAction(control('trigger', 'cam-offline'), ctx('node-a', 'node-a')), 'publish');
    assert.equal(routeCascadeAction(control('receipt', 'cam-offline'), ctx('node-a', 'node-a')), 'skip');
  });

  it('single instance (leader = owner = self, ROUTE-8): always local, never published (CASC-5)', () => {
    const solo: CascadeRouteContext = { selfId: 'solo', leaderId: 'solo', ownerOf: () => 'solo' };
    for (const a of [notify('trigger'), control('trigger', 'cam-offline'), { stage: 'trigger', kind: 'notify.alarm' } as const]) {
      assert.equal(routeCascadeAction(a, solo), 'local');
    }
  });

  it('receivedAction maps a delivered event to its receipt-stage action', () => {
    const base = { v: 1, id: 'i', origin: 'o', at: 0 } as const;
    assert.deepEqual(receivedAction({ ...base, kind: 'control.upstream', payload: { platformId: 'p', targetDeviceId: 'cam', request: 'QQ==' } }), {
      stage: 'receipt',
      kind: 'control.upstream',
      targetDeviceId: 'cam',
    });
    assert.deepEqual(receivedAction({ ...base, kind: 'notify.alarm', payload: { deviceId: 'd', alarm: { deviceId: 'd', alarmPriority: '1', alarmMethod: '2' } } }), {
      stage: 'receipt',
      kind: 'notify.alarm',
    });
  });
});
