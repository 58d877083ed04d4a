// Media node choice through a published routing table: rules on the channel code take over where they
// match; elsewhere the built-in table (least load, sticky, weight) still decides.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileTable, type RoutingTable } from '@vms/routing';
import { createRoutingMediaSelector, type MediaCandidate, type MediaNode } from '../src/index.ts';

const node = (id: string, over: Partial<MediaNode> = {}): MediaNode => ({
  id,
  apiBaseUrl: `http://${id}:80`,
  secret: 's',
  rtpPortRange: { min: 30000, max: 30500 },
  sdpIp: '10.0.0.1',
  streamIp: '10.0.0.1',
  hookBaseUrl: '',
  enabled: true,
  weight: 1,
  httpPort: 80,
  rtspPort: 554,
  rtmpPort: 1935,
  ...over,
});
const c = (n: MediaNode, streams: number): MediaCandidate => ({ node: n, state: 'active', streams });

function published(): RoutingTable {
  const r = compileTable({
    version: 7,
    timeZone: 'Asia/Shanghai',
    destinations: ['a', 'b', 'ghost'].map((id) => ({ id, kind: 'media' as const, address: id })),
    sets: [{ id: 'east', algorithm: 'priority', members: [{ destinationId: 'ghost', weight: 1, priority: 0 }, { destinationId: 'b', weight: 1, priority: 1 }, { destinationId: 'a', weight: 1, priority: 2 }] }],
    rules: [{ id: 3, group: 'media', field: 'device', prefix: '3402', priority: 0, setId: 'east' }],
  });
  assert.ok(r.ok);
  return r.table;
}

describe('routing media selector with a published table', () => {
  const table = published();
  const selector = createRoutingMediaSelector({ published: () => table, now: () => 0 });
  const candidates = [c(node('a'), 0), c(node('b'), 50)];

  it('a matching rule decides (priority: b before a; the unknown node "ghost" counts as inactive)', () => {
    const d = selector.decide({ channelId: '34020000001320000001', purpose: 'live', candidates });
    assert.deepEqual([d.destination?.id, d.ruleId, d.version, d.algorithm], ['b', 3, 7, 'priority']);
    assert.equal(selector.select({ channelId: '34020000001320000001', purpose: 'live', candidates, exclude: ['b'] }).id, 'a');
  });

  it('a channel no rule matches falls back to the built-in least-load table', () => {
    const d = selector.decide({ channelId: '44010000001320000001', purpose: 'live', candidates });
    assert.deepEqual([d.destination?.id, d.version, d.algorithm], ['a', 0, 'least-load']);
  });

  it('a disabled node is never chosen, even when a rule names it', () => {
    const withDisabled = [c(node('a'), 0), c(node('b', { enabled: false }), 0)];
    assert.equal(selector.select({ channelId: '34020000001320000001', purpose: 'live', candidates: withDisabled }).id, 'a');
  });

  it('shadow mode: the candidate table decides beside the live one without acting', () => {
    const pairs: [string | undefined, string | undefined][] = [];
    const shadowed = createRoutingMediaSelector({ published: () => undefined, shadow: () => table, onShadow: (_r, live, shadow) => void pairs.push([live.destination?.id, shadow.destination?.id]), now: () => 0 });
    assert.equal(shadowed.select({ channelId: '34020000001320000001', purpose: 'live', candidates }).id, 'a', 'the live (built-in) choice acts');
    assert.deepEqual(pairs, [['a', 'b']]);
  });
});
