import type { HttpDeps, RouteHandlers } from '../handler.types.ts';

/** Liveness: answers while the process serves HTTP. No token (load balancers, orchestrators). */
export function healthHandlers(deps: HttpDeps): Pick<RouteHandlers, 'health'> {
  return {
    health: async () => ({ status: 'UP', instanceId: deps.instanceId, storage: deps.storage }),
  };
}
