// The control API described as OpenAPI 3 from the routes' own schemas (schemas/routes.ts), served at
// GET /openapi.json, with Swagger UI at /docs (its assets ship in the @fastify/swagger-ui package: no
// CDN). Both need no token (the description is not a secret; every operation still needs one).
// The monolith prefix (SPEC ROUTE-7) is described once, as a second server: every path also answers
// under /blade-iot.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import pkg from '../../package.json' with { type: 'json' };
import { SERVICE_PREFIX } from './paths.ts';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PREFIX = '/docs';

/** Registers the generator: call before any route is declared, so every route is collected. */
export function registerOpenApi(app: FastifyInstance): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'GB28181 signaling control API',
        version: pkg.version,
        description:
          'Every answer is the envelope {code, success, msg, data}. Owner-routed operations (by channelId, deviceId, sessionId or sn) ' +
          'may be called on any instance: the owner of the device answers (SPEC §4). Parameter errors answer 400 with msg naming the parameter.',
      },
      servers: [
        { url: '/', description: 'microservice paths' },
        { url: SERVICE_PREFIX, description: 'monolith prefix: every path also answers under /blade-iot (SPEC ROUTE-7)' },
      ],
      components: {
        securitySchemes: { bladeAuth: { type: 'apiKey', in: 'header', name: 'Blade-Auth', description: 'operator token: `bearer <JWT>` (SPEC §12)' } },
      },
      security: [{ bladeAuth: [] }],
    },
  });
  void app.register(swaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { docExpansion: 'list' } });
  void app.register(async (scope) => {
    scope.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
  });
}
