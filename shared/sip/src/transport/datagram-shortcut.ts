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
import { statelessTagOf, writeStatelessTag } from '../ua/stateless-tag.ts';
import { canonicalBranch, stampCanonicalParts, stampCanonicalViaAt } from './canonical-via.ts';
import { cseqMatches, decodeLatin1, HeaderScan, requestLineEnd, requestMethod, scanHeaderLines, scanHeaderSection } from './header-scan.ts';
import { readUsualHead, type UsualHead } from './usual-datagram.ts';
import type { Flow } from './flow.ts';
import { DEFAULT_SIP_PORT, responseDestination, stampReceived } from './via-stamp.ts';

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
/** `;tag=` and the tag's 16 hex digits. */
const TAG_PARAM_LENGTH = ';tag='.length + 16;
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
  // in-dialog: never stateless. A To ending with `>` has nothing after its last `>` (devices write it so): no search
  if (to.charCodeAt(to.length - 1) !== 62 /* > */ && to.includes(';') && TO_TAG.test(to.slice(to.lastIndexOf('>') + 1))) return undefined;
  const p = new Peeked(data, h.method, via, h.viaStart, h.viaEnd, h.from, to, h.callId, h.cseq, type, text, bodyStart);
  // the line after CSeq: the regex read the lines before it, Via … CSeq, each once
  if (h.expires !== undefined) p.setRegisterTail(h.expires);
  p.setOtherLinesFrom(h.viaEnd + '\r\nFrom: '.length + h.from.length + '\r\nTo: '.length + to.length + '\r\nCall-ID: '.length + h.callId.length + '\r\nCSeq: '.length + h.cseq.length + 2);
  if (via === undefined) {
    // one Via line, and From … CSeq as the answer writes them: buildDatagramResponse copies them
    const toEnd = h.viaEnd + '\r\nFrom: '.length + h.from.length + '\r\nTo: '.length + to.length;
    p.setUsualLines(toEnd, toEnd + '\r\nCall-ID: '.length + h.callId.length + '\r\nCSeq: '.length + h.cseq.length);
    // a canonical top Via: stampDatagramVia stamps it from the parts the regex found
    if (h.canonicalVia) p.setViaParts(h.hostEnd, h.sentPort, h.rportAt, h.rportEnd, h.branchStart, h.branchEnd);
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
  #branchStart = -1;
  #branchEnd = -1;
  /** Set by peekUsual when the only Via line is followed by From, To, Call-ID, CSeq as an answer writes them: where To's and CSeq's lines end; -1 otherwise. */
  #toEnd = -1;
  #cseqEnd = -1;
  /** Whether a handler took a view of the body: then the datagram's bytes are not overwritten by the answer. */
  #bodyViewed = false;
  /**
   * Set by peekUsual: where the header lines after CSeq start (the lines before are Via, From, To, Call-ID,
   * CSeq, one each), so that header() of another name scans from there; -1: from the first line.
   */
  #otherLinesFrom = -1;
  /**
   * Set by peekUsual when the regex read a REGISTER's tail (UsualHead.expires): the Expires value. The lines
   * after CSeq are then known to be Contact, Max-Forwards, [User-Agent], Expires, Content-Length.
   */
  #expires: string | undefined;
  /** The Via lines; undefined: the one line at [viaStart, viaEnd), sliced when asked for (a keepalive never is). */
  #via: readonly string[] | undefined;
  constructor(
    data: Buffer,
    readonly method: string,
    via: readonly string[] | undefined,
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
    this.#via = via;
  }

  get via(): readonly string[] {
    this.#via ??= [this.text.slice(this.viaStart, this.viaEnd)];
    return this.#via;
  }

  setRegisterTail(expires: string): void {
    this.#expires = expires;
  }

  setOtherLinesFrom(at: number): void {
    this.#otherLinesFrom = at;
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
    text += via.topVia + t.slice(this.viaEnd, this.#toEnd);
    text += `;tag=${statelessTagOf(via.branch, this.callId, this.cseq)}` + t.slice(this.#toEnd, this.#cseqEnd);
    if (headers !== undefined) for (const [name, value] of headers) text += `\r\n${name}: ${value}`;
    return Buffer.from(text + responseTail(server), 'latin1');
  }

  setViaParts(hostEnd: number, sentPort: number | null, rportAt: number, rportEnd: number, branchStart: number, branchEnd: number): void {
    this.#hostEnd = hostEnd;
    this.#sentPort = sentPort;
    this.#rportAt = rportAt;
    this.#rportEnd = rportEnd;
    this.#branchStart = branchStart;
    this.#branchEnd = branchEnd;
  }

  /** The top Via's branch value ('' without one), for a canonical top Via (setViaParts). */
  get usualBranch(): string {
    return this.#branchStart < 0 ? '' : this.text.slice(this.#branchStart, this.#branchEnd);
  }

  /**
   * stampCanonicalViaAt() of the top Via from the parts peekUsual found; undefined when it found none.
   * The stamped line is made only when asked for: writeUsual writes it into the answer's bytes.
   */
  stampUsualVia(flow: Flow, forceRport: boolean): StampedVia | undefined {
    const src = flow.remoteAddress;
    if (this.#hostEnd < 0 || src.includes(':')) return undefined;
    const wantsRport = this.#rportAt >= 0 || forceRport;
    // as stampCanonicalParts decides: received with rport, or when the address written is not the source
    let received = true;
    let host = src;
    if (!wantsRport) {
      const written = this.text.slice(this.viaStart + CANONICAL_PREFIX.length, this.#hostEnd);
      received = written !== src && written.toLowerCase() !== src.toLowerCase();
      if (!received) host = written;
    }
    return new UsualVia(this, src, flow.remotePort, forceRport, wantsRport, received, host, wantsRport ? flow.remotePort : (this.#sentPort ?? DEFAULT_SIP_PORT));
  }

  /** stampCanonicalParts() of the top Via: the line a UsualVia stands for. */
  stampedLine(src: string, srcPort: number, forceRport: boolean): string {
    const { viaStart, viaEnd } = this;
    return stampCanonicalParts(this.text, viaStart, viaEnd, viaStart + CANONICAL_PREFIX.length, this.#hostEnd, this.#sentPort, this.#rportAt, this.#rportEnd, src, srcPort, forceRport).line;
  }

  /**
   * buildUsual()'s bytes written over the datagram's own (writeDatagramResponse); undefined when they
   * cannot be: a body view handed out, or an rport value longer than the one written. Extra headers (a
   * REGISTER's 401 challenge, issue 11) go before the tail. An answer longer than the request is written
   * the same way into a new buffer, the pieces copied there from the request (which is left as it was).
   *
   * The answer is the request's own pieces moved (copyWithin, a memmove) with the stamp, the tag and
   * the fixed lines written between them: from the status line, the top Via up to `rport`, the Via's
   * rest, `;received=`, From … To, the tag, Call-ID … CSeq, the tail. It starts where From … To need
   * not move when there is room (usually: the status line is shorter than the request line), else at
   * the datagram's first byte; the view returned covers the answer alone. Every piece moves by a shift no
   * smaller than the one before it (the inserts only add bytes), so the pieces moving right are moved
   * from the last, the pieces moving left from the first, and none overwrites a piece not yet moved;
   * the inserts are written after all moves. No string is built or flattened, no buffer allocated when it fits.
   */
  writeUsual(via: UsualVia, status: number, server: string | undefined, headers: readonly (readonly [string, string])[] | undefined): Uint8Array | undefined {
    const cseqEnd = this.#cseqEnd;
    if (cseqEnd < 0 || this.#bodyViewed) return undefined;
    const b = this.#data;
    const { viaStart, viaEnd } = this;
    const toEnd = this.#toEnd;
    const rportAt = this.#rportAt;
    const rportEnd = this.#rportEnd;
    const first = statusBytes(status);
    const tail = tailBytes(server);
    const port = via.srcPort;
    const digits = port < 10 ? 1 : port < 100 ? 2 : port < 1000 ? 3 : port < 10000 ? 4 : 5;
    // piece shifts with the answer at 0: Via up to rport (or all of it), Via after rport, From … To, Call-ID … CSeq
    const e1 = first.length - viaStart;
    const e2 = rportAt < 0 ? e1 : e1 + 6 + digits - (rportEnd - rportAt); // `rport[=v]` → `rport=<port>`
    if (e2 < e1) return undefined;
    const forced = rportAt < 0 && via.wantsRport ? 7 + digits : 0; // `;rport=<port>`
    const received = via.received ? 10 + via.srcAddress.length : 0; // `;received=<address>`
    const e3 = e2 + forced + received;
    let extra = 0; // `\r\n<name>: <value>` each
    if (headers !== undefined) for (const [name, value] of headers) extra += 4 + name.length + value.length;
    const length = cseqEnd + e3 + TAG_PARAM_LENGTH + extra + tail.length;
    const cut = rportAt < 0 ? viaEnd : rportAt;
    if (length > this.text.length) {
      // longer than the datagram (one char per byte): the same layout in a buffer of its own
      const out = Buffer.allocUnsafe(length);
      const from = byteOffsetOf.call(b);
      const src = bufferOf.call(b);
      setBytes.call(out, new Uint8Array(src, from + viaStart, cut - viaStart), viaStart + e1);
      if (rportAt >= 0) setBytes.call(out, new Uint8Array(src, from + rportEnd, viaEnd - rportEnd), rportEnd + e2);
      setBytes.call(out, new Uint8Array(src, from + viaEnd, toEnd - viaEnd), viaEnd + e3);
      setBytes.call(out, new Uint8Array(src, from + toEnd, cseqEnd - toEnd), toEnd + e3 + TAG_PARAM_LENGTH);
      return this.#writeInserts(out, 0, via, e1, e2, e3, forced, received, digits, first, tail, headers, extra, length);
    }
    // The answer starts where From … To (the longest piece) stays put, when it then still ends within the
    // datagram: one move fewer (a C++ builtin call each). Every shift grows by the same `start`.
    const start = e3 < 0 && length - e3 <= this.text.length ? -e3 : 0;
    const d1 = e1 + start;
    const d2 = e2 + start;
    const d3 = e3 + start;
    const d4 = d3 + TAG_PARAM_LENGTH;
    // right-moving pieces from the last, then left-moving ones from the first
    if (d4 > 0) copyWithin.call(b, toEnd + d4, toEnd, cseqEnd);
    if (d3 > 0) copyWithin.call(b, viaEnd + d3, viaEnd, toEnd);
    if (d2 > 0 && rportAt >= 0) copyWithin.call(b, rportEnd + d2, rportEnd, viaEnd);
    if (d1 > 0) copyWithin.call(b, viaStart + d1, viaStart, cut);
    if (d1 < 0) copyWithin.call(b, viaStart + d1, viaStart, cut);
    if (d2 < 0 && rportAt >= 0) copyWithin.call(b, rportEnd + d2, rportEnd, viaEnd);
    if (d3 < 0) copyWithin.call(b, viaEnd + d3, viaEnd, toEnd);
    if (d4 < 0) copyWithin.call(b, toEnd + d4, toEnd, cseqEnd);
    return this.#writeInserts(b, start, via, d1, d2, d3, forced, received, digits, first, tail, headers, extra, length);
  }

  /**
   * writeUsual()'s inserts into `b`, where the answer starts at `start` and the pieces have been moved by
   * d1 (the Via up to rport), d2 (the Via after rport), d3 (From … To): the status line, the stamp, the
   * tag, the extra headers, the tail; and the view of the answer.
   */
  #writeInserts(
    b: Uint8Array,
    start: number,
    via: UsualVia,
    d1: number,
    d2: number,
    d3: number,
    forced: number,
    received: number,
    digits: number,
    first: Uint8Array,
    tail: Uint8Array,
    headers: readonly (readonly [string, string])[] | undefined,
    extra: number,
    length: number,
  ): Uint8Array {
    const { viaEnd } = this;
    const toEnd = this.#toEnd;
    const cseqEnd = this.#cseqEnd;
    const rportAt = this.#rportAt;
    const port = via.srcPort;
    const d4 = d3 + TAG_PARAM_LENGTH;
    const cut = rportAt < 0 ? viaEnd : rportAt;
    setBytes.call(b, first, start);
    if (rportAt >= 0) writeRport(b, rportAt + d1);
    else if (forced > 0) writeSemiRport(b, viaEnd + d2);
    if (rportAt >= 0 || forced > 0) writeDecimal(b, (rportAt >= 0 ? rportAt + d1 + 6 : viaEnd + d2 + 7) + digits, port, digits);
    if (received > 0) {
      const at = viaEnd + d2 + forced;
      writeSemiReceived(b, at);
      writeAscii(b, at + 10, via.srcAddress);
    }
    const tagAt = toEnd + d3;
    writeSemiTag(b, tagAt);
    if (headers !== undefined) {
      let at = cseqEnd + d4;
      for (const [name, value] of headers) {
        b[at] = 13;
        b[at + 1] = 10;
        // one C++ copy: charCodeAt over a joined value (a cons string: the challenge around its nonce)
        // cost ~75 instructions a character under callgrind, ~9k a 401
        const line = `${name}: ${value}`;
        latin1Write.call(b, line, at + 2, line.length);
        at += 2 + line.length;
      }
    }
    setBytes.call(b, tail, cseqEnd + d4 + extra);
    const callId0 = toEnd + d4 + '\r\nCall-ID: '.length;
    const cseq0 = callId0 + this.callId.length + '\r\nCSeq: '.length;
    const branchStart = this.#branchStart;
    const branch0 = branchStart < 0 ? 0 : branchStart + (branchStart < cut ? d1 : d2); // before `rport` or after it
    const branch1 = branchStart < 0 ? 0 : branch0 + this.#branchEnd - branchStart;
    writeStatelessTag(b, branch0, branch1, callId0, callId0 + this.callId.length, cseq0, cseq0 + this.cseq.length, tagAt + 5);
    // a plain Uint8Array view (dgram sends any ArrayBufferView): Buffer.from(arrayBuffer, …) costs a
    // C++ type check (isAnyArrayBuffer) and a derived-class construction on top, subarray a species lookup
    return new Uint8Array(bufferOf.call(b), byteOffsetOf.call(b) + start, length);
  }

  get body(): Buffer {
    this.#bodyViewed = true;
    return this.#data.subarray(this.bodyStart);
  }

  get topVia(): string {
    return this.via[0] as string;
  }

  hasHeader(name: string): boolean {
    return this.header(name) !== undefined;
  }

  header(name: string): string | undefined {
    // issue 11: the first leg of a registration asks for Authorization and Expires, past the usual lines
    const from = this.#otherLinesFrom >= 0 && !isUsualLineName(name) ? this.#otherLinesFrom : -1;
    if (from >= 0 && this.#expires !== undefined) {
      // the REGISTER tail the regex read, as headerSectionValue would find it there: Expires is its value
      // (digits, nothing to trim), a name no line after CSeq starts with (Contact, Max-Forwards,
      // User-Agent, Expires, Content-Length, whatever the case) is absent; other names are scanned
      if (name.length === 7 && sameLetters(name, 'expires')) return this.#expires;
      const c = name.charCodeAt(0) | 0x20;
      if (c !== 99 && c !== 109 && c !== 117 && c !== 101) return undefined; // c, m, u, e
    }
    return headerSectionValue(this.text, this.bodyStart - 4, name, from);
  }
}

/**
 * A top Via of the usual head stamped from its parts: the destination now, the line only when asked
 * for (buildUsual and the general build copy it; writeUsual writes it into the answer's bytes).
 */
class UsualVia implements StampedVia {
  #line: string | undefined;
  constructor(
    readonly peek: Peeked,
    readonly srcAddress: string,
    readonly srcPort: number,
    readonly forceRport: boolean,
    /** An `rport` parameter is there or is forced: it gets the source port. */
    readonly wantsRport: boolean,
    /** `;received=<srcAddress>` is appended. */
    readonly received: boolean,
    readonly host: string,
    readonly port: number,
  ) {}

  get topVia(): string {
    this.#line ??= this.peek.stampedLine(this.srcAddress, this.srcPort, this.forceRport);
    return this.#line;
  }

  get branch(): string {
    return this.peek.usualBranch;
  }
}

/**
 * buildDatagramResponse() written over the request's own bytes (the datagram's Buffer, which its
 * receiver owns and no longer needs once answered), for the usual head: a view of the answer, or
 * undefined when this request cannot be answered so (then buildDatagramResponse). Only for a caller
 * that sends the answer and drops the datagram: the request's bytes are gone afterwards (its `text`
 * and what was read from it are strings of their own). Byte for byte buildDatagramResponse's answer
 * (transport-usual-datagram.test.ts).
 */
export function writeDatagramResponse(req: PeekedRequest, via: StampedVia, status: number, server?: string, headers?: readonly (readonly [string, string])[]): Uint8Array | undefined {
  if (!(via instanceof UsualVia) || via.peek !== req) return undefined;
  return via.peek.writeUsual(via, status, server, headers);
}

/**
 * The typed-array methods writeUsual calls on the datagram, taken once: a Buffer made by Node's receive
 * path (a Uint8Array given Buffer's prototype in C++) made each `b.copyWithin` a generic LoadIC call
 * from optimised code under callgrind (~130 instructions each).
 */
const { copyWithin, set: setBytes } = Uint8Array.prototype;
/** The same for the `buffer` and `byteOffset` getters: `b.buffer` and `b.byteOffset` were a LoadIC miss each (~200 instructions). */
const typedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
const bufferOf = Object.getOwnPropertyDescriptor(typedArrayPrototype, 'buffer')?.get as (this: Uint8Array) => ArrayBuffer;
const byteOffsetOf = Object.getOwnPropertyDescriptor(typedArrayPrototype, 'byteOffset')?.get as (this: Uint8Array) => number;

/** Buffer's latin1 write (a C++ copy, a wide character's low byte as Buffer.from(s, 'latin1')), on the datagram or a new buffer. */
const latin1Write = (Buffer.prototype as unknown as { latin1Write: (this: Uint8Array, s: string, at: number, length: number) => number }).latin1Write;

/*
 * The fixed pieces writeUsual inserts, written by straight-line stores of their bytes: in optimised code a
 * store costs ~5 instructions (the array's checks are made once), a loop copying a constant piece ~28 a
 * byte (its map, length and interrupt checks redone every iteration; callgrind, docs/benchmarks.md).
 * transport-usual-datagram.test.ts holds the answers to buildUsual's, which writes them as text.
 */

/** `rport=` */
function writeRport(b: Uint8Array, at: number): void {
  b[at] = 0x72; // r
  b[at + 1] = 0x70; // p
  b[at + 2] = 0x6f; // o
  b[at + 3] = 0x72; // r
  b[at + 4] = 0x74; // t
  b[at + 5] = 0x3d; // =
}

/** `;rport=` */
function writeSemiRport(b: Uint8Array, at: number): void {
  b[at] = 0x3b; // ;
  writeRport(b, at + 1);
}

/** `;received=` */
function writeSemiReceived(b: Uint8Array, at: number): void {
  b[at] = 0x3b; // ;
  b[at + 1] = 0x72; // r
  b[at + 2] = 0x65; // e
  b[at + 3] = 0x63; // c
  b[at + 4] = 0x65; // e
  b[at + 5] = 0x69; // i
  b[at + 6] = 0x76; // v
  b[at + 7] = 0x65; // e
  b[at + 8] = 0x64; // d
  b[at + 9] = 0x3d; // =
}

/** `;tag=` */
function writeSemiTag(b: Uint8Array, at: number): void {
  b[at] = 0x3b; // ;
  b[at + 1] = 0x74; // t
  b[at + 2] = 0x61; // a
  b[at + 3] = 0x67; // g
  b[at + 4] = 0x3d; // =
}

/** `s` into `b` at `at`, a byte a character (the caller checked the room): latin1, as Buffer.from(s, 'latin1') writes it. */
function writeAscii(b: Uint8Array, at: number, s: string): void {
  for (let i = 0; i < s.length; i++) b[at + i] = s.charCodeAt(i);
}

/** `n` (0-65535) as `digits` decimal digits ending before `end`. */
function writeDecimal(b: Uint8Array, end: number, n: number, digits: number): void {
  for (let i = 1; i <= digits; i++) {
    b[end - i] = 48 + (n % 10);
    n = (n / 10) | 0;
  }
}

/**
 * The value (LWS-trimmed) of the first header line of `text` before `end` named `name`
 * (case-insensitive, LWS before the colon allowed), or undefined. Only the value found is sliced.
 * `from`: the start of the first line to look at (-1: the line after the request line).
 */
export function headerSectionValue(text: string, end: number, name: string, from = -1): string | undefined {
  const n = name.length;
  for (let pos = from < 0 ? text.indexOf('\r\n') + 2 : from; pos > 1 && pos < end; ) {
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

/** Whether `name` is Via, From, To, Call-ID or CSeq in any case: the lines usual-datagram.ts's regex read. */
function isUsualLineName(name: string): boolean {
  switch (name.length) {
    case 2: return sameLetters(name, 'to');
    case 3: return sameLetters(name, 'via');
    case 4: return sameLetters(name, 'from') || sameLetters(name, 'cseq');
    case 7: return sameLetters(name, 'call-id');
    default: return false;
  }
}

/** `name` equal to the lower-case `lower` with ASCII letters compared without case. */
function sameLetters(name: string, lower: string): boolean {
  for (let k = 0; k < lower.length; k++) if ((name.charCodeAt(k) | 0x20) !== lower.charCodeAt(k)) return false;
  return true;
}

/** Where a stateless answer goes and the top Via it copies, stamped like every inbound request. */
export interface StampedVia {
  /** The first Via line with its top hop stamped (received / rport). */
  readonly topVia: string;
  readonly host: string;
  readonly port: number;
  /** The top hop's branch value as the parser reads it ('' without one): the To-tag hashes it (stateless-tag.ts). */
  readonly branch: string;
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
  if (fast !== undefined) return { topVia: fast.line, host: fast.host, port: fast.port, branch: canonicalBranch(req.text, req.viaStart, req.viaEnd) };
  const hops = splitHeaderValues(first);
  let top;
  try {
    top = parseViaHop(hops[0] ?? '');
  } catch {
    return undefined;
  }
  if (stampReceived(top, flow.remoteAddress, flow.remotePort, forceRport)) hops[0] = formatVia(top);
  const dest = responseDestination(top);
  return { topVia: hops.join(', '), host: dest.host, port: dest.port, branch: top.params.get('branch') ?? '' };
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

/** statusLineAndVia() as bytes; the last status asked for is kept (a stack answers keepalives 200). */
let lastStatus = -1;
let lastStatusBytes = Buffer.alloc(0);
function statusBytes(status: number): Buffer {
  if (status !== lastStatus) {
    lastStatusBytes = Buffer.from(statusLineAndVia(status), 'latin1');
    lastStatus = status;
  }
  return lastStatusBytes;
}

/** responseTail() as bytes, for the same server. */
let tailServer: string | undefined;
let lastTailBytes: Buffer | undefined;
function tailBytes(server: string | undefined): Buffer {
  if (server !== tailServer || lastTailBytes === undefined) {
    lastTailBytes = Buffer.from(responseTail(server), 'latin1');
    tailServer = server;
  }
  return lastTailBytes;
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
  text += `${via.topVia}\r\n`;
  for (let i = 1; i < req.via.length; i++) text += `Via: ${req.via[i]}\r\n`;
  text += `From: ${req.from}\r\nTo: ${req.to};tag=${statelessTagOf(via.branch, req.callId, req.cseq)}\r\nCall-ID: ${req.callId}\r\nCSeq: ${req.cseq}`;
  if (headers !== undefined) for (const [name, value] of headers) text += `\r\n${name}: ${value}`;
  return Buffer.from(text + responseTail(server), 'latin1');
}
