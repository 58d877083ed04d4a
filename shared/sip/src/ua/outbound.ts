import { isIP } from 'node:net';
import { getCSeq, getFrom, getRouteSet } from '../message/accessors.ts';
import { DEFAULT_MAX_FORWARDS, generateBranch, generateCallId, generateTag } from '../message/build.ts';
import { SipHeaders } from '../message/headers.ts';
import { parseNameAddr } from '../message/name-addr.ts';
import type { SipRequest, SipUri } from '../message/types.ts';
import { formatUri, parseUri } from '../message/uri.ts';
import { isFlow, parseTransportName, type HostTarget, type SendTarget, type TransportName } from '../transport/flow.ts';
import { DEFAULT_SIP_PORT } from '../transport/via-stamp.ts';
import { SipStackError } from '../errors.ts';
import { headerEntries, toBody } from '../message/header-input.ts';
import type { OutgoingRequestSpec } from './types.ts';


/** How the stack names itself in Via, Contact, User-Agent. */
export interface LocalIdentity {
  host: string;
  port: number;
  userAgent?: string | undefined;
  transports: readonly TransportName[];
}

const hostPort = (host: string, port: number): string => `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;

/** Our Contact: the From user at our address; `;transport=tcp` so the peer calls back over TCP. */
export function contactFor(local: LocalIdentity, user: string | null, transport: TransportName): string {
  const u = user === null || user === '' ? '' : `${user}@`;
  return `<sip:${u}${hostPort(local.host, local.port)}${transport === 'tcp' ? ';transport=tcp' : ''}>`;
}

/** Methods that establish or refresh a dialog or binding carry a Contact (RFC 3261 §8.1.1.8, §10.2). */
const NEEDS_CONTACT = new Set(['INVITE', 'SUBSCRIBE', 'REGISTER', 'REFER', 'NOTIFY', 'UPDATE']);

/**
 * A request from the app's spec with the RFC 3261 §8.1.1 header set completed: From tag, To,
 * Call-ID, CSeq, Max-Forwards, Contact where needed, User-Agent. No Via yet: that needs the
 * transport, which `addVia` writes just before sending.
 */
export function buildRequest(spec: OutgoingRequestSpec, local: LocalIdentity, transport: TransportName): SipRequest {
  const method = spec.method;
  let uri: SipUri;
  try {
    uri = typeof spec.uri === 'string' ? parseUri(spec.uri) : spec.uri;
  } catch (err) {
    throw new SipStackError('SIP_ERR_BAD_ARGUMENT', 'invalid Request-URI', { cause: err });
  }
  const given = new SipHeaders(headerEntries(spec.headers));
  const h = new SipHeaders();
  h.append('Max-Forwards', given.get('Max-Forwards') ?? String(DEFAULT_MAX_FORWARDS));
  for (const r of given.getLines('Route')) h.append('Route', r);
  const from = given.get('From') ?? `<sip:${hostPort(local.host, local.port)}>`;
  h.append('From', /;\s*tag\s*=/i.test(from) ? from : `${from};tag=${generateTag()}`);
  h.append('To', given.get('To') ?? `<${formatUri(uri)}>`);
  h.append('Call-ID', given.get('Call-ID') ?? generateCallId());
  h.append('CSeq', given.get('CSeq') ?? `1 ${method}`);
  if (given.has('Contact')) for (const c of given.getLines('Contact')) h.append('Contact', c);
  else if (NEEDS_CONTACT.has(method)) h.append('Contact', contactFor(local, fromUser(h), transport));
  if (local.userAgent !== undefined && !given.has('User-Agent')) h.append('User-Agent', local.userAgent);
  const skip = new Set(['max-forwards', 'route', 'from', 'to', 'call-id', 'cseq', 'contact', 'via', 'content-length']);
  for (const [n, v] of given.entries()) if (!skip.has(n.toLowerCase())) h.append(n, v);
  const body = toBody(spec.body);
  if (spec.contentType !== undefined && !h.has('Content-Type')) h.append('Content-Type', spec.contentType);
  const req: SipRequest = { type: 'request', method, uri, rawUri: formatUri(uri), headers: h, body };
  try {
    if (getCSeq(req).method !== method) throw new Error('CSeq method differs from request method');
    getFrom(req);
  } catch (err) {
    throw new SipStackError('SIP_ERR_BAD_ARGUMENT', 'invalid request headers', { cause: err });
  }
  return req;
}

function fromUser(h: SipHeaders): string | null {
  try {
    return parseNameAddr(h.get('From') ?? '').uri.user;
  } catch {
    return null;
  }
}

/** Pushes our Via with a fresh branch (RFC 3261 §8.1.1.7) and `;rport` (RFC 3581 §3). */
export function addVia(req: SipRequest, local: LocalIdentity, transport: TransportName): string {
  const branch = generateBranch();
  req.headers.prepend('Via', `SIP/2.0/${transport.toUpperCase()} ${hostPort(local.host, local.port)};rport;branch=${branch}`);
  return branch;
}

/** Host target from a URI: host, port (default 5060), `transport=` (default UDP when enabled). */
export function uriTarget(uri: SipUri, supported: readonly TransportName[]): HostTarget {
  const host = uri.host.startsWith('[') ? uri.host.slice(1, -1) : uri.host;
  const wanted = parseTransportName(uri.params.get('transport'));
  const transport = wanted ?? (supported.includes('udp') ? 'udp' : 'tcp');
  return { host, port: uri.port ?? DEFAULT_SIP_PORT, transport };
}

/**
 * RFC 3261 §8.1.2: the first Route if any (loose routing), else the Request-URI — unless the app
 * names a target. A flow target keeps a host fallback (the URI, same transport) for when its TCP
 * connection has gone away.
 */
export function resolveTarget(
  req: SipRequest,
  explicit: SendTarget | undefined,
  supported: readonly TransportName[],
): { target: SendTarget; fallback?: HostTarget } {
  let nextHop: HostTarget;
  try {
    const route = getRouteSet(req, 'Route')[0];
    nextHop = uriTarget(route?.uri ?? req.uri, supported);
  } catch (err) {
    throw new SipStackError('SIP_ERR_BAD_ARGUMENT', 'invalid Route header', { cause: err });
  }
  const target = explicit ?? nextHop;
  if (!supported.includes(target.transport)) {
    throw new SipStackError('SIP_ERR_BAD_ARGUMENT', `transport ${target.transport} is not enabled`);
  }
  if (explicit !== undefined && isFlow(explicit)) return { target, fallback: { ...nextHop, transport: explicit.transport } };
  return { target };
}
