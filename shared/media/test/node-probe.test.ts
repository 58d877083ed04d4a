// Probe planning and verdicts (pure): which nodes the loop calls, what counts as a failed probe, and
// how verdicts drive NodeHealthTracker through active → probing → inactive → active.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodeHealthTracker, ZlmCallError, judgeProbe, probeTargets, type HealthPolicy } from '../src/index.ts';

const POLICY: HealthPolicy = { staleAfterMs: 2000, failureThreshold: 2, probeAfterMs: 1000 };

describe('probeTargets', () => {
  const nodes = [
    { id: 'a', enabled: true },
    { id: 'b', enabled: false },
    { id: 'c', enabled: true },
    { id: 'd', enabled: true },
  ];

  it('enabled nodes that are due and not already being probed', () => {
    assert.deepEqual(probeTargets(nodes, (id) => id !== 'd', new Set(['c'])), ['a']);
    assert.deepEqual(probeTargets(nodes, () => true, new Set()), ['a', 'c', 'd']);
    assert.deepEqual(probeTargets([], () => true, new Set()), []);
  });

  it('with the tracker: unknown nodes are due; a node kept alive by keepalives is not', () => {
    let now = 0;
    const t = new NodeHealthTracker({ now: () => now }, POLICY);
    t.keepalive('a', 0);
    assert.deepEqual(probeTargets(nodes, (id) => t.dueForProbe(id), new Set()), ['c', 'd']);
    now = 1000;
    assert.deepEqual(probeTargets(nodes, (id) => t.dueForProbe(id), new Set()), ['a', 'c', 'd'], 'keepalive overdue');
  });
});

describe('judgeProbe', () => {
  it('a configuration naming this node (or none) is a success', () => {
    assert.deepEqual(judgeProbe('zlm-a', { config: { 'general.mediaServerId': 'zlm-a', 'http.port': '80' } }), { ok: true });
    assert.deepEqual(judgeProbe('zlm-a', { config: {} }), { ok: true });
  });

  it('another node behind the URL, a client error or anything thrown is a failure with a reason', () => {
    assert.deepEqual(judgeProbe('zlm-a', { config: { 'general.mediaServerId': 'zlm-b' } }), { ok: false, reason: 'answered as media node "zlm-b"' });
    const refused = new ZlmCallError('MEDIA_ERR_UNREACHABLE', 'zlm-a getServerConfig: unreachable', { nodeId: 'zlm-a', api: 'getServerConfig' });
    assert.deepEqual(judgeProbe('zlm-a', { error: refused }), { ok: false, reason: 'MEDIA_ERR_UNREACHABLE' });
    const badSecret = new ZlmCallError('MEDIA_ERR_API', 'code -100', { nodeId: 'zlm-a', api: 'getServerConfig', zlmCode: -100 });
    assert.deepEqual(judgeProbe('zlm-a', { error: badSecret }), { ok: false, reason: 'MEDIA_ERR_API' });
    assert.deepEqual(judgeProbe('zlm-a', { error: new TypeError('x is undefined') }), { ok: false, reason: 'unexpected error' });
    assert.deepEqual(judgeProbe('zlm-a', { error: undefined }), { ok: false, reason: 'unexpected error' });
  });

  it('verdicts drive the tracker: failures → probing → inactive; one success → active again', () => {
    let now = 0;
    const t = new NodeHealthTracker({ now: () => now }, POLICY);
    const feed = (v: ReturnType<typeof judgeProbe>): string => (t.result('a', v.ok), t.state('a'));
    assert.equal(feed(judgeProbe('a', { config: {} })), 'active');
    now = 1000;
    const down = judgeProbe('a', { error: new ZlmCallError('MEDIA_ERR_TIMEOUT', 't', { nodeId: 'a', api: 'getServerConfig' }) });
    assert.equal(feed(down), 'probing');
    assert.equal(feed(down), 'inactive');
    assert.equal(t.dueForProbe('a'), true, 'an inactive node keeps being probed');
    assert.equal(feed(judgeProbe('a', { config: { 'general.mediaServerId': 'a' } })), 'active');
  });
});
