// One forward to the device's owner (SPEC ROUTE-3..5), shared by the owner-routing hook (fastify's
// path) and the edge routing (before fastify): the headers passed on, the read timeout of the
// endpoint, and what a failure means for the owner cache, the node view and the caller's envelope.
import type { ForwardClient, ForwardResponse } from '@vms/cluster';
import type { FastifyBaseLogger } from 'fastify';
import type { VmsError } from '../errors/catalog.ts';
import type { RouteSpec } from '../http/route-table.ts';
import { publishForward } from '../metrics/channels.ts';
import { classifyForwardFailure, FORWARD_FAILURES } from './forward-failures.ts';
import type { NodeTracker } from './node-tracker.ts';
import type { OwnerCache } from './owner-cache.ts';

/** Request headers a forward carries on (ROUTE-3): the caller's token in either form, the body type. */
const PASSED_HEADERS = ['blade-auth', 'authorization', 'content-type'] as const;

export interface ForwardToOwnerDeps {
  readonly forwarder: ForwardClient;
  readonly readTimeoutMs: (route: RouteSpec) => number;
  readonly ownerCache: OwnerCache | null;
  readonly nodes: NodeTracker | null;
}

export interface OwnerForward {
  readonly route: RouteSpec;
  readonly deviceId: string;
  readonly owner: string;
  readonly baseUrl: string;
  readonly method: string;
  /** Exactly as received, prefix and query included (ROUTE-3, ROUTE-7). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Uint8Array | null;
  readonly log: FastifyBaseLogger;
}

export type OwnerForwardResult = { readonly ok: true; readonly response: ForwardResponse } | { readonly ok: false; readonly error: VmsError };

/** Never rejects: a failure comes back as the catalog error the caller answers with (4603 / 4604). */
export async function forwardToOwner(deps: ForwardToOwnerDeps, f: OwnerForward): Promise<OwnerForwardResult> {
  const headers: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const v = f.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  const startedMs = performance.now();
  try {
    const response = await deps.forwarder.forward(
      { node: f.owner, baseUrl: f.baseUrl },
      { method: f.method, path: f.url, headers, body: f.body, readTimeoutMs: deps.readTimeoutMs(f.route) },
    );
    f.log.debug({ deviceId: f.deviceId, owner: f.owner, forwardId: response.forwardId, status: response.status }, 'forwarded to owner');
    publishForward(null, startedMs);
    return { ok: true, response };
  } catch (err) {
    const kind = classifyForwardFailure(err);
    deps.ownerCache?.forget(f.deviceId); // the next request reads Redis: the device may have moved off the dead node
    if (kind === 'connect-refused') deps.nodes?.markRefused(f.owner);
    if (kind === 'unexpected') f.log.error({ err, deviceId: f.deviceId, owner: f.owner }, 'forward failed');
    else f.log.info({ err, kind, deviceId: f.deviceId, owner: f.owner }, 'forward failed');
    const error = FORWARD_FAILURES[kind](f.deviceId, f.owner, err);
    publishForward(error.code, startedMs);
    return { ok: false, error };
  }
}
