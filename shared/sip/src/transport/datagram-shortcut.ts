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
import { decodeLatin1, requestLineEnd, requestMethod, scanHeaderSection, type HeaderScan } from './header-scan.ts';
import type { Flow } from './flow.ts';
import { responseDestination, stampReceived } from './via-stamp.ts';

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
  /** The datagram's bytes (`text` is their latin1 decoding). */
  readonly data: Buffer;
  /** Where the headers lie in them. */
  readonly scan: HeaderScan;
  /** The whole datagram as latin1 text, the body from `bodyStart` (StatelessRequest.text). */
  readonly text: string;
  readonly bodyStart: number;
  /** Whether a header of this name is present (scans the header section: for rare decisions). */
  hasHeader(name: string): boolean;
}

const TO_TAG = /;\s*tag\s*=/i;

/**
 * The datagram's bytes scanned in place (header-scan.ts, the scanner the edge's forwarding shares),
 * one latin1 string of it from which only the values read here are sliced (a slice of a flat string is
 * not a copy). This runs for every keepalive of the fleet, hence no regex, no per-header allocation.
 */
export function peekDatagramRequest(data: Buffer): PeekedRequest | undefined {
  const eol = requestLineEnd(data);
  if (eol < 0) return undefined;
  const s = scanHeaderSection(data, eol);
  if (s === undefined || s.vias === 0 || s.froms !== 1 || s.tos !== 1 || s.callIds !== 1 || s.cseqs !== 1 || s.types > 1) return undefined;
  const text = decodeLatin1(data);
  const method = requestMethod(data, text);
  if (!cseqMatches(data, s.cseqStart, s.cseqEnd, method)) return undefined;
  const bodyStart = s.end + 4;
  if (s.length >= 0 && s.length !== text.length - bodyStart) return undefined;
  const to = text.slice(s.toStart, s.toEnd);
  if (hasToTag(data, s.toStart, s.toEnd) && TO_TAG.test(to.slice(to.lastIndexOf('>') + 1))) return undefined; // in-dialog: never stateless
  const via = [text.slice(s.viaStart, s.viaEnd)];
  const more = s.moreVias;
  if (more !== undefined) for (let i = 0; i < more.length; i += 2) via.push(text.slice(more[i] as number, more[i + 1] as number));
  const type = s.types === 0 ? undefined : text.slice(s.typeStart, s.typeEnd);
  return new Peeked(data, s, method, via, s.viaStart, s.viaEnd, text.slice(s.fromStart, s.fromEnd), to, text.slice(s.callIdStart, s.callIdEnd), text.slice(s.cseqStart, s.cseqEnd), type, text, bodyStart);
}

/** Whether To's value holds a `;` (a tag needs one): the regex runs only then. */
function hasToTag(bytes: Uint8Array, a: number, b: number): boolean {
  for (let k = a; k < b; k++) if (bytes[k] === 59) return true;
  return false;
}

/** A PeekedRequest whose body view is made only when asked for (the keepalive handler reads `text`). */
class Peeked implements PeekedRequest {
  readonly #data: Buffer;
  readonly #scan: HeaderScan;
  constructor(
    data: Buffer,
    scan: HeaderScan,
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
    this.#scan = scan;
  }

  get scan(): HeaderScan {
    return this.#scan;
  }

  get body(): Buffer {
    return this.#data.subarray(this.bodyStart);
  }

  get data(): Buffer {
    return this.#data;
  }

  get topVia(): string {
    return this.via[0] as string;
  }

  hasHeader(name: string): boolean {
    return headerSectionHas(this.text, this.bodyStart - 4, name);
  }
}

/** Whether a header line of `text` before `end` is named `name` (case-insensitive, LWS before the colon allowed). */
export function headerSectionHas(text: string, end: number, name: string): boolean {
  const n = name.length;
  for (let pos = text.indexOf('\r\n') + 2; pos > 1 && pos < end; ) {
    if (text.length >= pos + n && text.substr(pos, n).toLowerCase() === name.toLowerCase()) {
      let k = pos + n;
      while (k < end && isLws(text.charCodeAt(k))) k++;
      if (text.charCodeAt(k) === 58) return true; // ':'
    }
    const eol = text.indexOf('\r\n', pos);
    if (eol < 0) return false;
    pos = eol + 2;
  }
  return false;
}

/**
 * `CSeq: 1*10DIGIT LWS Method` in bytes[a, b), the method equal to the request's (§8.1.1.5, §17.2.3):
 * compared with the request line's first `method.length` bytes, where requestLineEnd() found it.
 */
export function cseqMatches(bytes: Uint8Array, a: number, b: number, method: string): boolean {
  let i = a;
  while (i < b && isDigit(bytes[i] as number)) i++;
  if (i === a || i - a > 10) return false;
  const digitsEnd = i;
  while (i < b && isLws(bytes[i] as number)) i++;
  if (i === digitsEnd || b - i !== method.length) return false;
  for (let k = 0; k < method.length; k++) if (bytes[i + k] !== bytes[k]) return false;
  return true;
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
  const fast = stampCanonicalViaAt(req.data, req.text, req.viaStart, req.viaEnd, flow.remoteAddress, flow.remotePort, forceRport);
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

/** `SIP/2.0 <status> <reason>` CRLF `Via: ` as bytes, one per status (answers use a handful). */
const statusHeads = new Map<number, Uint8Array>();
function statusHead(status: number): Uint8Array {
  let head = statusHeads.get(status);
  if (head === undefined) {
    head = bytesOf(`SIP/2.0 ${status} ${reasonPhrase(status)}\r\nVia: `);
    if (statusHeads.size < 64) statusHeads.set(status, head);
  }
  return head;
}

/** CRLF after CSeq, the Server header when given, an empty body: the same for every answer of a stack. */
let lastServer: string | undefined;
let lastTail = bytesOf('\r\nContent-Length: 0\r\n\r\n');
function responseTail(server: string | undefined): Uint8Array {
  if (server !== lastServer) {
    lastTail = bytesOf(`\r\n${server === undefined ? '' : `Server: ${server}\r\n`}Content-Length: 0\r\n\r\n`);
    lastServer = server;
  }
  return lastTail;
}

function bytesOf(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
}

const CRLF = bytesOf('\r\n');
const VIA = bytesOf('Via: ');
const FROM = bytesOf('From: ');
const TO = bytesOf('\r\nTo: ');
const TAG = bytesOf(';tag=0000000000000000'); // the tag's 16 hex digits overwrite the zeros
const CALL_ID = bytesOf('\r\nCall-ID: ');
const CSEQ = bytesOf('\r\nCSeq: ');

/** `src[a, b)` into `out` at `o`; the end. A loop: Buffer#copy and TypedArray#set cost a call and a view each. */
function put(out: Uint8Array, o: number, src: Uint8Array, a: number, b: number): number {
  for (let k = a; k < b; k++) out[o++] = src[k] as number;
  return o;
}

/** Buffer's latin1 encoder, which write(s, o, 'latin1') ends in (on Buffer.prototype, undocumented). */
interface LatinWritable {
  latin1Write(s: string, offset: number, length: number): number;
}
const writeLatin1: (out: Buffer, s: string, o: number) => number =
  typeof (Buffer.prototype as Partial<LatinWritable>).latin1Write === 'function'
    ? (out, s, o) => o + (out as Buffer & LatinWritable).latin1Write(s, o, s.length)
    : (out, s, o) => o + out.write(s, o, 'latin1');

/**
 * §8.2.6.2: Via (the stamped top line, then the others), From, To with the stateless To-tag, Call-ID,
 * CSeq, copied as bytes from the request where they lie (req.scan) into one buffer: no string is built
 * over the response. The tag (§8.2.7, stateless-tag.ts) is hashed from the response's own bytes, where the
 * stamped top Via, Call-ID, From and CSeq have just been written.
 */
export function buildDatagramResponse(req: PeekedRequest, via: StampedVia, status: number, server?: string, headers?: readonly (readonly [string, string])[]): Buffer {
  const s = req.scan;
  const src = req.data;
  const head = statusHead(status);
  const tail = responseTail(server);
  const top = via.topVia;
  let extra = '';
  if (headers !== undefined) for (const [name, value] of headers) extra += `\r\n${name}: ${value}`;
  const more = s.moreVias;
  let moreLength = 0;
  if (more !== undefined) for (let i = 0; i < more.length; i += 2) moreLength += VIA.length + (more[i + 1] as number) - (more[i] as number) + 2;
  const length =
    head.length + top.length + 2 + moreLength + FROM.length + (s.fromEnd - s.fromStart) + TO.length + (s.toEnd - s.toStart) + TAG.length +
    CALL_ID.length + (s.callIdEnd - s.callIdStart) + CSEQ.length + (s.cseqEnd - s.cseqStart) + extra.length + tail.length;
  const out = Buffer.allocUnsafe(length);
  let o = put(out, 0, head, 0, head.length);
  const via0 = o;
  o = writeLatin1(out, top, o);
  const via1 = o;
  o = put(out, o, CRLF, 0, 2);
  if (more !== undefined) {
    for (let i = 0; i < more.length; i += 2) {
      o = put(out, o, VIA, 0, VIA.length);
      o = put(out, o, src, more[i] as number, more[i + 1] as number);
      o = put(out, o, CRLF, 0, 2);
    }
  }
  o = put(out, o, FROM, 0, FROM.length);
  const from0 = o;
  o = put(out, o, src, s.fromStart, s.fromEnd);
  const from1 = o;
  o = put(out, o, TO, 0, TO.length);
  o = put(out, o, src, s.toStart, s.toEnd);
  o = put(out, o, TAG, 0, TAG.length);
  const tagAt = o - 16;
  o = put(out, o, CALL_ID, 0, CALL_ID.length);
  const callId0 = o;
  o = put(out, o, src, s.callIdStart, s.callIdEnd);
  const callId1 = o;
  o = put(out, o, CSEQ, 0, CSEQ.length);
  const cseq0 = o;
  o = put(out, o, src, s.cseqStart, s.cseqEnd);
  const cseq1 = o;
  if (extra.length > 0) o = writeLatin1(out, extra, o);
  put(out, o, tail, 0, tail.length);
  writeStatelessTag(out, via0, via1, callId0, callId1, from0, from1, cseq0, cseq1, tagAt);
  return out;
}
