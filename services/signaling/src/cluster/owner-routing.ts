// The owner-routing hook (SPEC ROUTE-2..8, FAIL-1, FAIL-3), plugged into the HTTP app's preHandler
// slot: it runs after auth and before any handler of a route with `routedBy`, so a failed forward
// leaves nothing half done. Decisions come from the pure functions of `route-decision.ts`; this file
// gathers the facts and performs the forward.
//
//  1. Marked as forwarded? Right secret → run locally, never route again; otherwise 4605 (403).
//  2. Standalone (no ownership store): local, with no Redis round trip (ROUTE-8).
//  3. Resolve the device from the routing key; none → local (the handler answers 400/403/404).
//     SPEC SEC-2: the device must be the caller's tenant's (any tenant for the operator role), else 403,
//     before anything about its owner is said (4601..4604 would tell whether it is online and where).
//     An unknown device answers a tenant the same 403 (no existence oracle).
//  4. Owner from the store (Redis down → this instance's own leases, FAIL-3). No owner, but this
//     instance serves the device (a live lease from its verified flow): the claim vanished (empty Redis
//     restart), re-claim it (SET NX) and go on with whoever owns it now.
//  5. self → local; nobody → 4601; other without a secret → 4602; other → node online? (4603)
//  6. Forward with the path exactly as received, the body bytes, the caller's token; write back the
//     owner's status, Content-Type and body bytes unchanged (ROUTE-4). Failures → 4603/4604.
//
// Per-request cost (README "Performance"): the owner lookup goes through the owner cache (a Redis round
// trip at most once per device per second, see owner-cache.ts for the staleness bound), and the
// forward secret is hashed once per keep-alive connection of the forwarding instance, not per request.
import { FORWARD_HEADERS, isClusterError, isTransientClusterError, type ForwardClient, type OwnershipStore } from '@vms/cluster';
import type { FastifyRequest } from 'fastify';
import { isOperator, mayAccessTenant } from '../auth/principal.ts';
import { DeviceOfflineError, ForgedForwardError, ForwardingDisabledError, OwnerNodeOfflineError, TenantForbiddenError, type VmsError } from '../errors/catalog.ts';
import type { OwnerRoutingHook } from '../http/routing-hooks.types.ts';
import { routingKeyOf, type RouteSpec } from '../http/route-table.ts';
import type { DeviceResolver } from './device-resolver.ts';
import type { DeviceTenants } from './device-tenants.ts';
import { createInboundClassifier, type InboundClassifier } from './inbound-forward.ts';
import { forwardToOwner, type ForwardToOwnerDeps } from './forward-to-owner.ts';
import type { NodeTracker } from './node-tracker.ts';
import type { OwnerCache } from './owner-cache.ts';
import type { OwnershipRecorder } from './ownership-recorder.ts';
import { resolveForward, resolveOwner, type OwnerLookup, type RouteFailure } from './route-decision.ts';

export interface OwnerRoutingDeps {
  readonly instanceId: string;
  /** node-forward-secret; null = the forwarding channel is closed both ways (ROUTE-6). */
  readonly secret: string | null;
  /** null = standalone: every device is local (ROUTE-8). */
  readonly owners: OwnershipStore | null;
  readonly recorder: OwnershipRecorder;
  readonly resolver: DeviceResolver;
  /** The tenant of a device, remembered briefly (device-tenants.ts): the tenant check before routing. */
  readonly tenants: DeviceTenants;
  readonly nodes: NodeTracker | null;
  /** null when no secret is configured. */
  readonly forwarder: ForwardClient | null;
  readonly readTimeoutMs: (route: RouteSpec) => number;
  /** Short memory of owner lookups (owner-cache.ts); absent = Redis on every routed request. */
  readonly ownerCache?: OwnerCache | null;
  /** The instance's inbound classifier (inbound-forward.ts), shared with request logging; default: one of its own. */
  readonly inbound?: InboundClassifier;
}

export function createOwnerRouting(deps: OwnerRoutingDeps): OwnerRoutingHook {
  const failure = (kind: RouteFailure, deviceId: string, owner: string | null): VmsError => {
    switch (kind) {
      case 'device-offline':
        return new DeviceOfflineError(deviceId);
      case 'forwarding-disabled':
        return new ForwardingDisabledError(deviceId, owner ?? '?');
      case 'owner-node-offline':
        return new OwnerNodeOfflineError(deviceId, owner ?? '?');
    }
  };

  const cache = deps.ownerCache ?? null;
  const forwardDeps: ForwardToOwnerDeps | null =
    deps.forwarder === null ? null : { forwarder: deps.forwarder, readTimeoutMs: deps.readTimeoutMs, ownerCache: cache, nodes: deps.nodes };
  const readOwner = (store: OwnershipStore, deviceId: string): Promise<string | null> =>
    cache === null ? store.ownerOf(deviceId) : cache.lookup(deviceId, () => store.ownerOf(deviceId));

  const lookupOwner = async (store: OwnershipStore, deviceId: string, request: FastifyRequest): Promise<OwnerLookup> => {
    const cached = cache?.get(deviceId);
    if (cached !== undefined) return { kind: 'owner', node: cached };
    try {
      const node = await readOwner(store, deviceId);
      return node === null ? { kind: 'none' } : { kind: 'owner', node };
    } catch (err) {
      // FAIL-3: whatever the store's trouble, decide from this instance's own devices
      if (!isTransientClusterError(err)) request.log.error({ err, deviceId }, 'ownership lookup failed');
      else request.log.debug({ err, deviceId }, 'ownership store unreachable, using local leases');
      return { kind: 'unavailable', locallyOwned: deps.recorder.isLocallyOwned(deviceId) };
    }
  };

  const classify = deps.inbound ?? createInboundClassifier(deps.secret);

  return async ({ route, principal, request, reply }) => {
    const inbound = classify(request);
    if (inbound === 'forwarded') {
      request.log.debug(
        { from: request.headers[FORWARD_HEADERS.marker], forwardId: request.headers[FORWARD_HEADERS.forwardId], url: request.originalUrl },
        'forwarded request accepted',
      );
      return 'local'; // ROUTE-3: never routed again
    }
    if (inbound === 'forged') {
      request.log.warn({ from: request.headers[FORWARD_HEADERS.marker], forwardingOpen: deps.secret !== null, url: request.originalUrl, ip: request.ip }, 'forwarded request refused');
      throw new ForgedForwardError();
    }
    if (deps.owners === null) return 'local';

    let deviceId: string | null;
    try {
      deviceId = await deps.resolver.deviceOf(route, request.query as Record<string, unknown>);
    } catch (err) {
      if (!isClusterError(err)) throw err; // e.g. StorageError from a channel lookup: the handler would hit it too
      request.log.debug({ err }, 'routing index unreachable');
      throw new DeviceOfflineError(routingKeyOf(route, request.query as Record<string, unknown>) ?? '');
    }
    if (deviceId === null) return 'local';
    // SPEC SEC-2: the tenant check comes before any routing answer. Both reads start together (the
    // owner's never rejects, see lookupOwner); the owner is looked at only once the tenant passed.
    const owned = lookupOwner(deps.owners, deviceId, request);
    const tenant = await deps.tenants.tenantOf(deviceId);
    if (tenant === null ? !isOperator(principal) : !mayAccessTenant(principal, tenant)) {
      throw new TenantForbiddenError(routingKeyOf(route, request.query as Record<string, unknown>) ?? deviceId);
    }

    let lookup = await owned;
    if (lookup.kind === 'none') {
      const owner = await deps.recorder.reclaimIfVacant(deviceId);
      if (owner !== null) lookup = { kind: 'owner', node: owner };
    }
    const owner = resolveOwner(deps.instanceId, lookup, deps.secret !== null && deps.forwarder !== null);
    if (owner.action === 'local') return 'local';
    if (lookup.kind === 'owner') deps.recorder.observeOwner(deviceId, lookup.node); // OWN-4: moved away?
    if (owner.action === 'fail') {
      cache?.forget(deviceId);
      throw failure(owner.failure, deviceId, owner.owner);
    }

    const node = deps.nodes === null ? ({ kind: 'unknown' } as const) : await deps.nodes.stateOf(owner.owner);
    const target = resolveForward(owner.owner, node);
    if (target.action === 'fail') {
      cache?.forget(deviceId); // the next request reads Redis: the device may have moved off the dead node
      throw failure(target.failure, deviceId, target.owner);
    }

    const forwarded = await forwardToOwner(
      forwardDeps as ForwardToOwnerDeps, // non-null: resolveOwner refused otherwise
      {
        route,
        deviceId,
        owner: target.owner,
        baseUrl: target.baseUrl,
        method: request.method,
        url: request.originalUrl,
        headers: request.headers,
        body: request.rawBody,
        log: request.log,
      },
    );
    if (!forwarded.ok) throw forwarded.error;
    const res = forwarded.response;
    // ROUTE-4: status, Content-Type and body bytes unchanged
    void reply.status(res.status);
    if (res.contentType !== null) void reply.header('content-type', res.contentType);
    await reply.send(res.body);
    return 'handled';
  };
}
