// SPEC SEC-1: which requests speak for a device. A device is bound to the flow of its last REGISTER
// that passed digest (register.handler.ts): same transport, same source address and port, and on TCP
// the same connection. Anything from elsewhere — another address, another port of the same address
// (a NAT rebinding is not told apart from another host behind the same NAT), a new TCP connection —
// is answered 401 and changes nothing; the device re-registers from its new flow and is bound there.
//
// Out-of-dialog requests are what this guards: responses to our requests are matched to their
// transaction by the Via branch and in-dialog requests to their dialog by Call-ID and tags (random
// values a third party never sees), so only MESSAGE (and REGISTER itself) can name a device freely.
import { getTopVia, type Flow, type SipRequest } from '@vms/sip';

/**
 * Issue 14: a SIP edge (services/sip-edge) forwards a device's requests with its own Via on top carrying the
 * device's flow (`vms-f`, from the packet's source, never from the device's headers). Through an edge the
 * shard binds the device to the edge's flow AND that value: another device behind the same edge has another
 * value, a device writing the parameter itself is not at the edge's address.
 */
export const EDGE_FLOW_PARAM = 'vms-f';

/** The edge-named device flow of a request: the top Via's `vms-f`, else null (a direct device). */
export function edgeFlowOf(req: SipRequest): string | null {
  const v = getTopVia(req).params.get(EDGE_FLOW_PARAM);
  return v === undefined || v === null || v.length === 0 ? null : v;
}

/**
 * edgeFlowOf() for the stateless keepalive path, read from the raw first Via line without a parse: the
 * value when the top hop is written the way the edge writes it — one space (after the protocol), no tab,
 * the parameter once in any letter case, `;vms-f=` lower-case with no LWS — else null (the full path
 * parses and decides). In that shape the parser reads the same value, so an equal value means the same
 * SEC-1 verdict as the full path's.
 */
export function edgeFlowOfViaLine(line: string): string | null {
  const comma = line.indexOf(',');
  const hop = comma < 0 ? line : line.slice(0, comma);
  const at = hop.indexOf(';vms-f=');
  if (at < 0 || hop.indexOf(' ') !== hop.lastIndexOf(' ') || hop.includes('\t')) return null;
  const lower = hop.toLowerCase();
  if (lower.indexOf('vms-f') !== lower.lastIndexOf('vms-f')) return null;
  const end = hop.indexOf(';', at + 7);
  const value = hop.slice(at + 7, end < 0 ? hop.length : end).trimEnd();
  return value.length === 0 ? null : value;
}

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

/** SEC-1 for a session that may sit behind an edge: the same flow and the same edge-named device flow. */
export function sameDeviceFlow(bound: { readonly flow: Flow; readonly edgeFlow: string | null }, flow: Flow, edgeFlow: string | null): boolean {
  return sameFlow(bound.flow, flow) && bound.edgeFlow === edgeFlow;
}
