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
import { stampCanonicalParts, stampCanonicalViaAt } from './canonical-via.ts';
import { cseqMatches, decodeLatin1, HeaderScan, requestLineEnd, requestMethod, scanHeaderLines, scanHeaderSection } from './header-scan.ts';
import { readUsualHead, type UsualHead } from './usual-datagram.ts';
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
  /** The whole datagram as latin1 text, the body from `bodyStart` (StatelessRequest.text). */
  readonly text: string;
  readonly bodyStart: number;
  /** Whether a header of this name is present (scans the header section: for rare decisions). */
  hasHeader(name: string): boolean;
  /** The first header of this name, its value trimmed (scans the header section, as hasHeader). */
  header(name: string): string | undefined;
}

const TO_TAG = /;\s*tag\s*=/i;
/** Placeholder for the To-tag in the response text; the tag's 16 hex digits overwrite it in the bytes. */
const TAG_SPACE = '0000000000000000';
/** `;tag=` and the placeholder, one piece. */
const TAG_PARAM = `;tag=${TAG_SPACE}`;
const CANONICAL_PREFIX = 'SIP/2.0/UDP ';

/**
 * One latin1 string for the whole datagram, scanned in place by the header scanner the edge's forwarding
 * shares (header-scan.ts): only the values read here are sliced (a slice of a flat string is not a copy).
 * This runs for every keepalive of the fleet, hence no regex over the headers, no per-header allocation.
 */
export function peekDatagramRequest(data: Buffer): PeekedRequest | undefined {
  const text = decodeLatin1(data);
  const usual = readUsualHead(text);
  return usual === undefined ? peekScanned(data, text) : peekUsual(data, text, usual);
}

/** The two readings peekDatagramRequest chooses between, each alone: for the tests that hold them equal. */
export const peekReadings = {
  usual(data: Buffer): PeekedRequest | undefined {
    const text = decodeLatin1(data);
    const usual = readUsualHead(text);
    return usual === undefined ? undefined : peekUsual(data, text, usual);
  },
  /** Whether usual-datagram.ts's regex reads the head of `data` (peekReadings.usual then decides alone). */
  matches: (data: Buffer): boolean => readUsualHead(decodeLatin1(data)) !== undefined,
  scanned: (data: Buffer): PeekedRequest | undefined => peekScanned(data, decodeLatin1(data)),
};

/** peekDatagramRequest() by the header scanner, for any head (usual-datagram.ts reads the usual ones). */
function peekScanned(data: Buffer, text: string): PeekedRequest | undefined {
  const eol = requestLineEnd(text);
  if (eol < 0) return undefined;
  const s = scanHeaderSection(text, eol);
  if (s === undefined || s.vias === 0 || s.froms !== 1 || s.tos !== 1 || s.callIds !== 1 || s.cseqs !== 1 || s.types > 1) return undefined;
  const method = requestMethod(text);
  if (!cseqMatches(text, s.cseqStart, s.cseqEnd, method)) return undefined;
  const bodyStart = s.end + 4;
  if (s.length >= 0 && s.length !== text.length - bodyStart) return undefined;
  const to = text.slice(s.toStart, s.toEnd);
  if (to.includes(';') && TO_TAG.test(to.slice(to.lastIndexOf('>') + 1))) return undefined; // in-dialog: never stateless
  const via = [text.slice(s.viaStart, s.viaEnd)];
  const more = s.moreVias;
  if (more !== undefined) for (let i = 0; i < more.length; i += 2) via.push(text.slice(more[i] as number, more[i + 1] as number));
  const type = s.types === 0 ? undefined : text.slice(s.typeStart, s.typeEnd);
  return new Peeked(data, method, via, s.viaStart, s.viaEnd, text.slice(s.fromStart, s.fromEnd), to, text.slice(s.callIdStart, s.callIdEnd), text.slice(s.cseqStart, s.cseqEnd), type, text, bodyStart);
}

/**
 * peekDatagramRequest() of a datagram whose head usual-datagram.ts read: the same checks on what the
 * regex left to check (the lines after CSeq when its tail did not match them, the Content-Length, the
 * To-tag), the same answer.
 */
function peekUsual(data: Buffer, text: string, h: UsualHead): PeekedRequest | undefined {
  let bodyStart = h.next;
  let length = h.length;
  let type = h.contentType;
  let via: string[] | undefined;
  if (!h.tail) {
    const s = new HeaderScan();
    s.startEol = h.startEol;
    s.end = text.indexOf('\r\n\r\n', h.next - 2);
    if (s.end < 0) return undefined;
    s.vias = s.froms = s.tos = s.callIds = s.cseqs = 1; // the lines the regex read
    if (scanHeaderLines(text, s, h.next) === undefined || s.froms !== 1 || s.tos !== 1 || s.callIds !== 1 || s.cseqs !== 1 || s.types > 1) return undefined;
    bodyStart = s.end + 4;
    length = s.length;
    type = s.types === 0 ? undefined : text.slice(s.typeStart, s.typeEnd);
    const more = s.moreVias;
    if (more !== undefined) {
      via = [text.slice(h.viaStart, h.viaEnd)];
      for (let i = 0; i < more.length; i += 2) via.push(text.slice(more[i] as number, more[i + 1] as number));
    }
  }
  if (length >= 0 && length !== text.length - bodyStart) return undefined;
  const to = h.to;
  if (to.includes(';') && TO_TAG.test(to.slice(to.lastIndexOf('>') + 1))) return undefined; // in-dialog: never stateless
  const p = new Peeked(data, h.method, via ?? [text.slice(h.viaStart, h.viaEnd)], h.viaStart, h.viaEnd, h.from, to, h.callId, h.cseq, type, text, bodyStart);
  if (via === undefined) {
    // one Via line, and From … CSeq as the answer writes them: buildDatagramResponse copies them
    const toEnd = h.viaEnd + '\r\nFrom: '.length + h.from.length + '\r\nTo: '.length + to.length;
    p.setUsualLines(toEnd, toEnd + '\r\nCall-ID: '.length + h.callId.length + '\r\nCSeq: '.length + h.cseq.length);
    // a canonical top Via: stampDatagramVia stamps it from the parts the regex found
    if (h.canonicalVia) p.setViaParts(h.hostEnd, h.sentPort, h.rportAt, h.rportEnd);
  }
  return p;
}

/** A PeekedRequest whose body view is made only when asked for (the keepalive handler reads `text`). */
class Peeked implements PeekedRequest {
  readonly #data: Buffer;
  /** Set by peekUsual: where the canonical top Via's host ends, its port, its rport bounds; -1 otherwise. */
  #hostEnd = -1;
  #sentPort: number | null = null;
  #rportAt = -1;
  #rportEnd = -1;
  /** Set by peekUsual when the only Via line is followed by From, To, Call-ID, CSeq as an answer writes them: where To's and CSeq's lines end; -1 otherwise. */
  #toEnd = -1;
  #cseqEnd = -1;
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

  setUsualLines(toEnd: number, cseqEnd: number): void {
    this.#toEnd = toEnd;
    this.#cseqEnd = cseqEnd;
  }

  /**
   * buildDatagramResponse() for a request whose head usual-datagram.ts read (undefined otherwise): its
   * From and To lines, and its Call-ID and CSeq lines, lie in the datagram exactly as the answer writes
   * them (the regex took only `Name: value` with one SP and no LWS at the value's ends, in this order),
   * so each pair is one slice of the datagram's text: fewer pieces for V8 to join and copy into the
   * bytes. The same bytes as the general build (transport-usual-datagram.test.ts).
   */
  buildUsual(via: StampedVia, status: number, server: string | undefined, headers: readonly (readonly [string, string])[] | undefined): Buffer | undefined {
    if (this.#toEnd < 0) return undefined;
    const t = this.text;
    let text = statusLineAndVia(status);
    const via0 = text.length;
    text += via.topVia + t.slice(this.viaEnd, this.#toEnd);
    const tagAt = text.length + ';tag='.length;
    const callId0 = text.length + TAG_PARAM.length + '\r\nCall-ID: '.length;
    const cseq0 = callId0 + this.callId.length + '\r\nCSeq: '.length;
    text += TAG_PARAM + t.slice(this.#toEnd, this.#cseqEnd);
    if (headers !== undefined) for (const [name, value] of headers) text += `\r\n${name}: ${value}`;
    const out = Buffer.from(text + responseTail(server), 'latin1');
    writeStatelessTag(out, via0, via0 + via.topVia.length, callId0, callId0 + this.callId.length, cseq0, cseq0 + this.cseq.length, tagAt);
    return out;
  }

  setViaParts(hostEnd: number, sentPort: number | null, rportAt: number, rportEnd: number): void {
    this.#hostEnd = hostEnd;
    this.#sentPort = sentPort;
    this.#rportAt = rportAt;
    this.#rportEnd = rportEnd;
  }

  /** stampCanonicalViaAt() of the top Via from the parts peekUsual found; undefined when it found none. */
  stampUsualVia(flow: Flow, forceRport: boolean): StampedVia | undefined {
    if (this.#hostEnd < 0 || flow.remoteAddress.includes(':')) return undefined;
    const { viaStart, viaEnd } = this;
    const s = stampCanonicalParts(this.text, viaStart, viaEnd, viaStart + CANONICAL_PREFIX.length, this.#hostEnd, this.#sentPort, this.#rportAt, this.#rportEnd, flow.remoteAddress, flow.remotePort, forceRport);
    return { topVia: s.line, host: s.host, port: s.port };
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

const isLws = (c: number): boolean => c === 32 || c === 9;

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
  const usual = req instanceof Peeked ? req.stampUsualVia(flow, forceRport) : undefined;
  if (usual !== undefined) return usual;
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


/**
 * §8.2.6.2: Via (the stamped top line, then the others), From, To with the stateless To-tag, Call-ID,
 * CSeq. The tag (§8.2.7, stateless-tag.ts) is hashed from the response's own bytes, where the stamped
 * top Via, Call-ID and CSeq have just been written (latin1: one byte per char, so offsets in the
 * text are offsets in the bytes).
 */
export function buildDatagramResponse(req: PeekedRequest, via: StampedVia, status: number, server?: string, headers?: readonly (readonly [string, string])[]): Buffer {
  const usual = req instanceof Peeked ? req.buildUsual(via, status, server, headers) : undefined;
  if (usual !== undefined) return usual;
  let text = statusLineAndVia(status);
  const via0 = text.length;
  text += `${via.topVia}\r\n`;
  for (let i = 1; i < req.via.length; i++) text += `Via: ${req.via[i]}\r\n`;
  text += `From: ${req.from}\r\nTo: ${req.to};tag=`;
  const tagAt = text.length;
  text += `${TAG_SPACE}\r\nCall-ID: `;
  const callId0 = text.length;
  text += `${req.callId}\r\nCSeq: `;
  const cseq0 = text.length;
  text += req.cseq;
  if (headers !== undefined) for (const [name, value] of headers) text += `\r\n${name}: ${value}`;
  const out = Buffer.from(text + responseTail(server), 'latin1');
  writeStatelessTag(out, via0, via0 + via.topVia.length, callId0, callId0 + req.callId.length, cseq0, cseq0 + req.cseq.length, tagAt);
  return out;
}
