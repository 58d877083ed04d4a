import { getCallId, getContacts, getCSeq, getFrom, getRouteSet, getTo } from '../message/accessors.ts';
import { SipHeaders } from '../message/headers.ts';
import { formatNameAddr } from '../message/name-addr.ts';
import type { NameAddr, SipRequest, SipResponse, SipUri } from '../message/types.ts';
import { formatUri } from '../message/uri.ts';

export type DialogKind = 'invite' | 'subscribe';
export type DialogRole = 'uac' | 'uas';

/**
 * RFC 3261 §12 dialog state, pure data. Built from the dialog-creating request/response pair and
 * advanced by in-dialog requests; the `Dialog` object wraps it with I/O.
 */
export interface DialogState {
  readonly kind: DialogKind;
  readonly role: DialogRole;
  readonly callId: string;
  readonly localTag: string;
  /** '' when the peer never sent a tag: GB28181 devices sometimes answer INVITE without a To-tag. */
  readonly remoteTag: string;
  /** Local/remote URI as name-addr, tag parameter removed (re-added when formatting). */
  readonly local: NameAddr;
  readonly remote: NameAddr;
  /** null until the first request is sent (UAS side, §12.1.1: "local sequence number MUST be empty"). */
  localSeq: number | null;
  remoteSeq: number | null;
  /** Route set in the order Route headers are written (§12.1.1 / §12.1.2). */
  readonly routeSet: readonly NameAddr[];
  remoteTarget: SipUri;
  /** §12.1.1: request over TLS with a sips Request-URI; we carry no TLS, so sips URIs only. */
  readonly secure: boolean;
}

export function dialogId(callId: string, localTag: string, remoteTag: string): string {
  return `${callId};${localTag};${remoteTag}`;
}

export function stateId(s: DialogState): string {
  return dialogId(s.callId, s.localTag, s.remoteTag);
}

function withoutTag(n: NameAddr): NameAddr {
  const params = new Map(n.params);
  params.delete('tag');
  return { displayName: n.displayName, uri: n.uri, params };
}

function tagOf(n: NameAddr): string {
  return n.params.get('tag') ?? '';
}

/** §12.1.2: UAC side, from the request we sent and a 2xx (or tagged 1xx) answering it. */
export function createUacDialogState(req: SipRequest, res: SipResponse, kind: DialogKind): DialogState {
  const from = getFrom(req);
  const to = getTo(res);
  const contact = getContacts(res)[0];
  return {
    kind,
    role: 'uac',
    callId: getCallId(req),
    localTag: tagOf(from),
    remoteTag: tagOf(to),
    local: withoutTag(from),
    remote: withoutTag(getTo(req)),
    localSeq: getCSeq(req).seq,
    remoteSeq: null,
    // §12.1.2: Record-Route of the response, reversed.
    routeSet: getRouteSet(res, 'Record-Route').reverse(),
    // A 2xx without Contact is broken, but some devices send it: keep talking to the Request-URI.
    remoteTarget: contact !== undefined && contact.wildcard !== true ? contact.uri : req.uri,
    secure: req.uri.scheme === 'sips',
  };
}

/** §12.1.1: UAS side, from the received request and the To-tag we answer with. */
export function createUasDialogState(req: SipRequest, localTag: string, kind: DialogKind): DialogState {
  const from = getFrom(req);
  const contact = getContacts(req)[0];
  return {
    kind,
    role: 'uas',
    callId: getCallId(req),
    localTag,
    remoteTag: tagOf(from),
    local: withoutTag(getTo(req)),
    remote: withoutTag(from),
    localSeq: null,
    remoteSeq: getCSeq(req).seq,
    routeSet: getRouteSet(req, 'Record-Route'),
    // No Contact (seen from GB28181 devices): the From URI is the best remaining guess.
    remoteTarget: contact !== undefined && contact.wildcard !== true ? contact.uri : from.uri,
    secure: req.uri.scheme === 'sips',
  };
}

export interface InDialogRequestOptions {
  body?: Buffer | string;
  /** Extra headers appended after the dialog ones. */
  headers?: Iterable<readonly [string, string]>;
  contact?: string;
}

const INITIAL_LOCAL_SEQ = 1; // §12.2.1.1 → §8.1.1.5: any value below 2**31

/**
 * §12.2.1.1: a request within the dialog (no Via: the sender pushes its own). Consumes a local
 * CSeq number except for ACK (which reuses the INVITE's, §13.2.2.4) and CANCEL (§9.1).
 */
export function createInDialogRequest(s: DialogState, method: string, opts: InDialogRequestOptions = {}, ackSeq?: number): SipRequest {
  let seq: number;
  if (method === 'ACK' || method === 'CANCEL') {
    seq = ackSeq ?? s.localSeq ?? INITIAL_LOCAL_SEQ;
  } else {
    seq = s.localSeq === null ? INITIAL_LOCAL_SEQ : s.localSeq + 1;
    s.localSeq = seq;
  }
  const { requestUri, routes } = routeFor(s);
  const h = new SipHeaders();
  h.append('Max-Forwards', '70');
  for (const r of routes) h.append('Route', r);
  h.append('From', formatNameAddr(tagged(s.local, s.localTag)));
  h.append('To', formatNameAddr(tagged(s.remote, s.remoteTag)));
  h.append('Call-ID', s.callId);
  h.append('CSeq', `${seq} ${method}`);
  if (opts.contact !== undefined) h.append('Contact', opts.contact);
  for (const [n, v] of opts.headers ?? []) h.append(n, v);
  const body = opts.body === undefined ? Buffer.alloc(0) : typeof opts.body === 'string' ? Buffer.from(opts.body, 'utf8') : opts.body;
  return { type: 'request', method, uri: requestUri, rawUri: formatUri(requestUri), headers: h, body };
}

function tagged(n: NameAddr, tag: string): NameAddr {
  if (tag === '') return n;
  const params = new Map(n.params);
  params.set('tag', tag);
  return { displayName: n.displayName, uri: n.uri, params };
}

/**
 * §12.2.1.1: loose routing (first route has `lr`) keeps the remote target as Request-URI; a strict
 * router gets the Request-URI and the remote target goes last in Route.
 */
export function routeFor(s: DialogState): { requestUri: SipUri; routes: string[] } {
  const first = s.routeSet[0];
  if (first === undefined) return { requestUri: s.remoteTarget, routes: [] };
  if (first.uri.params.has('lr')) return { requestUri: s.remoteTarget, routes: s.routeSet.map(formatNameAddr) };
  const params = new Map(first.uri.params);
  params.delete('method'); // §19.1.1 table: not allowed in a Request-URI
  params.delete('maddr');
  params.delete('ttl');
  params.delete('transport');
  const requestUri: SipUri = { ...first.uri, params, headers: new Map() };
  const routes = s.routeSet.slice(1).map(formatNameAddr);
  routes.push(`<${formatUri(s.remoteTarget)}>`);
  return { requestUri, routes };
}

/** Methods whose Contact replaces the remote target (§12.2, RFC 6665 §4.1.2.4 for NOTIFY/SUBSCRIBE). */
const TARGET_REFRESH = new Set(['INVITE', 'UPDATE', 'SUBSCRIBE', 'NOTIFY', 'REFER']);

/**
 * §12.2.2: a request from the peer within the dialog. Lower CSeq than the last one → 'out-of-order'
 * (answer 500); otherwise remote CSeq and (for target refreshes) remote target advance.
 * ACK and CANCEL carry the INVITE's number and are not ordered.
 */
export function acceptInDialogRequest(s: DialogState, req: SipRequest): 'ok' | 'out-of-order' {
  if (req.method === 'ACK' || req.method === 'CANCEL') return 'ok';
  const seq = getCSeq(req).seq;
  if (s.remoteSeq !== null && seq < s.remoteSeq) return 'out-of-order';
  s.remoteSeq = seq;
  if (TARGET_REFRESH.has(req.method)) {
    const contact = getContacts(req)[0];
    if (contact !== undefined && contact.wildcard !== true) s.remoteTarget = contact.uri;
  }
  return 'ok';
}
