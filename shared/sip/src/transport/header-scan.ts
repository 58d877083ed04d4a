/**
 * One pass over a datagram's header section (RFC 3261 §7.3) for the byte-level fast paths: the stateless
 * answers of a stack (datagram-shortcut.ts: a shard's keepalive 200) and the SIP edge's forwarding
 * (services/sip-edge datagram-forward.ts). Both read a few headers of a message whose shape is plain and
 * leave everything else to the parser, so they share this scanner: it records where the headers either
 * of them reads lie — Via (the first line, the others), From, To, Call-ID, CSeq, Content-Type,
 * Content-Length, Max-Forwards, Route — and how often each occurs, as positions in the latin1 text of the
 * datagram, without slicing or lower-casing anything. Each caller then applies its own rules.
 *
 * It runs for every keepalive of the fleet, twice per keepalive through an edge. It scans the datagram's
 * latin1 text (decodeLatin1) with String#indexOf per line (memchr inside V8) and names headers with one
 * startsWith for the usual spelling: measured with callgrind on Node 20, a char-code loop over the same
 * text, or an index loop over the Buffer, cost 1.3-2× more per datagram (~30-40 instructions per char
 * in optimised code; docs/benchmarks.md). No regex over the headers, no string made.
 *
 * undefined (the caller takes the parser, which decides) for: no empty line ending the header section,
 * a folded line (§7.3.1), a line that is not `name:` something, a repeated or unreadable Content-Length.
 * Compact forms (§7.3.3) count as their full names; names match in any letter case (only letters fold),
 * with LWS before the colon; values are trimmed of SP/HT.
 */

/** Buffer's latin1 decoder, which toString('latin1') ends in (on Buffer.prototype, undocumented). */
interface LatinSliceable {
  latin1Slice(start: number, end: number): string;
}

/**
 * The whole datagram as latin1 text (one char per byte, so offsets in the text are offsets in the
 * bytes). Calls the decoder toString('latin1') ends in, skipping its argument handling (measurable per
 * keepalive); falls back to toString if a Node version lacks it.
 */
export const decodeLatin1: (data: Buffer) => string =
  typeof (Buffer.prototype as Partial<LatinSliceable>).latin1Slice === 'function'
    ? (data) => (data as Buffer & LatinSliceable).latin1Slice(0, data.length)
    : (data) => data.toString('latin1');

// header keys (OTHER lines are skipped without a look at their value)
const OTHER = 0;
const VIA = 1;
const FROM = 2;
const TO = 3;
const CALL_ID = 4;
const CSEQ = 5;
const LENGTH = 6;
const TYPE = 7;
const MAX_FORWARDS = 8;
const ROUTE = 9;

const MAX_LENGTH_DIGITS = 10;
const MAX_MAX_FORWARDS = 255; // RFC 3261 §20.22: 0-255

/** Max-Forwards present more than once, or not 1-3 digits of at most 255. */
export const BAD_MAX_FORWARDS = -2;

/** Where the headers lie in the text: value bounds [start, end), trimmed; -1 when absent. */
export class HeaderScan {
  /** Index of the CRLF ending the start line. */
  startEol = -1;
  /** Index of the CRLF CRLF ending the header section (the body starts at end + 4). */
  end = -1;
  vias = 0;
  /** The first Via line: where it starts, its value, where the next line starts. */
  viaLine = -1;
  viaStart = -1;
  viaEnd = -1;
  viaNext = -1;
  /** Value bounds of the Via lines after the first, in order ([start, end, start, end, …]); only when there are some. */
  moreVias: number[] | undefined = undefined;
  froms = 0;
  fromStart = -1;
  fromEnd = -1;
  tos = 0;
  toStart = -1;
  toEnd = -1;
  callIds = 0;
  callIdStart = -1;
  callIdEnd = -1;
  cseqs = 0;
  cseqStart = -1;
  cseqEnd = -1;
  types = 0;
  typeStart = -1;
  typeEnd = -1;
  /** Content-Length's value; -1 when absent. */
  length = -1;
  /** Max-Forwards' value (0-255); -1 when absent; BAD_MAX_FORWARDS when repeated or unreadable. */
  maxForwards = -1;
  mfStart = -1;
  mfEnd = -1;
  routes = 0;
}

/**
 * Scans the header lines of `text` (a datagram's latin1 text) after the start line, which ends with the
 * CRLF at `startEol`. The last match of a repeated header is recorded (its count tells); every Via line is.
 */
export function scanHeaderSection(text: string, startEol: number): HeaderScan | undefined {
  const end = text.indexOf('\r\n\r\n', startEol);
  if (end < 0) return undefined;
  const s = new HeaderScan();
  s.startEol = startEol;
  s.end = end;
  return scanHeaderLines(text, s, startEol + 2);
}

/**
 * The loop of scanHeaderSection over the header lines from `from` (the start of a line) to `s.end`,
 * adding to what `s` holds: for a caller that has read the first lines itself (usual-datagram.ts) and
 * set their counts and bounds. `s` itself, or undefined as above.
 */
export function scanHeaderLines(text: string, s: HeaderScan, from: number): HeaderScan | undefined {
  const end = s.end;
  let eol = from - 2;
  for (let pos = from; pos < end; pos = eol + 2) {
    const first = text.charCodeAt(pos);
    if (first === 32 || first === 9) return undefined; // folded line: the parser unfolds it
    eol = text.indexOf('\r\n', pos); // the last header line's CRLF is at `end`
    const colon = text.indexOf(':', pos);
    if (colon < 0 || colon >= eol || colon === pos) return undefined; // not a header line: the parser answers 400
    const key = headerKey(text, pos, colon);
    if (key === OTHER) continue;
    let a = colon + 1;
    let b = eol;
    while (a < b && isLws(text.charCodeAt(a))) a++;
    while (b > a && isLws(text.charCodeAt(b - 1))) b--;
    switch (key) {
      case VIA:
        if (s.vias++ === 0) {
          s.viaLine = pos;
          s.viaStart = a;
          s.viaEnd = b;
          s.viaNext = eol + 2;
        } else if (s.moreVias === undefined) s.moreVias = [a, b];
        else s.moreVias.push(a, b);
        break;
      case FROM:
        s.froms++;
        s.fromStart = a;
        s.fromEnd = b;
        break;
      case TO:
        s.tos++;
        s.toStart = a;
        s.toEnd = b;
        break;
      case CALL_ID:
        s.callIds++;
        s.callIdStart = a;
        s.callIdEnd = b;
        break;
      case CSEQ:
        s.cseqs++;
        s.cseqStart = a;
        s.cseqEnd = b;
        break;
      case TYPE:
        s.types++;
        s.typeStart = a;
        s.typeEnd = b;
        break;
      case LENGTH: {
        if (s.length >= 0) return undefined;
        const v = digits(text, a, b, MAX_LENGTH_DIGITS);
        if (v < 0) return undefined;
        s.length = v;
        break;
      }
      case MAX_FORWARDS: {
        const v = s.maxForwards === -1 ? digits(text, a, b, 3) : -1;
        s.maxForwards = v < 0 || v > MAX_MAX_FORWARDS ? BAD_MAX_FORWARDS : v;
        s.mfStart = a;
        s.mfEnd = b;
        break;
      }
      default:
        s.routes++;
    }
  }
  return s;
}

/** The header `text[start, colon)` names (trailing LWS allowed; RFC 3261 §7.3.3 compact forms included), or OTHER. */
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
    case 5: return named(text, start, 'Route', 'route', ROUTE);
    case 7: return named(text, start, 'Call-ID', 'call-id', CALL_ID);
    case 12: return named(text, start, 'Content-Type', 'content-type', TYPE) || named(text, start, 'Max-Forwards', 'max-forwards', MAX_FORWARDS);
    case 14: return named(text, start, 'Content-Length', 'content-length', LENGTH);
    default: return OTHER;
  }
}

/**
 * `key` when text at `start` spells `lower` in any letter case (only letters fold: `c | 0x20` alone
 * would take CR for `-`), else OTHER. The usual spelling (`usual`, RFC 3261 §20) is tried first with
 * one built-in comparison.
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

/** Decimal digits in text[a, b), 1 to `max` of them; -1 otherwise. */
function digits(text: string, a: number, b: number, max: number): number {
  if (b === a || b - a > max) return -1;
  let v = 0;
  for (let k = a; k < b; k++) {
    const d = text.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

const isLws = (c: number): boolean => c === 32 || c === 9;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * `Method SP Request-URI SP SIP/2.0 CRLF` (§7.1) at the start, the URI one token (no char at or below
 * SP, so its CRLF is the first one). A regex: its compiled loop costs less per char than charCodeAt.
 */
const REQUEST_LINE = /[A-Za-z]+ [^\x00-\x20]+ SIP\/2\.0\r\n/y;

/** The index of the CRLF ending the request line at the start of `text`, or -1. */
export function requestLineEnd(text: string): number {
  REQUEST_LINE.lastIndex = 0;
  return REQUEST_LINE.test(text) ? REQUEST_LINE.lastIndex - 2 : -1;
}

/** The method of a request line requestLineEnd() accepted. */
export function requestMethod(text: string): string {
  return text.slice(0, text.indexOf(' '));
}

/** `CSeq: 1*10DIGIT LWS Method` in text[a, b), the method equal to the request's (§8.1.1.5, §17.2.3). */
export function cseqMatches(text: string, a: number, b: number, method: string): boolean {
  let i = a;
  while (i < b && isDigit(text.charCodeAt(i))) i++;
  if (i === a || i - a > 10) return false;
  const digitsEnd = i;
  while (i < b && isLws(text.charCodeAt(i))) i++;
  return i > digitsEnd && b - i === method.length && text.startsWith(method, i);
}
