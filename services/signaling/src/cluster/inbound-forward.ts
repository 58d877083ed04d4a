// How a request arrived (SPEC ROUTE-3, SEC-4): from a caller, or forwarded by another instance with a
// good or a bad secret. One classifier per instance, shared by the owner-routing hook (which runs a
// verified forward locally and refuses a forged one, 4605) and the HTTP app's request logging (a
// forwarded request is logged by the instance the operator called, so the owner skips its access log
// lines, but only once the secret is verified: the marker alone changes nothing).
//
// The secret is checked in constant time (SHA-256 digests, timingSafeEqual). A connection that
// presented the right secret is remembered with it: later requests on the same connection that present
// the same string skip the hashing. Anything else gets the full check; another connection, even from
// the same peer, starts unknown. The verdict is remembered per request, so the log controller and the
// hook check it once between them.
import { createForwardSecretCheck, FORWARD_HEADERS } from '@vms/cluster';
import { classifyInbound, type InboundKind } from './route-decision.ts';

export interface InboundRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The raw request (its socket is the keep-alive connection); the key of the per-request memory. */
  readonly raw: { readonly socket: object | null };
}

export type InboundClassifier = (request: InboundRequest) => InboundKind;

/** `secret`: node-forward-secret; null = the forwarding channel is closed, every marked request is forged. */
export function createInboundClassifier(secret: string | null): InboundClassifier {
  const secretMatches = createForwardSecretCheck(secret);
  const provenConnections = new WeakMap<object, string>();
  const verdicts = new WeakMap<object, InboundKind>();
  return (request) => {
    const marker = request.headers[FORWARD_HEADERS.marker];
    if (marker === undefined) return 'direct';
    const known = verdicts.get(request.raw);
    if (known !== undefined) return known;
    const socket = request.raw.socket;
    const check = (presented: string | undefined): boolean => {
      if (socket !== null && presented !== undefined && provenConnections.get(socket) === presented) return true;
      if (!secretMatches(presented)) return false;
      if (socket !== null && presented !== undefined) provenConnections.set(socket, presented);
      return true;
    };
    const verdict = classifyInbound(marker, request.headers[FORWARD_HEADERS.secret], check);
    verdicts.set(request.raw, verdict);
    return verdict;
  };
}
