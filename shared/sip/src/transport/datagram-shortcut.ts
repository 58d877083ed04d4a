/**
 * Stateless answers straight from a datagram's bytes (RFC 3261 §8.2.7), for the one kind of traffic
 * where parsing every header, building a message object and serialising it again costs more than
 * everything else together: high-rate out-of-dialog requests such as GB28181 Keepalive MESSAGEs.
 *
 * `peekDatagramRequest` reads only the request line, the headers a response copies (§8.2.6.2: Via,
 * From, To, Call-ID, CSeq) and the body. Anything not plain — folded lines, a line that is not a
 * header, a missing or repeated mandatory header, a CSeq method other than the request method, a
 * Content-Length that disagrees with the datagram, an unparsable top Via, a To-tag — returns undefined,
 * and the datagram takes the ordinary parser, which validates and answers it properly. What the
 * shortcut does not check is the syntax of what it only copies (Request-URI, From, To, Call-ID, other
 * header names): such a request, which the parser would answer 400, gets the handler's answer instead.
 * That leniency is deliberate for the traffic it serves (keepalives), whose bodies the handler checks.
 */
import { splitHeaderValues } from '../message/lex.ts';
import { formatVia, parseViaHop } from '../message/via.ts';
import { reasonPhrase } from '../status.ts';
import type { Flow } from './flow.ts';
import { responseDestination, stampReceived } from './via-stamp.ts';

/** A request read just enough to answer it statelessly. Header values are raw (latin1), trimmed. */
export interface PeekedRequest {
  readonly method: string;
  /** Every Via header line, in order (a line may hold several comma-separated hops). */
  readonly via: readonly string[];
  readonly from: string;
  readonly to: string;
  readonly callId: string;
  readonly cseq: string;
  readonly body: Buffer;
}

const HEADER_END = Buffer.from('\r\n\r\n', 'latin1');
/** Compact forms (RFC 3261 §7.3.3) of the headers read here. */
const NAMES: Readonly<Record<string, 'via' | 'from' | 'to' | 'callId' | 'cseq' | 'length'>> = {
  via: 'via',
  v: 'via',
  from: 'from',
  f: 'from',
  to: 'to',
  t: 'to',
  'call-id': 'callId',
  i: 'callId',
  cseq: 'cseq',
  'content-length': 'length',
  l: 'length',
};
/** First letters of the names in NAMES, lower case: v f t i c l. */
const FIRST_LETTERS = new Set([...'vfticl'].map((ch) => ch.charCodeAt(0)));
const REQUEST_LINE = /^([A-Za-z]+) \S+ SIP\/2\.0$/;
const CSEQ = /^(\d{1,10})[ \t]+([A-Za-z]+)$/;
const TO_TAG = /;\s*tag\s*=/i;

export function peekDatagramRequest(data: Buffer): PeekedRequest | undefined {
  const end = data.indexOf(HEADER_END);
  if (end < 0) return undefined;
  // One latin1 string for the header section, scanned in place: only the headers read here are sliced.
  const head = data.toString('latin1', 0, end);
  let eol = head.indexOf('\r\n');
  if (eol < 0) eol = head.length;
  const method = REQUEST_LINE.exec(head.slice(0, eol))?.[1];
  if (method === undefined) return undefined;
  const via: string[] = [];
  const single: { from?: string; to?: string; callId?: string; cseq?: string; length?: string } = {};
  for (let pos = eol + 2; pos < head.length; pos = eol + 2) {
    eol = head.indexOf('\r\n', pos);
    if (eol < 0) eol = head.length;
    const c = head.charCodeAt(pos) | 0x20; // ASCII letters lower-cased; SP stays 32, HT becomes 41
    if (c === 32 || c === 41) return undefined; // folded header line: leave it to the parser
    const colon = head.indexOf(':', pos);
    if (colon < 0 || colon >= eol || colon === pos) return undefined; // not a header line: the parser answers 400
    if (!FIRST_LETTERS.has(c)) continue; // not a header read here: skip without slicing
    const key = NAMES[head.slice(pos, colon).trim().toLowerCase()];
    if (key === undefined) continue;
    const value = head.slice(colon + 1, eol).trim();
    if (key === 'via') via.push(value);
    else if (single[key] !== undefined) return undefined;
    else single[key] = value;
  }
  const { from, to, callId, cseq, length } = single;
  if (via.length === 0 || from === undefined || to === undefined || callId === undefined || cseq === undefined) return undefined;
  if (CSEQ.exec(cseq)?.[2] !== method) return undefined;
  const body = data.subarray(end + HEADER_END.length);
  if (length !== undefined && (!/^\d{1,10}$/.test(length) || Number(length) !== body.length)) return undefined;
  if (TO_TAG.test(to.slice(to.lastIndexOf('>') + 1))) return undefined; // in-dialog: never stateless
  return { method, via, from, to, callId, cseq, body };
}

/** Where a stateless answer goes and the top Via it copies, stamped like every inbound request. */
export interface StampedVia {
  /** The first Via line with its top hop stamped (received / rport). */
  readonly topVia: string;
  readonly host: string;
  readonly port: number;
}

/**
 * §18.2.1 / RFC 3581 §4 stamping of the top Via, and the response destination (§18.2.2). Undefined
 * when the top Via does not parse (the parser then answers 400).
 */
export function stampDatagramVia(req: PeekedRequest, flow: Flow, forceRport: boolean): StampedVia | undefined {
  const hops = splitHeaderValues(req.via[0] as string);
  let top;
  try {
    top = parseViaHop(hops[0] ?? '');
  } catch {
    return undefined;
  }
  if (stampReceived(top, flow.remoteAddress, flow.remotePort, forceRport)) hops[0] = formatVia(top);
  const dest = responseDestination(top);
  return { topVia: hops.join(', '), host: dest.host, port: dest.port };
}

/** §8.2.6.2: Via (the stamped top line, then the others), From, To with our tag, Call-ID, CSeq. */
export function buildDatagramResponse(req: PeekedRequest, via: StampedVia, status: number, toTag: string, server?: string): Buffer {
  const lines = [`SIP/2.0 ${status} ${reasonPhrase(status)}`, `Via: ${via.topVia}`];
  for (let i = 1; i < req.via.length; i++) lines.push(`Via: ${req.via[i]}`);
  lines.push(`From: ${req.from}`, `To: ${req.to};tag=${toTag}`, `Call-ID: ${req.callId}`, `CSeq: ${req.cseq}`);
  if (server !== undefined) lines.push(`Server: ${server}`);
  lines.push('Content-Length: 0', '', '');
  return Buffer.from(lines.join('\r\n'), 'latin1');
}
