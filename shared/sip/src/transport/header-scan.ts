/**
 * One pass over a datagram's header section (RFC 3261 §7.3) for the byte-level fast paths: the stateless
 * answers of a stack (datagram-shortcut.ts: a shard's keepalive 200) and the SIP edge's forwarding
 * (services/sip-edge datagram-forward.ts). Both read a few headers of a message whose shape is plain and
 * leave everything else to the parser, so they share this scanner: it records where the headers either
 * of them reads lie — Via (the first line, the others), From, To, Call-ID, CSeq, Content-Type,
 * Content-Length, Max-Forwards, Route — and how often each occurs, as positions in the latin1 text of the
 * datagram, without slicing or lower-casing anything. Each caller then applies its own rules.
 *
 * It runs for every keepalive of the fleet, twice per keepalive through an edge, so it reads the bytes
 * (Node 20's optimised code reads a typed array for a fraction of what String#charCodeAt costs per char,
 * measured with callgrind; String#indexOf costs a builtin call per line): no regex, no string made.
 * Offsets in the bytes are offsets in the datagram's latin1 text (decodeLatin1: one char per byte).
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

/** `data[start, end)` as latin1 text, the same way (one decoder call, nothing else decoded). */
export const latin1Of: (data: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as Partial<LatinSliceable>).latin1Slice === 'function'
    ? (data, start, end) => (data as Buffer & LatinSliceable).latin1Slice(start, end)
    : (data, start, end) => data.toString('latin1', start, end);

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
 * Scans the header lines of a datagram's `bytes` after the start line, which ends with the CRLF at `startEol`. The
 * last match of a repeated header is recorded (its count tells); every Via line is.
 */
export function scanHeaderSection(bytes: Uint8Array, startEol: number): HeaderScan | undefined {
  const s = new HeaderScan();
  s.startEol = startEol;
  const n = bytes.length;
  let pos = startEol + 2;
  for (;;) {
    if (pos + 1 >= n) return undefined; // no empty line
    const first = bytes[pos] as number;
    if (first === 13) {
      if ((bytes[pos + 1] as number) !== 10) return undefined;
      s.end = pos - 2; // the previous line's CRLF, then this one
      return s;
    }
    if (first === 32 || first === 9) return undefined; // folded line: the parser unfolds it
    let k = pos;
    let c = first;
    while (c !== 58 /* : */) {
      if (c === 13 && (bytes[k + 1] as number) === 10) return undefined; // no colon on the line: the parser answers 400
      if (++k >= n) return undefined;
      c = bytes[k] as number;
    }
    if (k === pos) return undefined;
    const colon = k;
    for (k = colon + 1; ; k++) {
      if (k + 1 >= n) return undefined;
      if ((bytes[k] as number) === 13 && (bytes[k + 1] as number) === 10) break;
    }
    const eol = k;
    let nameEnd = colon;
    while (nameEnd > pos && isLws(bytes[nameEnd - 1] as number)) nameEnd--;
    const key = headerKey(bytes, pos, nameEnd);
    if (key !== OTHER) {
      let a = colon + 1;
      let b = eol;
      while (a < b && isLws(bytes[a] as number)) a++;
      while (b > a && isLws(bytes[b - 1] as number)) b--;
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
          const v = digits(bytes, a, b, MAX_LENGTH_DIGITS);
          if (v < 0) return undefined;
          s.length = v;
          break;
        }
        case MAX_FORWARDS: {
          const v = s.maxForwards === -1 ? digits(bytes, a, b, 3) : -1;
          s.maxForwards = v < 0 || v > MAX_MAX_FORWARDS ? BAD_MAX_FORWARDS : v;
          s.mfStart = a;
          s.mfEnd = b;
          break;
        }
        default:
          s.routes++;
      }
    }
    pos = eol + 2;
  }
}

/**
 * Whether `bytes[start, end)` spells `word` (given in lower case), any letter case: only letters fold
 * (`c | 0x20` alone would also take CR for `-`).
 */
function spells(bytes: Uint8Array, start: number, word: Uint8Array): boolean {
  for (let k = 0; k < word.length; k++) {
    const c = bytes[start + k] as number;
    const w = word[k] as number;
    if (c !== w && !(w >= 97 && c === w - 32)) return false;
  }
  return true;
}

/** A constant's latin1 bytes, for comparisons against a datagram's (a typed-array read each side). */
export const bytesOf = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
const latin1 = bytesOf;
// header names in lower case, as bytes (compared with bytes: no charCodeAt per char)
const N_TO = latin1('to');
const N_VIA = latin1('via');
const N_FROM = latin1('from');
const N_CSEQ = latin1('cseq');
const N_ROUTE = latin1('route');
const N_CALL_ID = latin1('call-id');
const N_CONTENT_TYPE = latin1('content-type');
const N_MAX_FORWARDS = latin1('max-forwards');
const N_CONTENT_LENGTH = latin1('content-length');

/** The header `bytes[start, end)` names (RFC 3261 §7.3.3 compact forms included), or OTHER. */
function headerKey(bytes: Uint8Array, start: number, end: number): number {
  switch (end - start) {
    case 1:
      switch ((bytes[start] as number) | 0x20) {
        case 118: return VIA; // v
        case 102: return FROM; // f
        case 116: return TO; // t
        case 105: return CALL_ID; // i
        case 108: return LENGTH; // l
        case 99: return TYPE; // c
        default: return OTHER;
      }
    case 2: return spells(bytes, start, N_TO) ? TO : OTHER;
    case 3: return spells(bytes, start, N_VIA) ? VIA : OTHER;
    case 4: {
      const c = (bytes[start] as number) | 0x20;
      if (c === 102) return spells(bytes, start, N_FROM) ? FROM : OTHER;
      return c === 99 && spells(bytes, start, N_CSEQ) ? CSEQ : OTHER;
    }
    case 5: return spells(bytes, start, N_ROUTE) ? ROUTE : OTHER;
    case 7: return spells(bytes, start, N_CALL_ID) ? CALL_ID : OTHER;
    case 12: {
      const c = (bytes[start] as number) | 0x20;
      if (c === 99) return spells(bytes, start, N_CONTENT_TYPE) ? TYPE : OTHER;
      return c === 109 && spells(bytes, start, N_MAX_FORWARDS) ? MAX_FORWARDS : OTHER;
    }
    case 14: return spells(bytes, start, N_CONTENT_LENGTH) ? LENGTH : OTHER;
    default: return OTHER;
  }
}

/** Decimal digits in bytes[a, b), 1 to `max` of them; -1 otherwise. */
function digits(bytes: Uint8Array, a: number, b: number, max: number): number {
  if (b === a || b - a > max) return -1;
  let v = 0;
  for (let k = a; k < b; k++) {
    const d = (bytes[k] as number) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

const isLws = (c: number): boolean => c === 32 || c === 9;

/**
 * The CRLF ending a request line `Method SP Request-URI SP SIP/2.0 CRLF` (§7.1) at the start of `text`,
 * the method letters only and the URI one token (no char at or below SP, so this CRLF is the first);
 * -1 for anything else.
 */
export function requestLineEnd(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n && isLetter(bytes[i] as number)) i++;
  if (i === 0 || i >= n || (bytes[i] as number) !== 32) return -1;
  const uri = ++i;
  while (i < n && (bytes[i] as number) > 32) i++;
  if (i === uri || i + 9 >= n || (bytes[i] as number) !== 32) return -1;
  return sameAt(bytes, i + 1, SIP_VERSION_CRLF) ? i + 8 : -1;
}

const SIP_VERSION_CRLF = bytesOf('SIP/2.0\r\n');

/** The method of a request line requestLineEnd() accepted: the usual ones as constants (hashed once, no copy). */
export function requestMethod(bytes: Uint8Array, text: string): string {
  let n = 0;
  while ((bytes[n] as number) !== 32) n++;
  for (let i = 0; i < COMMON_METHODS.length; i++) {
    const m = COMMON_METHOD_BYTES[i] as Uint8Array;
    if (m.length === n && sameAt(bytes, 0, m)) return COMMON_METHODS[i] as string;
  }
  return text.slice(0, n);
}

const COMMON_METHODS = ['MESSAGE', 'NOTIFY', 'REGISTER', 'OPTIONS', 'INVITE', 'ACK', 'BYE', 'CANCEL', 'INFO', 'SUBSCRIBE'] as const;
const COMMON_METHOD_BYTES = COMMON_METHODS.map(bytesOf);

/** Whether `bytes` hold `word` (bytesOf a constant) at `at`, exactly (case-sensitive). */
export function sameAt(bytes: Uint8Array, at: number, word: Uint8Array): boolean {
  if (at + word.length > bytes.length) return false;
  for (let k = 0; k < word.length; k++) if (bytes[at + k] !== word[k]) return false;
  return true;
}

/** sameAt() for a string made at run time (latin1). */
export function sameText(bytes: Uint8Array, at: number, word: string): boolean {
  if (at + word.length > bytes.length) return false;
  for (let k = 0; k < word.length; k++) if (bytes[at + k] !== word.charCodeAt(k)) return false;
  return true;
}

const isLetter = (c: number): boolean => (c | 0x20) >= 97 && (c | 0x20) <= 122;
