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
import { writeStatelessTag } from '../ua/stateless-tag.ts';
import { stampCanonicalViaAt } from './canonical-via.ts';
import type { Flow } from './flow.ts';
import { responseDestination, stampReceived } from './via-stamp.ts';

/** Buffer's latin1 decoder, which toString('latin1') ends in (on Buffer.prototype, undocumented). */
interface LatinSliceable {
  latin1Slice(start: number, end: number): string;
}

/**
 * The whole datagram as latin1 text. Calls the decoder toString('latin1') ends in, skipping its
 * argument handling (measurable per keepalive); falls back to toString if a Node version lacks it.
 */
const decodeLatin1: (data: Buffer) => string =
  typeof (Buffer.prototype as Partial<LatinSliceable>).latin1Slice === 'function'
    ? (data) => (data as Buffer & LatinSliceable).latin1Slice(0, data.length)
    : (data) => data.toString('latin1');

/** A request read just enough to answer it statelessly. Header values are raw (latin1), trimmed. */
export interface PeekedRequest {
  readonly method: string;
  /** Every Via header line, in order (a line may hold several comma-separated hops). */
  readonly via: readonly string[];
  /** The first Via line (via[0]). */
  readonly topVia: string;
  /** Where the first Via value lies in `text` ([viaStart, viaEnd)), for stamping it in place. */
  readonly viaStart: number;
  readonly viaEnd: number;
  readonly from: string;
  readonly to: string;
  readonly callId: string;
  readonly cseq: string;
  /** Raw Content-Type value, for handlers that must refuse other media types as the full path does. */
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** The whole datagram as latin1 text, the body from `bodyStart` (StatelessRequest.text). */
  readonly text: string;
  readonly bodyStart: number;
  /** Whether a header of this name is present (scans the header section: for rare decisions). */
  hasHeader(name: string): boolean;
  /** The first header of this name, its value trimmed (scans the header section, as hasHeader). */
  header(name: string): string | undefined;
}

// Header keys read here (RFC 3261 §7.3.3 compact forms included); OTHER is skipped without slicing.
const OTHER = 0;
const VIA = 1;
const FROM = 2;
const TO = 3;
const CALL_ID = 4;
const CSEQ = 5;
const LENGTH = 6;
const TYPE = 7;
const TO_TAG = /;\s*tag\s*=/i;
const MAX_LENGTH_DIGITS = 10;

/**
 * One latin1 string for the whole datagram, scanned by char codes in place: header names are
 * recognised without slicing or lower-casing, and only the values read here are sliced (a slice of a
 * flat string is not a copy). This runs for every keepalive of the fleet, hence no regex, no
 * per-header allocation.
 */
export function peekDatagramRequest(data: Buffer): PeekedRequest | undefined {
  const text = decodeLatin1(data);
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  let eol = text.indexOf('\r\n');
  const method = requestLineMethod(text, eol);
  if (method === undefined) return undefined;
  const via: string[] = [];
  let viaStart = -1;
  let viaEnd = -1;
  let from: string | undefined;
  let to: string | undefined;
  let callId: string | undefined;
  let cseq: string | undefined;
  let type: string | undefined;
  let length = -1;
  for (let pos = eol + 2; pos < end; pos = eol + 2) {
    const c = text.charCodeAt(pos);
    if (c === 32 || c === 9) return undefined; // folded header line: leave it to the parser
    eol = text.indexOf('\r\n', pos); // the last header line's CRLF is at `end`
    const colon = text.indexOf(':', pos);
    if (colon < 0 || colon >= eol || colon === pos) return undefined; // not a header line: the parser answers 400
    const key = headerKey(text, pos, colon);
    if (key === OTHER) continue;
    let a = colon + 1;
    let b = eol;
    while (a < b && isLws(text.charCodeAt(a))) a++;
    while (b > a && isLws(text.charCodeAt(b - 1))) b--;
    if (key === LENGTH) {
      if (length >= 0 || b === a || b - a > MAX_LENGTH_DIGITS) return undefined;
      length = 0;
      for (let k = a; k < b; k++) {
        const d = text.charCodeAt(k) - 48;
        if (d < 0 || d > 9) return undefined;
        length = length * 10 + d;
      }
      continue;
    }
    const value = text.slice(a, b);
    if (key === VIA) {
      if (via.length === 0) {
        viaStart = a;
        viaEnd = b;
      }
      via.push(value);
    }
    else if (key === FROM) {
      if (from !== undefined) return undefined;
      from = value;
    } else if (key === TO) {
      if (to !== undefined) return undefined;
      to = value;
    } else if (key === CALL_ID) {
      if (callId !== undefined) return undefined;
      callId = value;
    } else if (key === CSEQ) {
      if (cseq !== undefined) return undefined;
      cseq = value;
    } else {
      if (type !== undefined) return undefined;
      type = value;
    }
  }
  if (via.length === 0 || from === undefined || to === undefined || callId === undefined || cseq === undefined) return undefined;
  if (!cseqMatches(cseq, method)) return undefined;
  const bodyStart = end + 4;
  if (length >= 0 && length !== text.length - bodyStart) return undefined;
  if (to.includes(';') && TO_TAG.test(to.slice(to.lastIndexOf('>') + 1))) return undefined; // in-dialog: never stateless
  return new Peeked(data, method, via, viaStart, viaEnd, from, to, callId, cseq, type, text, bodyStart);
}

/** A PeekedRequest whose body view is made only when asked for (the keepalive handler reads `text`). */
class Peeked implements PeekedRequest {
  readonly #data: Buffer;
  constructor(
    data: Buffer,
    readonly method: string,
    readonly via: readonly string[],
    readonly viaStart: number,
    readonly viaEnd: number,
    readonly from: string,
    readonly to: string,
    readonly callId: string,
    readonly cseq: string,
    readonly contentType: string | undefined,
    readonly text: string,
    readonly bodyStart: number,
  ) {
    this.#data = data;
  }

  get body(): Buffer {
    return this.#data.subarray(this.bodyStart);
  }

  get topVia(): string {
    return this.via[0] as string;
  }

  hasHeader(name: string): boolean {
    return headerSectionValue(this.text, this.bodyStart - 4, name) !== undefined;
  }

  header(name: string): string | undefined {
    return headerSectionValue(this.text, this.bodyStart - 4, name);
  }
}

/**
 * The value (LWS-trimmed) of the first header line of `text` before `end` named `name`
 * (case-insensitive, LWS before the colon allowed), or undefined. Only the value found is sliced.
 */
export function headerSectionValue(text: string, end: number, name: string): string | undefined {
  const n = name.length;
  for (let pos = text.indexOf('\r\n') + 2; pos > 1 && pos < end; ) {
    const eol = text.indexOf('\r\n', pos);
    const lineEnd = eol < 0 || eol > end ? end : eol;
    if (lineEnd - pos > n && nameAt(text, pos, name)) {
      let k = pos + n;
      while (k < lineEnd && isLws(text.charCodeAt(k))) k++;
      if (text.charCodeAt(k) === 58) {
        // ':'
        let a = k + 1;
        let b = lineEnd;
        while (a < b && isLws(text.charCodeAt(a))) a++;
        while (b > a && isLws(text.charCodeAt(b - 1))) b--;
        return text.slice(a, b);
      }
    }
    if (eol < 0) return undefined;
    pos = eol + 2;
  }
  return undefined;
}

/** Whether `text` at `at` spells `name`, ASCII letters compared without case. */
function nameAt(text: string, at: number, name: string): boolean {
  for (let k = 0; k < name.length; k++) {
    const c = text.charCodeAt(at + k);
    const w = name.charCodeAt(k);
    if (c !== w && ((c | 0x20) !== (w | 0x20) || (w | 0x20) < 97 || (w | 0x20) > 122)) return false;
  }
  return true;
}

/**
 * `Method SP Request-URI SP SIP/2.0 CRLF` (§7.1) at the start, the URI one token (no char ≤ SP, so
 * this CRLF is the first one). A regex: its compiled loop costs less per char than charCodeAt.
 */
const REQUEST_LINE = /[A-Za-z]+ [^\x00-\x20]+ SIP\/2\.0\r\n/y;

/** The method token of the request line that ends at `eol`, or undefined. */
function requestLineMethod(text: string, eol: number): string | undefined {
  REQUEST_LINE.lastIndex = 0;
  if (!REQUEST_LINE.test(text) || REQUEST_LINE.lastIndex !== eol + 2) return undefined;
  return text.slice(0, text.indexOf(' '));
}

/** `CSeq: 1*10DIGIT LWS Method`, the method equal to the request's (§8.1.1.5, §17.2.3). */
function cseqMatches(cseq: string, method: string): boolean {
  let i = 0;
  while (i < cseq.length && isDigit(cseq.charCodeAt(i))) i++;
  if (i === 0 || i > 10) return false;
  const digitsEnd = i;
  while (i < cseq.length && isLws(cseq.charCodeAt(i))) i++;
  return i > digitsEnd && cseq.length - i === method.length && cseq.startsWith(method, i);
}

/** The header read here that `text[start, colon)` names (trailing LWS allowed), case-insensitively. */
function headerKey(text: string, start: number, colon: number): number {
  let end = colon;
  while (end > start && isLws(text.charCodeAt(end - 1))) end--;
  switch (end - start) {
    case 1:
      switch (text.charCodeAt(start) | 0x20) {
        case 118: return VIA; // v
        case 102: return FROM; // f
        case 116: return TO; // t
        case 105: return CALL_ID; // i
        case 108: return LENGTH; // l
        case 99: return TYPE; // c
        default: return OTHER;
      }
    case 2: return named(text, start, 'To', 'to', TO);
    case 3: return named(text, start, 'Via', 'via', VIA);
    case 4: return named(text, start, 'From', 'from', FROM) || named(text, start, 'CSeq', 'cseq', CSEQ);
    case 7: return named(text, start, 'Call-ID', 'call-id', CALL_ID);
    case 12: return named(text, start, 'Content-Type', 'content-type', TYPE);
    case 14: return named(text, start, 'Content-Length', 'content-length', LENGTH);
    default: return OTHER;
  }
}

/**
 * `key` when text at `start` spells `lower` in any letter case (only letters fold), else OTHER. The
 * usual spelling (`usual`, RFC 3261 §20) is tried first with one built-in comparison.
 */
function named(text: string, start: number, usual: string, lower: string, key: number): number {
  if (text.startsWith(usual, start)) return key;
  for (let k = 0; k < lower.length; k++) {
    const c = text.charCodeAt(start + k);
    const w = lower.charCodeAt(k);
    if (c !== w && !(w >= 97 && w <= 122 && c === w - 32)) return OTHER;
  }
  return key;
}

const isLws = (c: number): boolean => c === 32 || c === 9;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** Where a stateless answer goes and the top Via it copies, stamped like every inbound request. */
export interface StampedVia {
  /** The first Via line with its top hop stamped (received / rport). */
  readonly topVia: string;
  readonly host: string;
  readonly port: number;
}

/**
 * §18.2.1 / RFC 3581 §4 stamping of the top Via, and the response destination (§18.2.2). Undefined
 * when the top Via does not parse (the parser then answers 400). The canonical shape devices send is
 * stamped without a parse (canonical-via.ts); anything else is parsed, stamped and formatted.
 */
export function stampDatagramVia(req: PeekedRequest, flow: Flow, forceRport: boolean): StampedVia | undefined {
  const first = req.via[0] as string;
  const fast = stampCanonicalViaAt(req.text, req.viaStart, req.viaEnd, flow.remoteAddress, flow.remotePort, forceRport);
  if (fast !== undefined) return { topVia: fast.line, host: fast.host, port: fast.port };
  const hops = splitHeaderValues(first);
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

/** `SIP/2.0 <status> <reason>` CRLF `Via: `, one string per status (answers use a handful). */
const statusLines = new Map<number, string>();
function statusLineAndVia(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `SIP/2.0 ${status} ${reasonPhrase(status)}\r\nVia: `;
    if (statusLines.size < 64) statusLines.set(status, line);
  }
  return line;
}

/** CRLF after CSeq, the Server header when given, an empty body: the same for every answer of a stack. */
let lastServer: string | undefined;
let lastTail = '\r\nContent-Length: 0\r\n\r\n';
function responseTail(server: string | undefined): string {
  if (server !== lastServer) {
    lastTail = `\r\n${server === undefined ? '' : `Server: ${server}\r\n`}Content-Length: 0\r\n\r\n`;
    lastServer = server;
  }
  return lastTail;
}

/** Placeholder for the To-tag in the response text; the tag's 16 hex digits overwrite it in the bytes. */
const TAG_SPACE = '0000000000000000';

/**
 * §8.2.6.2: Via (the stamped top line, then the others), From, To with the stateless To-tag, Call-ID,
 * CSeq. The tag (§8.2.7, stateless-tag.ts) is hashed from the response's own bytes, where the stamped
 * top Via, Call-ID, From and CSeq have just been written (latin1: one byte per char, so offsets in the
 * text are offsets in the bytes).
 */
export function buildDatagramResponse(req: PeekedRequest, via: StampedVia, status: number, server?: string, headers?: readonly (readonly [string, string])[]): Buffer {
  let text = statusLineAndVia(status);
  const via0 = text.length;
  text += `${via.topVia}\r\n`;
  for (let i = 1; i < req.via.length; i++) text += `Via: ${req.via[i]}\r\n`;
  const from0 = text.length + 'From: '.length;
  text += `From: ${req.from}\r\nTo: ${req.to};tag=`;
  const tagAt = text.length;
  text += `${TAG_SPACE}\r\nCall-ID: `;
  const callId0 = text.length;
  text += `${req.callId}\r\nCSeq: `;
  const cseq0 = text.length;
  text += req.cseq;
  if (headers !== undefined) for (const [name, value] of headers) text += `\r\n${name}: ${value}`;
  const out = Buffer.from(text + responseTail(server), 'latin1');
  writeStatelessTag(out, via0, via0 + via.topVia.length, callId0, callId0 + req.callId.length, from0, from0 + req.from.length, cseq0, cseq0 + req.cseq.length, tagAt);
  return out;
}
