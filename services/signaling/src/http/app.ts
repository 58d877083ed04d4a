// buildHttpApp(deps): the control API on fastify. Routes come from the route table; auth runs in
// onRequest, the owner-routing slot in preHandler (before any handler, ROUTE-5); every answer, good or
// bad, is the SPEC §12 envelope.
import { FORWARD_HEADERS } from '@vms/cluster';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { extractToken } from '../auth/bearer.ts';
import { verifyToken } from '../auth/jwt.ts';
import { rememberVerifiedTokens } from '../auth/verified-tokens.ts';
import { BadParameterError, RouteNotFoundError, UnauthorizedError } from '../errors/catalog.ts';
import { createDeviceAccess } from './access.ts';
import { loadConsoleFiles, registerConsoleRoutes } from './console.ts';
import { createEdge } from './edge.ts';
import { boundedServerFactory, DEFAULT_HTTP_LIMITS } from './http-server.ts';
import { installBodyParsers } from './body-parsers.ts';
import { ok } from './envelope.ts';
import { errorResponse, refusalLogFields, toVmsError } from './errors.ts';
import { publishApiFailure } from '../metrics/channels.ts';
import type { HttpDeps, OwnerRoutingHook, RouteHandlers } from './handler.types.ts';
import type { RawParams } from './params.ts';
import { registerOpenApi } from './openapi.ts';
import { isWebhookPath, stripServicePrefix } from './paths.ts';
import { ROUTES } from './route-table.ts';
import { METRICS_SCHEMA } from './schemas/metrics.ts';
import { ROUTE_SCHEMAS } from './schemas/routes.ts';
import { deviceProvisionHandlers } from './routes/device-provision.ts';
import { deviceQueryHandlers } from './routes/device-queries.ts';
import { deviceHandlers } from './routes/devices.ts';
import { healthHandlers } from './routes/health.ts';
import { nodeHandlers } from './routes/nodes.ts';
import { platformHandlers } from './routes/platforms.ts';
import { playHandlers } from './routes/play.ts';
import { playbackHandlers } from './routes/playback.ts';
import { ptzHandlers } from './routes/ptz.ts';
import { ptzExtraHandlers } from './routes/ptz-extra.ts';
import { device2022Handlers } from './routes/device-2022.ts';
import { registerSnapshotUploadRoute } from './routes/snapshot-upload.ts';
import { broadcastHandlers } from './routes/broadcast.ts';
import { createUnavailableDeviceCommands } from '../commands/device-commands.unavailable.ts';
import { recordHandlers } from './routes/records.ts';
import { reportHandlers } from './routes/reports.ts';
import { routingHandlers } from './routes/routing.ts';
import { registerWebhookRoute } from './routes/webhook.ts';
import './fastify-types.ts';

/** GB/T 28181-2022 snapshot pictures are JPEGs of a few hundred KiB; 2 MiB leaves room for 4K ones. */
const DEFAULT_SNAPSHOT_BODY_LIMIT = 2 * 1024 * 1024;

/** Single instance (ROUTE-8): every device is local. */
export const localOnlyRouting: OwnerRoutingHook = async () => 'local';

export function createRouteHandlers(deps: HttpDeps): RouteHandlers {
  const access = createDeviceAccess(deps.devices);
  const commands = deps.commands ?? createUnavailableDeviceCommands();
  return {
    ...healthHandlers(deps),
    ...deviceHandlers(deps, access),
    ...deviceProvisionHandlers(deps),
    ...nodeHandlers(deps),
    ...deviceQueryHandlers(deps, access),
    ...ptzHandlers(deps, access),
    ...ptzExtraHandlers(commands, access),
    ...device2022Handlers(commands, access),
    ...broadcastHandlers(deps.broadcast, access),
    ...recordHandlers(deps, access),
    ...reportHandlers(deps, access),
    ...playHandlers(deps, access),
    ...playbackHandlers(deps, access),
    ...platformHandlers(deps.platforms, deps.devices),
    ...routingHandlers(deps.routing),
  };
}

export function buildHttpApp(deps: HttpDeps): FastifyInstance {
  const tokens = rememberVerifiedTokens(verifyToken); // a token is verified once per lifetime, not per request
  const limits = { ...DEFAULT_HTTP_LIMITS, ...deps.limits };
  const bodyLimit = limits.bodyLimit;
  let closing = false;
  const isVerifiedForward = deps.isVerifiedForward ?? (() => false);
  // Cluster mode: the edge (edge.ts) forwards requests it can decide from memory before fastify runs.
  const edge =
    deps.edgeRouting === undefined || deps.edgeRouting === null
      ? null
      : createEdge({ routing: deps.edgeRouting, tokens, signingKey: deps.signingKey, clock: deps.clock, bodyLimit, logger: deps.logger, isClosing: () => closing });
  const app = Fastify({
    // SPEC SEC-3: header, request, keep-alive and idle timeouts, connection caps (http-server.ts)
    serverFactory: boundedServerFactory(limits, edge, deps.logger),
    loggerInstance: deps.logger,
    bodyLimit,
    // Schemas validate, never convert (schemas/*.ts): query values are declared as text, and a body field
    // of the wrong JSON type ("5060" for a port) is refused as the handlers refuse it, not coerced.
    ajv: { customOptions: { coerceTypes: false } },
    rewriteUrl: (req) => stripServicePrefix(req.url ?? '/'),
    return503OnClosing: true,
    // A forwarded request (SPEC ROUTE-3) was logged as it arrived and completed by the instance the
    // operator called; its owner does not log it again at info (two JSON lines, two writes per request).
    // Only a forward whose secret verified counts (SPEC SEC-4): the marker alone, without the right
    // secret, is logged like any other request (and refused 4605 by the routing hook).
    logController: new LogController({ disableRequestLogging: (req: FastifyRequest) => req.headers[FORWARD_HEADERS.marker] !== undefined && isVerifiedForward(req) }),
    // Malformed URLs and similar are rejected by the router before any hook: answer with an envelope too.
    frameworkErrors: (error, request, reply) => {
      const { httpStatus, body } = errorResponse(new BadParameterError('url', error.message));
      request.log.info({ code: error.code }, 'request refused');
      void (reply as FastifyReply).status(httpStatus).send(body);
    },
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('rawBody', null);
  installBodyParsers(app);
  registerOpenApi(app); // before the routes: it collects them as they are declared

  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.config.route;
    if (route === undefined || route.auth === 'none' || isWebhookPath(request.url)) return;
    const token = extractToken(request.headers);
    if (token === null) throw new UnauthorizedError('missing');
    request.principal = await tokens.verify(token, deps.signingKey, deps.clock.now());
  });

  const ownerRouting = deps.ownerRouting ?? localOnlyRouting;
  const routingPreHandler = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const route = request.routeOptions.config.route;
    if (route === undefined || request.principal === null) return;
    const outcome = await ownerRouting({ route, principal: request.principal, request, reply });
    if (outcome === 'handled' && !reply.sent) throw new Error('owner routing reported handled without replying');
  };

  const handlers = createRouteHandlers(deps);
  const consoleFiles = loadConsoleFiles(); // read once, served from memory (console.ts)
  // Declared in a plugin, so they load after the OpenAPI generator (plugins load in order at ready())
  // and inherit every hook and handler set on `app` here and by the caller before it starts.
  void app.register(async (api) => {
    for (const route of ROUTES) {
      const handler = handlers[route.id];
      api.route({
        method: route.method,
        url: route.path,
        config: { route },
        schema: ROUTE_SCHEMAS[route.id], // validated before owner routing; published at /openapi.json
        ...(route.routedBy === null ? {} : { preHandler: routingPreHandler }),
        handler: async (request) =>
          ok(
            await handler({
              query: request.query as RawParams,
              params: request.params as RawParams,
              body: request.body,
              principal: request.principal,
              log: request.log,
            }),
          ),
      });
    }
    if (deps.media !== undefined) registerWebhookRoute(api, deps.media, limits.webhookBodyLimit);
    if (deps.commands !== undefined) registerSnapshotUploadRoute(api, deps.commands, deps.snapshotBodyLimit ?? DEFAULT_SNAPSHOT_BODY_LIMIT);
    // Prometheus scrape (docs/metrics.md): no token, like /healthz; aggregates only, no ids, no tenant data.
    const metrics = deps.metrics;
    if (metrics !== undefined) api.get('/metrics', { schema: METRICS_SCHEMA }, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()));
    registerConsoleRoutes(api, consoleFiles);
  });

  app.setNotFoundHandler(async (request) => {
    throw new RouteNotFoundError(request.method, request.url.split('?')[0] ?? '/');
  });

  app.setErrorHandler(async (raw, request, reply) => {
    const err = toVmsError(raw);
    const { httpStatus, body } = errorResponse(err);
    publishApiFailure(err.code);
    if (httpStatus >= 500) request.log.error({ err: raw, code: err.code }, 'request failed');
    else request.log.info(refusalLogFields(err), 'request refused');
    return reply.status(httpStatus).type('application/json; charset=utf-8').send(body);
  });

  return app;
}
