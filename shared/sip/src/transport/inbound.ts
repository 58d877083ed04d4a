import { SipParseError } from '../errors.ts';
import { getCallId, getCSeq, getFrom, getTo, getTopVia, replaceTopVia } from '../message/accessors.ts';
import { createResponse } from '../message/build.ts';
import { splitHeaderValues } from '../message/lex.ts';
import { parseSipMessage } from '../message/parse.ts';
import { serializeSipMessage } from '../message/serialize.ts';
import type { SipMessage, SipResponse, ViaHop } from '../message/types.ts';
import { formatVia } from '../message/via.ts';
import { reasonPhrase, SipStatus } from '../status.ts';
import type { Flow } from './flow.ts';
import { stampReceived } from './via-stamp.ts';

/**
 * The parser checks that the mandatory headers exist; matching needs them to parse too. A request
 * whose CSeq method differs from its method would match the wrong transaction (RFC 3261 §17.2.3
 * relies on it), so it is refused with a 400 here.
 */
export function checkRequiredHeaders(msg: SipMessage): void {
  getTopVia(msg);
  getFrom(msg);
  getTo(msg);
  getCallId(msg);
  const cseq = getCSeq(msg);
  if (msg.type === 'request' && cseq.method !== msg.method) {
    throw new SipParseError('SIP_ERR_HEADER_VALUE', 'CSeq method differs from request method', { request: msg, header: 'CSeq' }, true);
  }
}

/**
 * Replaces the top Via value (`top`, getTopVia's hop after stampReceived) in the first Via line, other
 * lines and hops untouched. In place: the header set is the parser's, not yet seen by anyone; its parses
 * stay (From, To), and `top` is kept as the new line's (replaceTopVia).
 */
export function rewriteTopVia(msg: SipMessage, top: ViaHop): void {
  const first = msg.headers.get('Via');
  if (first === undefined) return;
  const stamped = formatVia(top);
  let line = stamped;
  if (first.includes(',')) {
    const hops = splitHeaderValues(first);
    hops[0] = stamped;
    line = hops.join(', ');
  }
  replaceTopVia(msg, line, top);
}

const DETAIL: Partial<Record<SipParseError['code'], (e: SipParseError) => string>> = {
  SIP_ERR_START_LINE: () => 'Malformed Start Line',
  SIP_ERR_URI: () => 'Malformed Request-URI',
  SIP_ERR_HEADER: () => 'Malformed Header Line',
  SIP_ERR_HEADER_VALUE: (e) => `Malformed ${e.header ?? 'Header'}`,
  SIP_ERR_MISSING_HEADER: (e) => `Missing ${e.header ?? 'Header'}`,
  SIP_ERR_CONTENT_LENGTH: () => 'Bad Content-Length',
  SIP_ERR_BODY_TRUNCATED: () => 'Body Shorter Than Content-Length',
};

/**
 * RFC 3261 §18.3/§8.2: the response to a malformed-but-answerable request — 400 with a reason
 * phrase naming the problem (built from the error code and canonical header name only, never from
 * input bytes), or 505 for another SIP version. ACKs are never answered (§17.2.1).
 */
export function badRequestFor(err: SipParseError, flow: Flow, forceRport: boolean): SipResponse | undefined {
  const req = err.request;
  if (!err.answerable || req === undefined || req.method === 'ACK') return undefined;
  try {
    const top = getTopVia(req);
    if (stampReceived(top, flow.remoteAddress, flow.remotePort, forceRport)) rewriteTopVia(req, top);
  } catch {
    return undefined;
  }
  const status = err.sipStatus;
  const detail = status === SipStatus.BadRequest ? DETAIL[err.code]?.(err) : undefined;
  return createResponse(req, status, detail === undefined ? reasonPhrase(status) : `${reasonPhrase(status)} - ${detail}`);
}

/**
 * RFC 3261 §21.5.14 513 Message Too Large for a request refused by size, built from the start of it
 * that was held (`head`: the header section, complete or cut at the limit). Only when the request
 * line and the headers a response needs (§8.2.6: Via, From, To, Call-ID, CSeq) were read; ACKs and
 * responses get nothing.
 */
export function tooLargeResponse(head: Buffer, flow: Flow, forceRport: boolean): SipResponse | undefined {
  let end = head.indexOf('\r\n\r\n');
  if (end === -1) end = head.lastIndexOf('\n'); // cut at the limit: the last whole header line
  if (end > 0 && head[end - 1] === 13) end--;
  if (end <= 0) return undefined;
  let req: SipMessage | undefined;
  try {
    req = parseSipMessage(Buffer.concat([head.subarray(0, end), HEAD_END_NO_BODY]));
  } catch (err) {
    req = err instanceof SipParseError ? err.request : undefined;
  }
  if (req?.type !== 'request' || req.method === 'ACK') return undefined;
  try {
    checkRequiredHeaders(req);
    const top = getTopVia(req);
    if (stampReceived(top, flow.remoteAddress, flow.remotePort, forceRport)) rewriteTopVia(req, top);
  } catch {
    return undefined;
  }
  return createResponse(req, SipStatus.MessageTooLarge, reasonPhrase(SipStatus.MessageTooLarge));
}

/** Ends a header section and makes its declared body empty, so a head alone parses. */
const HEAD_END_NO_BODY = Buffer.from('\r\nContent-Length: 0\r\n\r\n', 'latin1');

/**
 * Retransmissions send the very same message object again; serialising it once keeps Timer A/E/G
 * cheap. Messages must not be mutated after their first send (the stack never does).
 */
export class MessageSerializer {
  readonly #cache = new WeakMap<SipMessage, Buffer>();

  serialize(msg: SipMessage): Buffer {
    let data = this.#cache.get(msg);
    if (data === undefined) {
      data = serializeSipMessage(msg);
      this.#cache.set(msg, data);
    }
    return data;
  }
}
