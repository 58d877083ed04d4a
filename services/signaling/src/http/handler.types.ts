import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { Clock } from '../core/clock.ts';
import type { DeviceControlService } from '../control/device-control.port.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { PlatformAdmin } from '../cascade/platform-admin.port.ts';
import type { RoutingWiring } from '../routing/routing-wiring.ts';
import type { MediaWiring } from '../media/media-wiring.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { NodeDirectory } from '../nodes/node-directory.port.ts';
import type { OwnerDirectory } from '../ownership/owner-directory.port.ts';
import type { VmsError } from '../errors/catalog.ts';
import type { RawParams } from './params.ts';
import type { RouteId, RouteSpec } from './route-table.ts';
import type { HttpLimits } from './http-server.ts';

/** What a handler sees: parsed parameters, the operator, a request-bound logger. No fastify objects. */
export interface HandlerContext {
  readonly query: RawParams;
  readonly params: RawParams;
  /** Parsed JSON body (undefined when none); only the administration routes read it. */
  readonly body?: unknown;
  /** null only on routes declared `auth: 'none'`. */
  readonly principal: Principal | null;
  readonly log: FastifyBaseLogger;
}

/** Returns the envelope's `data`; throws catalog errors for failures. */
export type RouteHandler = (ctx: HandlerContext) => Promise<unknown>;

export type RouteHandlers = { readonly [K in RouteId]: RouteHandler };

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

/** What `/readyz` reports: `phase` decides the answer, the rest is shown to the operator. */
export interface Readiness {
  readonly phase: 'starting' | 'ready' | 'draining';
  /** Redis client state (`ready`, `connecting`, ...); null without Redis. */
  readonly redis: string | null;
}

export interface HttpDeps {
  readonly instanceId: string;
  readonly signingKey: string;
  readonly storage: 'memory' | 'embedded' | 'mysql';
  readonly devices: DeviceRepository;
  readonly control: DeviceControlService;
  readonly nodes: NodeDirectory;
  readonly owners: OwnerDirectory;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** Platform UTC offset for zoned API times (e.g. 480 = UTC+8). */
  readonly utcOffsetMinutes: number;
  readonly ownerRouting?: OwnerRoutingHook;
  /**
   * True for a request forwarded by another instance whose secret verified (SPEC ROUTE-3, SEC-4): the
   * instance the operator called logs it, so this one does not. Absent = every request is logged.
   */
  readonly isVerifiedForward?: (request: FastifyRequest) => boolean;
  /** Cluster mode: the edge fast path of owner routing (edge.ts); absent = every request through fastify. */
  readonly edgeRouting?: EdgeRouting | null;
  /** Live view, playback, download and media hooks; absent when the SIP side is replaced (tests). */
  readonly media?: MediaWiring;
  /** Upstream platform administration; absent when the SIP side is replaced (tests). */
  readonly platforms?: PlatformAdmin;
  /** `GET /metrics` (src/metrics); absent = no such endpoint. */
  readonly metrics?: Pick<Metrics, 'contentType' | 'render'>;
  /** Readiness for `/readyz` (routes/health.ts); absent = ready whenever HTTP answers. */
  readonly readiness?: () => Readiness;
  /** Timeouts, connection caps and body limits (http-server.ts); each defaults to DEFAULT_HTTP_LIMITS. */
  readonly limits?: Partial<HttpLimits>;
  /** The routing engine's store, reloader and shadow table (SPEC §10); absent: its endpoints answer unavailable. */
  readonly routing?: RoutingWiring;
}
