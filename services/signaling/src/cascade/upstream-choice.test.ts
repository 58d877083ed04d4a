// Upstream platform choice through the routing engine (SPEC §10): a redundancy group in the routing table
// registers only its choice (priority + failover), platforms outside any group are all registered.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { upstreamPlatform, type UpstreamPlatform } from '@vms/cascade';
import { compileTable, type DestinationState, type RoutingTable } from '@vms/routing';
import { chooseUpstreams, UPSTREAM_ROUTING_GROUP } from './upstream-choice.ts';

const P = (serverId: string): UpstreamPlatform => upstreamPlatform({ serverId, host: '10.0.0.1', port: 5060, localId: '34020000002000000001' });
// two provincial platforms for redundancy (3401…), one city platform (3402…) alone
const primary = P('34010000002000000001');
const backup = P('34010000002000000002');
const city = P('34020000002000000009');
const enabled = [primary, backup, city];

function table(algorithm: 'priority' | 'hash-to' = 'priority'): RoutingTable {
  const r = compileTable({
    version: 1,
    timeZone: 'Asia/Shanghai',
    destinations: [primary, backup].map((p) => ({ id: p.serverId, kind: 'sip' as const, address: `sip:${p.host}:${p.port}` })),
    sets: [{ id: 'province', algorithm, members: [{ destinationId: primary.serverId, weight: 1, priority: 0 }, { destinationId: backup.serverId, weight: 1, priority: 1 }] }],
    rules: [{ id: 1, group: UPSTREAM_ROUTING_GROUP, field: 'callee', prefix: '3401', priority: 0, setId: 'province' }],
  });
  assert.ok(r.ok);
  return r.table;
}
const ids = (ps: UpstreamPlatform[]): string[] => ps.map((p) => p.serverId);
const states = (s: Record<string, DestinationState>) => (id: string): DestinationState => s[id] ?? 'active';

describe('upstream platform choice', () => {
  it('without a published table every enabled platform is registered (as before the engine)', () => {
    assert.deepEqual(ids(chooseUpstreams(enabled, undefined, states({}), 0)), ids(enabled));
  });

  it('a redundancy group registers its primary only; a platform outside any group is registered', () => {
    assert.deepEqual(ids(chooseUpstreams(enabled, table(), states({}), 0)), [primary.serverId, city.serverId]);
  });

  it('the primary down (probed inactive): the backup is chosen; back up, the primary again', () => {
    assert.deepEqual(ids(chooseUpstreams(enabled, table(), states({ [primary.serverId]: 'inactive' }), 0)), [backup.serverId, city.serverId]);
    assert.deepEqual(ids(chooseUpstreams(enabled, table(), states({ [primary.serverId]: 'probing' }), 0)), [backup.serverId, city.serverId], 'probing is a last resort');
    assert.deepEqual(ids(chooseUpstreams(enabled, table(), states({}), 0)), [primary.serverId, city.serverId]);
  });

  it('the primary disabled in the platform list: the backup takes over', () => {
    assert.deepEqual(ids(chooseUpstreams([backup, city], table(), states({}), 0)), [backup.serverId, city.serverId]);
  });

  it('every member down: none of the group is registered (never a dead one), the rest are', () => {
    const down = states({ [primary.serverId]: 'inactive', [backup.serverId]: 'inactive' });
    assert.deepEqual(ids(chooseUpstreams(enabled, table(), down, 0)), [city.serverId]);
  });

  it('one choice per group whatever the algorithm (a hash picks one member for the group, not one per platform)', () => {
    const chosen = chooseUpstreams([primary, backup], table('hash-to'), states({}), 0);
    assert.equal(chosen.length <= 1, true, JSON.stringify(ids(chosen)));
  });
});
