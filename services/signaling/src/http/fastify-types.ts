// Type-only augmentation of fastify for what `app.ts` decorates.
import type { Principal } from '../auth/principal.ts';
import type { RouteSpec } from './route-table.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on `auth: 'operator'` routes. */
    principal: Principal | null;
    /** Request body bytes exactly as received (owner forwarding replays them, ROUTE-3). */
    rawBody: Buffer | null;
  }
  interface FastifyContextConfig {
    /** The route-table entry this fastify route was registered from. */
    route?: RouteSpec;
  }
}

export {};
