// The stateless proxy decision (RFC 3261 §16.11), pure: what to do with one message, given the edge's
// identity, the flow codec and the shards. No transaction, no dialog, no device table: everything needed to
// route a response or a request back to a device travels in the message (flow-token.ts).
//
//  device → shard (REGISTER, MESSAGE, NOTIFY): the shard placement picks for the From user's device code
//    (the same decision as every instance's, @vms/routing placeDevice). The edge's Via goes on top with the
//    device flow (`vms-f`): the shard binds the device to it (SPEC SEC-1 behind an edge) and the response
//    comes back to the edge, which sends it to that flow. A REGISTER also gets the edge's Path (RFC 3327):
//    the shard's requests to the device carry it as Route.
//  shard → device (a request whose top Route is the edge's, signed flow inside): Route popped, the edge's
//    Via on top, sent to the device flow (the UDP address, or the TCP connection it came on). An initial
//    INVITE or SUBSCRIBE is record-routed twice (RFC 3261 §16.6 step 4, RFC 5658 double record-routing):
//    `vms-s` (the shard's flow, signed) above `vms-f` (the device's). The device (UAS) keeps the Record-Route
//    in order, the shard (UAC) reversed (§12.1.1, §12.1.2), so each side's in-dialog requests arrive with
//    the other side's entry on top: the direction is in the message, no dialog is kept (§16.12: both of
//    our entries are popped).
//  device → shard in a dialog (top Route `vms-s`): the edge's Via (device flow inside) on top, sent to the
//    shard flow the Route names (BYE from a camera, NOTIFY in a subscription).
//  responses: the edge's Via popped; with a flow in it → the device; without → the next Via (the shard),
//    by `received`/`rport` (RFC 3581).
import { fmix32, placeDevice, type PlacementPolicy, type Shard } from '@vms/routing';
import {
  BRANCH_MAGIC_COOKIE,
  getFrom,
  getMaxForwards,
  getRouteSet,
  getTo,
  getTopVia,
  SipHeaders,
  SipStatus,
  splitHeaderValues,
  type Flow,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from '@vms/sip';
import type { Refusal } from './counters.ts';
import type { FlowDevices } from './flow-devices.ts';
import type { DeviceFlowRef, FlowCodec } from './flow-token.ts';

/** The Via/Path/Route parameter carrying the signed device flow; the shards read the same name (SEC-1). */
export const FLOW_PARAM = 'vms-f';
/** The Record-Route parameter carrying the signed shard flow of a dialog (device → shard in-dialog requests). */
export const SHARD_PARAM = 'vms-s';
/** Dialog-creating requests a shard sends to a device (RFC 3261 §12.1, RFC 6665 §4.1): record-routed. */
export const DIALOG_METHODS: ReadonlySet<string> = new Set(['INVITE', 'SUBSCRIBE']);
/** Methods a GB/T 28181 device sends out of dialog (§9.1 register, §9.3–9.7 MESSAGE, §9.11 NOTIFY). */
export const DEVICE_METHODS: ReadonlySet<string> = new Set(['REGISTER', 'MESSAGE', 'NOTIFY']);
/**
 * A device's own call (§9.12 voice broadcast / talk: the device INVITEs the platform after the Broadcast
 * MESSAGE), with the ACK of a non-2xx answer and a CANCEL, which a stateless proxy forwards where the INVITE
 * went (RFC 3261 §16.11): placed by the device on the flow (flow-devices.ts), not by From (the audio channel).
 */
export const DEVICE_CALL_METHODS: ReadonlySet<string> = new Set(['INVITE', 'ACK', 'CANCEL']);
/** RFC 3261 §20.5: what a device may start through the edge (answered with a 405). */
export const ALLOWED_FROM_DEVICES = [...DEVICE_METHODS, ...DEVICE_CALL_METHODS].join(', ');
export const DEFAULT_MAX_FORWARDS = 70; // RFC 3261 §8.1.1.6
const GB_ID = /^\d{20}$/;

export interface EdgeSelf {
  /** Node code of this edge: names its TCP connections in flow tokens. */
  readonly code: string;
  /** Address written in Via and Path: where shards and devices reach this edge. */
  readonly host: string;
  readonly port: number;
}

export interface ForwardContext {
  readonly self: EdgeSelf;
  readonly codec: FlowCodec;
  readonly policy: PlacementPolicy;
  readonly shards: () => readonly Shard[];
  /** Which device spoke last on a flow: learnt from REGISTER/MESSAGE/NOTIFY, read for a device's INVITE. */
  readonly devices?: FlowDevices;
  /** How the edge reaches shards (`VMS_EDGE_SHARD_TRANSPORT`); default UDP. */
  readonly shardTransport?: 'udp' | 'tcp';
}

export type ForwardAction =
  | { readonly kind: 'to-shard'; readonly shard: Shard; readonly deviceId: string; readonly msg: SipRequest }
  | { readonly kind: 'to-device'; readonly ref: DeviceFlowRef; readonly msg: SipMessage }
  /** A device's in-dialog request, to the shard flow its Record-Route entry names. */
  | { readonly kind: 'to-shard-flow'; readonly ref: DeviceFlowRef; readonly msg: SipRequest }
  | { readonly kind: 'to-via'; readonly msg: SipResponse }
  | { readonly kind: 'reply'; readonly status: number; readonly refusal: Refusal; readonly headers?: readonly [string, string][] }
  | { readonly kind: 'drop'; readonly reason: string; readonly refusal?: Refusal };

export const hostPart = (h: string): string => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);

/** The device flow of a message that arrived on `flow` (its packet source, never its headers). */
export function deviceFlowOf(flow: Flow, self: EdgeSelf): DeviceFlowRef {
  return flow.transport === 'tcp' && flow.connectionId !== undefined
    ? { transport: 'tcp', address: flow.remoteAddress, port: flow.remotePort, connectionId: flow.connectionId, edge: self.code }
    : { transport: flow.transport, address: flow.remoteAddress, port: flow.remotePort };
}

/**
 * RFC 3261 §16.11: a stateless proxy's branch must be the same for a retransmission and differ per
 * request: derived from the incoming top branch (and the flow, so two devices' equal branches differ).
 */
export function branchFrom(top: string, salt: string): string {
  // hashString(`${top}|${salt}`) with two seeds, both in one pass and without building the key; written
  // as 16 hex digits by one fromCharCode (Number#toString(36) of a uint32 goes through fmod): this runs
  // for every keepalive through the edge
  let a = (FNV_OFFSET ^ 0x5eed) >>> 0;
  let b = (FNV_OFFSET ^ 0xb0b) >>> 0;
  for (let i = 0; i < top.length; i++) {
    const c = top.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, FNV_PRIME);
  }
  a = Math.imul(a ^ 124 /* | */, FNV_PRIME);
  b = Math.imul(b ^ 124, FNV_PRIME);
  for (let i = 0; i < salt.length; i++) {
    const c = salt.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, FNV_PRIME);
  }
  return BRANCH_PREFIX + hex16(fmix32(a), fmix32(b));
}

const FNV_OFFSET = 0x811c9dc5; // as @vms/routing hashString
const FNV_PRIME = 0x01000193;
const BRANCH_PREFIX = `${BRANCH_MAGIC_COOKIE}e`;
const hexDigit = (d: number): number => (d < 10 ? 48 + d : 87 + d);
function hex16(a: number, b: number): string {
  return String.fromCharCode(
    hexDigit(a >>> 28), hexDigit((a >>> 24) & 15), hexDigit((a >>> 20) & 15), hexDigit((a >>> 16) & 15),
    hexDigit((a >>> 12) & 15), hexDigit((a >>> 8) & 15), hexDigit((a >>> 4) & 15), hexDigit(a & 15),
    hexDigit(b >>> 28), hexDigit((b >>> 24) & 15), hexDigit((b >>> 20) & 15), hexDigit((b >>> 16) & 15),
    hexDigit((b >>> 12) & 15), hexDigit((b >>> 8) & 15), hexDigit((b >>> 4) & 15), hexDigit(b & 15),
  );
}

function branchFor(req: SipRequest, salt: string): string {
  return branchFrom(getTopVia(req).params.get('branch') ?? `${req.headers.get('Call-ID') ?? ''}|${req.headers.get('CSeq') ?? ''}`, salt);
}

/**
 * The edge's Via value (formatVia's shape, written directly: the datagram path writes the same one); towards
 * a device on TCP it says TCP, so the answer comes back on that connection (RFC 3261 §18.2.2).
 */
export function viaOf(self: EdgeSelf, branch: string, token: string | null, transport: 'udp' | 'tcp' = 'udp'): string {
  return `SIP/2.0/${transport === 'tcp' ? 'TCP' : 'UDP'} ${hostPart(self.host)}:${self.port};branch=${branch}${token === null ? '' : `;${FLOW_PARAM}=${token}`}`;
}

/** The headers with the first value of `name` removed (other hops and other headers in order). */
function withoutTop(headers: SipHeaders, name: 'Via' | 'Route'): SipHeaders {
  const out = new SipHeaders();
  let done = false;
  for (const [n, v] of headers.entries()) {
    if (!done && n === name) {
      done = true;
      const rest = splitHeaderValues(v).slice(1);
      if (rest.length > 0) out.append(n, rest.join(', '));
      continue;
    }
    out.append(n, v);
  }
  return out;
}

/** The headers with the top Route popped, and the next one too when it is also ours (double record-route). */
function withoutOwnRoutes(req: SipRequest, ctx: ForwardContext): SipHeaders {
  const headers = withoutTop(req.headers, 'Route');
  const next = getRouteSet(req, 'Route')[1];
  const ours = next !== undefined && (next.uri.params.has(FLOW_PARAM) || next.uri.params.has(SHARD_PARAM)) && next.uri.host.replace(/^\[|\]$/g, '') === ctx.self.host.replace(/^\[|\]$/g, '') && (next.uri.port ?? 5060) === ctx.self.port;
  return ours ? withoutTop(headers, 'Route') : headers;
}

function recordRoute(self: EdgeSelf, name: string, token: string, tcp: boolean): string {
  return `<sip:edge@${hostPart(self.host)}:${self.port};lr${tcp ? ';transport=tcp' : ''};${name}=${token}>`;
}

export function forwardRequest(req: SipRequest, flow: Flow, ctx: ForwardContext): ForwardAction {
  const mf = getMaxForwards(req) ?? DEFAULT_MAX_FORWARDS;
  if (mf <= 0) return { kind: 'reply', status: SipStatus.TooManyHops, refusal: 'hops' };
  const route = getRouteSet(req, 'Route')[0];
  const toShard = route?.uri.params.get(SHARD_PARAM);
  if (toShard !== undefined) {
    // device → shard inside a dialog this edge record-routed
    const ref = toShard === null ? null : ctx.codec.decode(toShard);
    // a shard flow over TCP only when this edge links to shards over TCP (never a device's connection)
    if (ref === null || (ref.transport === 'tcp' && (ref.connectionId !== undefined || ctx.shardTransport !== 'tcp'))) return { kind: 'reply', status: SipStatus.Forbidden, refusal: 'flow_token' };
    const token = ctx.codec.encode(deviceFlowOf(flow, ctx.self));
    const headers = withoutOwnRoutes(req, ctx);
    headers.prepend('Via', viaOf(ctx.self, branchFor(req, token), token));
    headers.set('Max-Forwards', String(mf - 1));
    return { kind: 'to-shard-flow', ref, msg: { ...req, headers } };
  }
  const routed = route?.uri.params.get(FLOW_PARAM);
  if (routed !== undefined) {
    // shard → device, through the Path (or Record-Route) this edge (or another holding the secret) recorded
    const ref = routed === null ? null : ctx.codec.decode(routed);
    if (routed === null || ref === null) return { kind: 'reply', status: SipStatus.Forbidden, refusal: 'flow_token' };
    const headers = withoutOwnRoutes(req, ctx);
    headers.prepend('Via', viaOf(ctx.self, branchFor(req, 'd'), null, ref.transport));
    headers.set('Max-Forwards', String(mf - 1));
    if (DIALOG_METHODS.has(req.method) && getTo(req).params.get('tag') === undefined) {
      // RFC 3261 §16.6 step 4: stay on the path of the dialog; the shard's flow is the packet's source (over
      // TCP the shard's listening port, its Via sent-by: the connection's own port may be an ephemeral one)
      const shardToken = ctx.codec.encode(
        flow.transport === 'tcp' && ctx.shardTransport === 'tcp'
          ? { transport: 'tcp', address: flow.remoteAddress, port: getTopVia(req).port ?? 5060 }
          : { transport: 'udp', address: flow.remoteAddress, port: flow.remotePort },
      );
      headers.prepend('Record-Route', `${recordRoute(ctx.self, SHARD_PARAM, shardToken, ref.transport === 'tcp')}, ${recordRoute(ctx.self, FLOW_PARAM, routed, ctx.shardTransport === 'tcp')}`);
    }
    return { kind: 'to-device', ref, msg: { ...req, headers } };
  }
  if (DEVICE_CALL_METHODS.has(req.method)) return forwardDeviceCall(req, flow, mf, ctx);
  if (!DEVICE_METHODS.has(req.method)) return { kind: 'reply', status: SipStatus.MethodNotAllowed, refusal: 'method', headers: [['Allow', ALLOWED_FROM_DEVICES]] };
  const deviceId = getFrom(req).uri.user;
  if (deviceId === null || !GB_ID.test(deviceId)) return { kind: 'reply', status: SipStatus.Forbidden, refusal: 'not_a_device' };
  ctx.devices?.learn(flow, deviceId);
  const shard = placeDevice(ctx.policy, ctx.shards(), deviceId);
  if (shard === null) return { kind: 'reply', status: SipStatus.ServiceUnavailable, refusal: 'no_shard', headers: [['Retry-After', '10']] };
  const token = ctx.codec.encode(deviceFlowOf(flow, ctx.self));
  const headers = req.headers.clone();
  headers.prepend('Via', viaOf(ctx.self, branchFor(req, token), token));
  headers.set('Max-Forwards', String(mf - 1));
  if (req.method === 'REGISTER') {
    // RFC 3327 §5: the registrar reaches the device through us; a device's own Path is not ours to vouch for
    headers.delete('Path');
    headers.append('Path', recordRoute(ctx.self, FLOW_PARAM, token, ctx.shardTransport === 'tcp'));
  }
  return { kind: 'to-shard', shard, deviceId, msg: { ...req, headers } };
}

/**
 * A device's INVITE out of dialog (GB/T 28181 §9.12), or the ACK/CANCEL of one: to the shard placement picks
 * for the device that spoke last on this flow — the shard that sent the Broadcast MESSAGE and waits for the
 * INVITE. The INVITE is record-routed twice like the shard's (RFC 5658), in the other order: the shard (UAS)
 * keeps the Record-Route in order and the device (UAC) reversed (RFC 3261 §12.1.1, §12.1.2), so the shard's
 * BYE arrives with `vms-f` on top (→ device) and the device's ACK and BYE with `vms-s` (→ shard).
 */
function forwardDeviceCall(req: SipRequest, flow: Flow, mf: number, ctx: ForwardContext): ForwardAction {
  const inDialog = getTo(req).params.get('tag') !== undefined;
  // an ACK for a 2xx carries our Route (handled above); without it, it acknowledges a non-2xx answer
  if (req.method === 'INVITE' && inDialog) return { kind: 'reply', status: SipStatus.CallTransactionDoesNotExist, refusal: 'method' }; // RFC 3261 §12.2.2: not a dialog through this edge
  const deviceId = ctx.devices?.deviceOn(flow);
  if (deviceId === undefined) {
    return req.method === 'ACK'
      ? { kind: 'drop', reason: 'ACK from a flow no device spoke on', refusal: 'unknown_flow' }
      : { kind: 'reply', status: SipStatus.TemporarilyUnavailable, refusal: 'unknown_flow', headers: [['Retry-After', '10']] };
  }
  const shard = placeDevice(ctx.policy, ctx.shards(), deviceId);
  if (shard === null) {
    return req.method === 'ACK'
      ? { kind: 'drop', reason: 'no eligible shard for an ACK', refusal: 'no_shard' }
      : { kind: 'reply', status: SipStatus.ServiceUnavailable, refusal: 'no_shard', headers: [['Retry-After', '10']] };
  }
  const token = ctx.codec.encode(deviceFlowOf(flow, ctx.self));
  const headers = req.headers.clone();
  // the same Via (branch and flow) for the INVITE, its CANCEL and its non-2xx ACK: the shard matches them
  headers.prepend('Via', viaOf(ctx.self, branchFor(req, token), token));
  headers.set('Max-Forwards', String(mf - 1));
  if (req.method === 'INVITE') {
    const shardToken = ctx.codec.encode({ transport: ctx.shardTransport ?? 'udp', address: shard.sipHost, port: shard.sipPort });
    headers.prepend('Record-Route', `${recordRoute(ctx.self, FLOW_PARAM, token, ctx.shardTransport === 'tcp')}, ${recordRoute(ctx.self, SHARD_PARAM, shardToken, flow.transport === 'tcp')}`);
  }
  return { kind: 'to-shard', shard, deviceId, msg: { ...req, headers } };
}

export function forwardResponse(res: SipResponse, ctx: ForwardContext): ForwardAction {
  const top = getTopVia(res);
  const port = top.port ?? 5060;
  const branch = top.params.get('branch') ?? '';
  if (port !== ctx.self.port || !branch.startsWith(`${BRANCH_MAGIC_COOKIE}e`)) return { kind: 'drop', reason: 'response not through this edge' };
  const headers = withoutTop(res.headers, 'Via');
  if (headers.get('Via') === undefined) return { kind: 'drop', reason: 'no Via left' };
  const msg: SipResponse = { ...res, headers };
  const token = top.params.get(FLOW_PARAM);
  if (token === undefined || token === null) return { kind: 'to-via', msg };
  const ref = ctx.codec.decode(token);
  return ref === null ? { kind: 'drop', reason: 'flow token not ours', refusal: 'flow_token' } : { kind: 'to-device', ref, msg };
}
