// The one table from forward failures (typed errors of @vms/cluster's forward client) to the service's
// catalog, and so to the SPEC §12 envelope (ROUTE-5: uniform business failures, never a 5xx from the
// initiating instance). Pinned by forward-failures.test.ts.
import { ForwardConnectError, ForwardResponseError, ForwardTimeoutError, StoreClosedError } from '@vms/cluster';
import { OwnerNodeOfflineError, OwnerUnreachableError, type VmsError } from '../errors/catalog.ts';

export type ForwardFailureKind = 'connect-refused' | 'connect-timeout' | 'connect-unreachable' | 'read-timeout' | 'exchange-broken' | 'client-closed' | 'unexpected';

export const FORWARD_FAILURES: {
  readonly [K in ForwardFailureKind]: (deviceId: string, owner: string, cause: unknown) => VmsError;
} = {
  // Nothing listens at the owner's internal address: the process is gone (FAIL-1), 4603.
  'connect-refused': (deviceId, owner) => new OwnerNodeOfflineError(deviceId, owner),
  'connect-timeout': (_d, owner, cause) => new OwnerUnreachableError(owner, 'connect', { cause }),
  'connect-unreachable': (_d, owner, cause) => new OwnerUnreachableError(owner, 'connect', { cause }),
  'read-timeout': (_d, owner, cause) => new OwnerUnreachableError(owner, 'response', { cause }),
  'exchange-broken': (_d, owner, cause) => new OwnerUnreachableError(owner, 'response', { cause }),
  'client-closed': (_d, owner, cause) => new OwnerUnreachableError(owner, 'response', { cause }),
  'unexpected': (_d, owner, cause) => new OwnerUnreachableError(owner, 'response', { cause }),
};

export function classifyForwardFailure(err: unknown): ForwardFailureKind {
  if (err instanceof ForwardConnectError) {
    return err.reason === 'refused' ? 'connect-refused' : err.reason === 'timeout' ? 'connect-timeout' : 'connect-unreachable';
  }
  if (err instanceof ForwardTimeoutError) return 'read-timeout';
  if (err instanceof ForwardResponseError) return 'exchange-broken';
  if (err instanceof StoreClosedError) return 'client-closed';
  return 'unexpected';
}
