// The owner-routing decision (SPEC ROUTE-2, ROUTE-3, ROUTE-5, ROUTE-6, FAIL-3), pure: the hook in
// `owner-routing.ts` gathers the facts (headers, owner from Redis, owner node from the node table) and
// these functions say what to do. No I/O, no clock.
import { forwardSecretMatches } from '@vms/cluster';

/** How a request arrived: from a caller, or forwarded by another instance (with a good or bad secret). */
export type InboundKind = 'direct' | 'forwarded' | 'forged';

/**
 * SPEC ROUTE-3 / ROUTE-6: a request carrying the forwarded marker runs locally (never routed again)
 * only with the right secret; without a configured secret the channel is closed, so every marked
 * request is forged. A repeated marker header is never something our client sends.
 * `configuredSecret` is the secret itself, or a prepared constant-time check of it
 * (`createForwardSecretCheck`, which the routing hook uses).
 */
export function classifyInbound(
  marker: string | string[] | undefined,
  presentedSecret: string | string[] | undefined,
  configuredSecret: string | null | ((presented: string | undefined) => boolean),
): InboundKind {
  if (marker === undefined) return 'direct';
  if (Array.isArray(marker) || Array.isArray(presentedSecret)) return 'forged';
  const matches = typeof configuredSecret === 'function' ? configuredSecret(presentedSecret) : forwardSecretMatches(presentedSecret, configuredSecret);
  return matches ? 'forwarded' : 'forged';
}

/** What the ownership store said about a device. */
export type OwnerLookup =
  | { readonly kind: 'owner'; readonly node: string }
  | { readonly kind: 'none' }
  /** FAIL-3: the store is unreachable; `locallyOwned` is this instance's own view of its devices. */
  | { readonly kind: 'unavailable'; readonly locallyOwned: boolean };

export type RouteFailure = 'device-offline' | 'forwarding-disabled' | 'owner-node-offline';

export type OwnerResolution =
  | { readonly action: 'local' }
  | { readonly action: 'remote'; readonly owner: string }
  | { readonly action: 'fail'; readonly failure: RouteFailure; readonly owner: string | null };

/**
 * SPEC ROUTE-2: owner == self → local; owner == other → forward (ROUTE-6: refused when the channel is
 * closed); no owner → device offline. FAIL-3: with the store down, a device this instance holds runs
 * locally and anything else is "device offline".
 */
export function resolveOwner(self: string, lookup: OwnerLookup, forwardingOpen: boolean): OwnerResolution {
  switch (lookup.kind) {
    case 'owner':
      if (lookup.node === self) return { action: 'local' };
      if (!forwardingOpen) return { action: 'fail', failure: 'forwarding-disabled', owner: lookup.node };
      return { action: 'remote', owner: lookup.node };
    case 'none':
      return { action: 'fail', failure: 'device-offline', owner: null };
    case 'unavailable':
      return lookup.locallyOwned ? { action: 'local' } : { action: 'fail', failure: 'device-offline', owner: null };
  }
}

/** The owner's row in the node table, as this instance last saw it. */
export type OwnerNodeState =
  | { readonly kind: 'online'; readonly baseUrl: string }
  /** Not online by the database clock, or refused our connection since its last heartbeat. */
  | { readonly kind: 'offline' }
  | { readonly kind: 'unknown' };

export type ForwardResolution =
  | { readonly action: 'forward'; readonly owner: string; readonly baseUrl: string }
  | { readonly action: 'fail'; readonly failure: 'owner-node-offline'; readonly owner: string };

/** SPEC ROUTE-5: the owner's node must be online in the node table before a forward is attempted. */
export function resolveForward(owner: string, node: OwnerNodeState): ForwardResolution {
  if (node.kind === 'online') return { action: 'forward', owner, baseUrl: node.baseUrl };
  return { action: 'fail', failure: 'owner-node-offline', owner };
}
