/**
 * Bodies whose Content-Length counts characters instead of bytes (GB28181 firmware that writes
 * `Content-Length: ${xml.length}` for a UTF-8 or GB2312 body with Chinese names: each such name is
 * 2–3 bytes per character on the wire, so the count falls short).
 *
 * RFC 3261 §18.3 makes Content-Length the only message boundary on a stream, so a short count cuts
 * the XML and leaves its tail where the next message should start. On UDP this cannot hurt: a
 * datagram is one message and parse.ts keeps the rest of it (ParseOptions.trustDatagramEnd). On TCP
 * the framer (framer.ts) uses these pure helpers:
 *  - after a framed message, bytes that cannot begin a SIP message (`plausibleStart`) mean the count
 *    was wrong; `recountBody` looks for the byte length whose decoding (UTF-8 first, else GB18030,
 *    a superset of GB2312) has exactly Content-Length characters — or Content-Length bytes in the
 *    other charset, capture 06's miscount — ends the XML (`>` then optional whitespace) and is
 *    followed by a plausible start. That length is taken as the body — the only reading that puts
 *    both this message and the next one on sane boundaries;
 *  - when no such length exists the message goes up as declared (its cut XML is refused with a
 *    clear error upstream) and `findStart` skips the stray tail to the next start line, so the
 *    messages after it on the connection are not lost.
 * Both only ever act on bytes of the peer's own connection, so they cannot make one peer's bytes
 * count as another's (SPEC SEC-1 binds a device to its flow).
 */

const CR = 13;
const LF = 10;
const SP = 32;
const LT = 0x3c;
const GT = 0x3e;
/** Longest method or `SIP/2.0` token looked at before deciding a start line is implausible. */
const MAX_TOKEN = 32;
/** A start line: `METHOD sip:` / `METHOD sips:` (RFC 3261 §7.1) or `SIP/2.0 NNN ` (§7.2). */
const START_LINE = /[A-Z]{3,16} sips?:|SIP\/2\.0 [1-6]\d\d /g;

/** Start-line token bytes: methods as every SIP method is spelled (upper case, RFC 3261 §7.1), or `SIP/2.0`. */
function isStartTokenByte(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x2e || b === 0x2f || b === 0x5f;
}

/**
 * Whether the bytes at `at` can begin the next message: nothing yet, a CRLF keepalive (RFC 5626
 * §3.5.1), or an upper-case token (method or `SIP/2.0`) followed by SP — or still arriving.
 */
export function plausibleStart(b: Buffer, at: number, end: number): boolean {
  if (at >= end) return true;
  const first = b[at];
  if (first === CR || first === LF) return true;
  for (let i = at; i < end && i < at + MAX_TOKEN; i++) {
    const c = b[i] ?? 0;
    if (c === SP) return i > at;
    if (!isStartTokenByte(c)) return false;
  }
  return end - at < MAX_TOKEN;
}

export type Recount =
  /** The body is `bodyBytes` long: `declared` characters in one of the charsets. */
  | { readonly kind: 'fits'; readonly bodyBytes: number; readonly charset: 'utf-8' | 'gb18030' }
  /** More bytes are needed before deciding. */
  | { readonly kind: 'wait' }
  /** No character count explains the bytes. */
  | { readonly kind: 'none' };

type Walk = { readonly end: number } | 'invalid' | 'short';

/**
 * What a miscounted Content-Length counted, per character of the real encoding: characters
 * (`xml.length`), or the bytes the body would have in the other charset (capture 06: a UTF-8 body
 * announced with its GB2312 length). Widths of the other charset are the usual ones for text these
 * devices send (CJK: 2 bytes in GB2312); a wrong guess only fails to fit. The reverse miscount (a
 * GB2312 body announced with its UTF-8 length) announces more bytes than sent: on a stream it cannot
 * be told from a message still arriving, and is not recovered.
 */
type Cost = (bytes: number) => number;
const PER_CHAR: Cost = () => 1;
/** A UTF-8 character of n bytes, counted in GB18030 bytes. */
const GB_WIDTH_OF_UTF8: Cost = (n) => (n === 1 ? 1 : n === 4 ? 4 : 2);

/** Length of the UTF-8 character at i (RFC 3629 §4), 0 when invalid, -1 when cut by `end`. */
function utf8Char(b: Buffer, i: number, end: number): number {
  const lead = b[i] ?? 0;
  const len = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (len === 0) return 0;
  if (i + len > end) return -1;
  for (let k = 1; k < len; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return 0;
  return len;
}

/** Length of the GB18030 character at i (1, 2 or 4 bytes; GB2312 is its 2-byte subset), 0 invalid, -1 cut. */
function gbChar(b: Buffer, i: number, end: number): number {
  const lead = b[i] ?? 0;
  if (lead < 0x80) return 1;
  if (lead === 0x80 || lead === 0xff) return 0;
  if (i + 2 > end) return -1;
  const second = b[i + 1] ?? 0;
  if (second >= 0x40 && second <= 0xfe && second !== 0x7f) return 2;
  if (second < 0x30 || second > 0x39) return 0;
  if (i + 4 > end) return -1;
  const third = b[i + 2] ?? 0;
  const fourth = b[i + 3] ?? 0;
  return third >= 0x81 && third <= 0xfe && fourth >= 0x30 && fourth <= 0x39 ? 4 : 0;
}

/** Byte offset where the counted total reaches exactly `declared`, walking characters from `from`. */
function walk(b: Buffer, from: number, end: number, declared: number, char: typeof utf8Char, cost: Cost): Walk {
  let i = from;
  let total = 0;
  while (total < declared) {
    if (i >= end) return 'short';
    const n = char(b, i, end);
    if (n === -1) return 'short';
    if (n === 0) return 'invalid';
    total += cost(n);
    i += n;
  }
  return total === declared ? { end: i } : 'invalid';
}

const READINGS = [
  ['utf-8', utf8Char, PER_CHAR],
  ['gb18030', gbChar, PER_CHAR],
  ['utf-8', utf8Char, GB_WIDTH_OF_UTF8],
] as const;

/** Whether [from, to) ends an XML document: `>` then only whitespace. */
function endsXml(b: Buffer, from: number, to: number): boolean {
  let i = to - 1;
  while (i >= from && (b[i] === CR || b[i] === LF || b[i] === SP || b[i] === 9)) i--;
  return i >= from && b[i] === GT;
}

/**
 * The body length when `declared` counts characters of an XML body starting at `bodyStart`, with
 * `end` the bytes buffered so far. Only ever longer than `declared` (a count in characters is never
 * more than the bytes).
 */
export function recountBody(b: Buffer, bodyStart: number, end: number, declared: number): Recount {
  let first = bodyStart;
  while (first < end && (b[first] === CR || b[first] === LF || b[first] === SP || b[first] === 9)) first++;
  if (first >= end) return { kind: 'wait' };
  if (b[first] !== LT) return { kind: 'none' };
  let short = false;
  for (const [charset, char, cost] of READINGS) {
    const w = walk(b, bodyStart, end, declared, char, cost);
    if (w === 'short') short = true;
    else if (w !== 'invalid' && w.end > bodyStart + declared && endsXml(b, bodyStart, w.end) && plausibleStart(b, w.end, end)) {
      return { kind: 'fits', bodyBytes: w.end - bodyStart, charset };
    }
  }
  return short ? { kind: 'wait' } : { kind: 'none' };
}

/** Offset of the next start line at or after `from` (see START_LINE), or -1. */
export function findStart(b: Buffer, from: number, end: number): number {
  const text = b.toString('latin1', from, end);
  START_LINE.lastIndex = 0;
  const m = START_LINE.exec(text);
  return m === null ? -1 : from + m.index;
}
