// Owner routing at the HTTP edge (SPEC ROUTE-2..5; http/edge.ts explains the edge): the same decision
// as the owner-routing hook, taken only when every fact is already in memory, and only when its answer
// is "forward". A channel's device comes from the memory of the hook's channel lookups
// (channel-memory.ts), the owner from the owner cache (so it is at most OWNER_CACHE_TTL_MS old, the
// bound the hook lives with too), the owner's node from the last node-table listing. A miss, an owner
// that is this instance, a node not seen online: the request goes to fastify, whose hook reads Redis
// and the table and answers every refusal (4601..4603), so refusals come from one place.
// SPEC SEC-2: the edge forwards only a device its memory knows to be the caller's tenant's (the token's
// principal, any tenant for the operator role); anything else, another tenant's device included, goes
// to fastify, whose hook answers 403 before any routing answer.
import type { EdgeRequest, EdgeRouting } from '../http/routing-hooks.types.ts';
import { mayAccessTenant } from '../auth/principal.ts';
import type { ChannelMemory } from './channel-memory.ts';
import type { DeviceTenants } from './device-tenants.ts';
import { forwardToOwner, type ForwardToOwnerDeps } from './forward-to-owner.ts';
import type { NodeTracker } from './node-tracker.ts';
import type { OwnerCache } from './owner-cache.ts';
import type { OwnershipRecorder } from './ownership-recorder.ts';
import { resolveForward, resolveOwner } from './route-decision.ts';

export interface EdgeRoutingDeps extends ForwardToOwnerDeps {
  readonly instanceId: string;
  /** Channel → device, as the hook's lookups left it; absent = channel routes always go to fastify. */
  readonly channelMemory?: ChannelMemory;
  readonly ownerCache: OwnerCache;
  /** Device → tenant, as the hook's tenant checks left it. */
  readonly tenants: Pick<DeviceTenants, 'peek'>;
  readonly nodes: NodeTracker;
  readonly recorder: Pick<OwnershipRecorder, 'observeOwner'>;
}

export function createEdgeRouting(deps: EdgeRoutingDeps): EdgeRouting {
  const deviceOf = (request: EdgeRequest): string | undefined =>
    request.route.routedBy === 'device' ? request.key : request.route.routedBy === 'channel' ? deps.channelMemory?.get(request.key) : undefined;

  return (request) => {
    const deviceId = deviceOf(request);
    if (deviceId === undefined) return false;
    const tenant = deps.tenants.peek(deviceId);
    if (tenant === undefined || !mayAccessTenant(request.principal, tenant)) return false;
    const cached = deps.ownerCache.get(deviceId);
    if (cached === undefined) return false;
    const owner = resolveOwner(deps.instanceId, { kind: 'owner', node: cached }, true);
    if (owner.action !== 'remote') return false;
    const target = resolveForward(owner.owner, deps.nodes.stateNow(owner.owner));
    if (target.action !== 'forward') return false;
    deps.recorder.observeOwner(deviceId, owner.owner); // OWN-4, as the hook does
    void (async () => {
      let body: Buffer | null;
      try {
        body = await request.body();
      } catch (err) {
        request.log.info({ err, deviceId }, 'request body not received, nothing forwarded');
        return; // the caller went away: nobody to answer
      }
      const forwarded = await forwardToOwner(deps, {
        route: request.route,
        deviceId,
        owner: target.owner,
        baseUrl: target.baseUrl,
        method: request.method,
        url: request.url,
        headers: request.headers,
        body,
        log: request.log,
      });
      if (forwarded.ok) request.answer(forwarded.response.status, forwarded.response.contentType, forwarded.response.body);
      else request.fail(forwarded.error);
    })().catch((err: unknown) => {
      request.log.error({ err, deviceId }, 'edge forward failed');
    });
    return true;
  };
}
