import { operatorRole } from '../access.ts';
import { BadParameterError } from '../../errors/catalog.ts';
import { MAX_DRAIN_PERIOD_MS } from '@vms/cluster';
import { optionalBoolean, optionalInt, requiredText } from '../params.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';

/**
 * SPEC NODE-2: the node table with online device counts and the cascade leader. Infrastructure:
 * internal addresses and counts over every tenant, so the operator role only (SPEC SEC-2); a tenant
 * token gets 403.
 */
export function nodeHandlers(deps: HttpDeps): Pick<RouteHandlers, 'nodes.list' | 'nodes.drain'> {
  return {
    'nodes.list': async (ctx) => {
      operatorRole(ctx, 'the node table');
      const listing = await deps.nodes.listNodes();
      return {
        cascadeLeader: listing.cascadeLeader,
        nodes: listing.nodes.map((n) => ({
          ...n,
          self: n.nodeCode === deps.instanceId,
          startedAt: new Date(n.startedAt).toISOString(),
          lastHeartbeatAt: new Date(n.lastHeartbeatAt).toISOString(),
        })),
      };
    },
    // Issue 14: an operator drains a shard before an upgrade; placement (redirect server, SIP edges) stops
    // choosing it at their next node-table read.
    'nodes.drain': async (ctx) => {
      operatorRole(ctx, 'the node table');
      const nodeCode = requiredText(ctx.query, 'nodeCode');
      const draining = optionalBoolean(ctx.query, 'draining');
      if (draining === undefined) throw new BadParameterError('draining', 'true or false');
      // paced: over periodS, else the node's online devices at vms.placement.drain-rate per second
      const periodS = optionalInt(ctx.query, 'periodS', 0, MAX_DRAIN_PERIOD_MS / 1000);
      const periodMs = await deps.nodes.setDraining(nodeCode, draining, periodS === undefined ? undefined : periodS * 1000);
      if (periodMs === null) throw new BadParameterError('nodeCode', 'not in the node table');
      return { nodeCode, draining, periodMs };
    },
  };
}
