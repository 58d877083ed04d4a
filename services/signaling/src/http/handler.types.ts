import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { Clock } from '../core/clock.ts';
import type { DeviceControlService } from '../control/device-control.port.ts';
import type { DeviceCommandService } from '../commands/device-commands.port.ts';
import type { SipBroadcast } from '../sip/sip-broadcast.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { PlatformAdmin } from '../cascade/platform-admin.port.ts';
import type { RoutingWiring } from '../routing/routing-wiring.ts';
import type { ReportStore } from '../reports/report-store.port.ts';
import type { DeviceSubscriptions } from '../sip/device-subscriptions.ts';
import type { MediaWiring } from '../media/media-wiring.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { NodeDirectory } from '../nodes/node-directory.port.ts';
import type { OwnerDirectory } from '../ownership/owner-directory.port.ts';
import type { VmsError } from '../errors/catalog.ts';
import type { RawParams } from './params.ts';
import type { RouteId } from './route-table.ts';
import type { EdgeRouting, OwnerRoutingHook } from './routing-hooks.types.ts';

export type { EdgeRequest, EdgeRouting, OwnerRoutingHook } from './routing-hooks.types.ts';
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
  /** Presets, cruise, configuration, 2022 commands; absent: they answer 4608 (createUnavailableDeviceCommands). */
  readonly commands?: DeviceCommandService;
  /** Voice broadcast (sip/sip-broadcast.ts); absent: its endpoints answer 4608. */
  readonly broadcast?: Pick<SipBroadcast, 'start' | 'stop' | 'list'>;
  /** Largest snapshot upload body, bytes (config `vms.limits.snapshot-max-bytes`); default 2 MiB. */
  readonly snapshotBodyLimit?: number;
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
  /** Alarms, positions, subscription settings (src/reports); absent: their endpoints answer from an empty store. */
  readonly reports?: ReportStore;
  /** The owner's subscriptions to its devices (src/sip/device-subscriptions.ts); absent: unavailable. */
  readonly subscriptions?: Pick<DeviceSubscriptions, 'set' | 'view'>;
}
