import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyInbound, resolveForward, resolveOwner } from './route-decision.ts';

describe('classifyInbound (ROUTE-3, ROUTE-6)', () => {
  it('no marker: a direct request, whatever else it carries', () => {
    assert.equal(classifyInbound(undefined, undefined, 's'), 'direct');
    assert.equal(classifyInbound(undefined, 'junk', 's'), 'direct');
    assert.equal(classifyInbound(undefined, undefined, null), 'direct');
  });

  it('marker with the right secret: forwarded (runs locally, never routed again)', () => {
    assert.equal(classifyInbound('node-b', 's3cret', 's3cret'), 'forwarded');
  });

  it('marker with a wrong, missing or repeated secret, or no secret configured: forged', () => {
    assert.equal(classifyInbound('node-b', 'wrong', 's3cret'), 'forged');
    assert.equal(classifyInbound('node-b', undefined, 's3cret'), 'forged');
    assert.equal(classifyInbound('', '', 's3cret'), 'forged');
    assert.equal(classifyInbound('node-b', ['s3cret', 's3cret'], 's3cret'), 'forged');
    assert.equal(classifyInbound(['node-b', 'node-c'], 's3cret', 's3cret'), 'forged');
    assert.equal(classifyInbound('node-b', 's3cret', null), 'forged', 'no secret: the channel is closed both ways');
  });
});

describe('resolveOwner (ROUTE-2, ROUTE-6, FAIL-3)', () => {
  const owner = (node: string) => ({ kind: 'owner', node }) as const;

  it('self → local; other → remote; none → device offline', () => {
    assert.deepEqual(resolveOwner('node-a', owner('node-a'), true), { action: 'local' });
    assert.deepEqual(resolveOwner('node-a', owner('node-b'), true), { action: 'remote', owner: 'node-b' });
    assert.deepEqual(resolveOwner('node-a', { kind: 'none' }, true), { action: 'fail', failure: 'device-offline', owner: null });
  });

  it('no secret: devices owned elsewhere are refused, own devices unaffected', () => {
    assert.deepEqual(resolveOwner('node-a', owner('node-b'), false), { action: 'fail', failure: 'forwarding-disabled', owner: 'node-b' });
    assert.deepEqual(resolveOwner('node-a', owner('node-a'), false), { action: 'local' });
    assert.deepEqual(resolveOwner('node-a', { kind: 'none' }, false), { action: 'fail', failure: 'device-offline', owner: null });
  });

  it('store unreachable: own devices run locally, the rest are offline', () => {
    assert.deepEqual(resolveOwner('node-a', { kind: 'unavailable', locallyOwned: true }, true), { action: 'local' });
    assert.deepEqual(resolveOwner('node-a', { kind: 'unavailable', locallyOwned: false }, true), {
      action: 'fail',
      failure: 'device-offline',
      owner: null,
    });
  });

  it('node codes are compared exactly (case-sensitive)', () => {
    assert.deepEqual(resolveOwner('node-a', owner('Node-a'), true), { action: 'remote', owner: 'Node-a' });
  });
});

describe('resolveForward (ROUTE-5)', () => {
  it('forwards only to an owner node that is online', () => {
    assert.deepEqual(resolveForward('node-b', { kind: 'online', baseUrl: 'http://b' }), { action: 'forward', owner: 'node-b', baseUrl: 'http://b' });
    assert.deepEqual(resolveForward('node-b', { kind: 'offline' }), { action: 'fail', failure: 'owner-node-offline', owner: 'node-b' });
    assert.deepEqual(resolveForward('node-b', { kind: 'unknown' }), { action: 'fail', failure: 'owner-node-offline', owner: 'node-b' });
  });
});
