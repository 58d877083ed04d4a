import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { VmsError } from '../errors/catalog.ts';
import type { RouteSpec } from './route-table.ts';

// The two slots the cluster fills in the HTTP layer. Kept apart from handler.types.ts (which names every
// wiring the handlers use, media included) so cluster code can implement them without importing that web.

/**
 * The owner-routing slot (SPEC ROUTE-2..5), run before any handler of a route with `routedBy`.
 * Return `local` to run the local handler, or `handled` after writing the reply (a forward's answer or
 * a routing failure). The cluster issue provides it; the default is the single-instance no-op (ROUTE-8).
 */
export type OwnerRoutingHook = (ctx: {
  readonly route: RouteSpec;
  readonly principal: Principal;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
}) => Promise<'local' | 'handled'>;

/**
 * A routed request as the HTTP edge (edge.ts) sees it before fastify does: matched to a route whose
 * device or channel is named in the query, carrying a token that already verified. The edge routing either takes
 * it (forwards it and answers through `answer` / `fail`) or leaves it to fastify's full path.
 */
export interface EdgeRequest {
  readonly route: RouteSpec;
  /** The route's routing key: a deviceId or a channelId (by `route.routedBy`), a GB id. */
  readonly key: string;
  readonly method: string;
  /** Path and query exactly as received (ROUTE-3, ROUTE-7). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The caller, from a token that passed the full verification before. */
  readonly principal: Principal;
  readonly log: FastifyBaseLogger;
  /** The request body as received (null when empty); read at most once. */
  body(): Promise<Buffer | null>;
  /** Writes the owner's answer: status, Content-Type and body bytes unchanged (ROUTE-4). */
  answer(status: number, contentType: string | null, body: Buffer): void;
  /** Writes the SPEC §12 envelope of a failure, exactly as fastify's error handler would. */
  fail(err: VmsError): void;
}

/**
 * The owner-routing fast path (SPEC ROUTE-2..5) for requests the edge can decide without I/O: true =
 * taken (it will answer), false = not decidable here, fastify runs the request with the full hook.
 * It must decide synchronously and never throw.
 */
export type EdgeRouting = (request: EdgeRequest) => boolean;
