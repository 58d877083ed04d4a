import { NotReadyError } from '../../errors/catalog.ts';
import type { HttpDeps, RouteHandlers } from '../handler.types.ts';

/**
 * Liveness (`/healthz`): answers while the process serves HTTP. Readiness (`/readyz`): 200 once the
 * start completed (stores opened, migrations applied, this node's row written), 503 before that and
 * from the moment a shutdown began (the drain: the orchestrator stops sending operators here). A
 * Redis outage does not make an instance unready: it degrades by itself (SPEC FAIL-3) and every
 * instance would drop out at once. No token (load balancers, orchestrators).
 */
export function healthHandlers(deps: HttpDeps): Pick<RouteHandlers, 'health' | 'ready'> {
  return {
    health: async () => ({ status: 'UP', instanceId: deps.instanceId, storage: deps.storage }),
    ready: async () => {
      const r = deps.readiness?.() ?? { phase: 'ready', redis: null };
      if (r.phase !== 'ready') throw new NotReadyError(r.phase);
      return { status: 'READY', instanceId: deps.instanceId, redis: r.redis };
    },
  };
}
