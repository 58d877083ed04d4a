// Which upstream platforms to register with (SPEC §10 "upstream platform choice where several are
// configured for the same purpose"). The redundancy group lives in the routing table, not in the platform
// records: a published table's rules of group 'upstream', matched on the platform's server id (field
// 'callee', longest prefix), name a set whose destinations are platform server ids. Of such a set only the
// engine's choice is registered (the set's algorithm; 'priority' — the primary, then the next on failure —
// is what an operator normally writes). A platform no 'upstream' rule matches is registered as before.
// Pure: the table, the destination states (routing health: SIP OPTIONS probes of the platforms) and the
// time come in.
import type { UpstreamPlatform } from '@vms/cascade';
import type { DestinationState, RoutingTable } from '@vms/routing';

export const UPSTREAM_ROUTING_GROUP = 'upstream';

export function chooseUpstreams(
  enabled: readonly UpstreamPlatform[],
  table: RoutingTable | undefined,
  state: (serverId: string) => DestinationState,
  now: number,
): UpstreamPlatform[] {
  if (table === undefined) return [...enabled];
  const ids = new Set(enabled.map((p) => p.serverId));
  // a member that is not an enabled platform is never chosen
  const usable = (id: string): DestinationState => (ids.has(id) ? state(id) : 'inactive');
  // Platforms by the rule that matches them (one rule = one group); no rule: not in a group, kept.
  const groups = new Map<number, UpstreamPlatform[]>();
  const kept = new Set<UpstreamPlatform>();
  for (const p of enabled) {
    const m = table.matchRule({ group: UPSTREAM_ROUTING_GROUP, callee: p.serverId, now });
    if (m === undefined) kept.add(p);
    else groups.set(m.rule, [...(groups.get(m.rule) ?? []), p]);
  }
  // One decision per group, with one key for every hashed algorithm: the group's choice does not depend on
  // which member asks.
  for (const members of groups.values()) {
    const key = UPSTREAM_ROUTING_GROUP;
    const d = table.decide({ group: UPSTREAM_ROUTING_GROUP, callee: members[0]!.serverId, to: key, from: key, callId: key, now }, { state: usable });
    for (const p of members) if (p.serverId === d.destination?.id) kept.add(p);
  }
  return enabled.filter((p) => kept.has(p));
}
