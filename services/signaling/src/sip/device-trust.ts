// SPEC SEC-1: which requests speak for a device. A device is bound to the flow of its last REGISTER
// that passed digest (register.handler.ts): same transport, same source address and port, and on TCP
// the same connection. Anything from elsewhere — another address, another port of the same address
// (a NAT rebinding is not told apart from another host behind the same NAT), a new TCP connection —
// is answered 401 and changes nothing; the device re-registers from its new flow and is bound there.
//
// Out-of-dialog requests are what this guards: responses to our requests are matched to their
// transaction by the Via branch and in-dialog requests to their dialog by Call-ID and tags (random
// values a third party never sees), so only MESSAGE (and REGISTER itself) can name a device freely.
import type { Flow } from '@vms/sip';

/** On the keepalive hot path: a few field comparisons, no allocation. */
export function sameFlow(bound: Flow, flow: Flow): boolean {
  return (
    bound === flow ||
    (bound.remotePort === flow.remotePort &&
      bound.remoteAddress === flow.remoteAddress &&
      bound.transport === flow.transport &&
      bound.connectionId === flow.connectionId)
  );
}
