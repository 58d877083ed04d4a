import { operatorRole } from '../access.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';

/**
 * SPEC NODE-2: the node table with online device counts and the cascade leader. Infrastructure:
 * internal addresses and counts over every tenant, so the operator role only (SPEC SEC-2); a tenant
 * token gets 403.
 */
export function nodeHandlers(deps: HttpDeps): Pick<RouteHandlers, 'nodes.list'> {
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
  };
}
