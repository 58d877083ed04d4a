// The edge's hot path (issue 14 benchmark): a device's keepalive (MESSAGE/NOTIFY over UDP) and the shard's
// answer forwarded from the datagram's bytes, without parsing every header into a message object and
// serialising it again — the same result forward.ts gives, for the plain shapes devices and shards send.
//
//  device → shard: one pass over the header lines finds the top Via, From, To, Call-ID, CSeq, Max-Forwards,
//    Content-Length and whether a Route is present. Only a request in the plain shape takes this path:
//    MESSAGE or NOTIFY, no Route, no folded line, exactly one From/To/Call-ID/CSeq, the CSeq method the
//    request's, Content-Length present and equal to the body, Max-Forwards 1-255 (or absent), From
//    `<sip:<20 digits>@…`, a top Via in the canonical shape (stamped with received/rport as the transport
//    does, RFC 3581 §4, without a parse: @vms/sip stampCanonicalViaAt). Out: the request line, the edge's
//    Via (the same value forward.ts writes: branch from the device's, signed flow), the header lines as
//    they came with the top Via stamped and Max-Forwards - 1, the body.
//  shard → device: a response whose first Via line is one hop, this edge's (host:port as written, a
//    `z9hG4bKe` branch) with a flow token that verifies (HMAC, flow-token.ts) naming a UDP flow, another
//    Via below, From/To/Call-ID/CSeq once each and a Content-Length equal to the body: that line removed,
//    the rest sent as it came to the device's address.
// Anything else returns undefined and takes the parsed path (forward.ts), which validates and answers it.
// What this path does not check is the syntax of what it only copies (Request-URI, To, Call-ID, other
// headers): the shard parses the request fully and answers such a one 400 itself.
import { placeDevice } from '@vms/routing';
import { stampCanonicalViaAt } from '@vms/sip';
import type { Flow } from '@vms/sip';
import { branchFrom, DEFAULT_MAX_FORWARDS, hostPart, viaOf, type ForwardContext } from './forward.ts';

/** A datagram to send: the transport's shortcut answer shape. */
export interface DatagramOut {
  readonly data: Buffer;
  readonly host: string;
  readonly port: number;
}

interface LatinSliceable {
  latin1Slice(start: number, end: number): string;
}
/** Buffer's latin1 decoder without toString's argument handling (as @vms/sip's datagram shortcut does). */
const decodeLatin1: (data: Buffer) => string =
  typeof (Buffer.prototype as Partial<LatinSliceable>).latin1Slice === 'function'
    ? (data) => (data as Buffer & LatinSliceable).latin1Slice(0, data.length)
    : (data) => data.toString('latin1');

// header keys read here (RFC 3261 §7.3.3 compact forms included); OTHER is skipped without slicing
const OTHER = 0;
const VIA = 1;
const FROM = 2;
const TO = 3;
const CALL_ID = 4;
const CSEQ = 5;
const LENGTH = 6;
const MAX_FORWARDS = 7;
const ROUTE = 8;
const MAX_LENGTH_DIGITS = 10;
const MAX_MAX_FORWARDS = 255; // RFC 3261 §20.22: 0-255

/** What one pass over a header section found (positions in the latin1 text of the datagram). */
export class Scan {
  constructor(
    readonly data: Buffer,
    readonly text: string,
  ) {}
  /** A device request's code (From user) and method, once read. */
  deviceId = '';
  method = '';
  /** End of the start line (its CRLF). */
  startEol = 0;
  /** Where the first Via line starts, where its value lies, and where the next line starts. */
  viaLine = -1;
  viaStart = -1;
  viaEnd = -1;
  viaNext = -1;
  vias = 0;
  fromStart = -1;
  fromEnd = -1;
  to = 0;
  callId = 0;
  cseqStart = -1;
  cseqEnd = -1;
  cseqs = 0;
  froms = 0;
  length = -1;
  mfStart = -1;
  mfEnd = -1;
  maxForwards = -1;
  route = false;
  /** Index of the CRLF CRLF ending the header section. */
  end = -1;
}

/** One pass over the header lines after the start line; undefined on anything not plain. */
function scanHeaders(data: Buffer, text: string): Scan | undefined {
  const s = new Scan(data, text);
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  s.end = end;
  let eol = text.indexOf('\r\n');
  s.startEol = eol;
  for (let pos = eol + 2; pos < end; pos = eol + 2) {
    const c = text.charCodeAt(pos);
    if (c === 32 || c === 9) return undefined; // folded line
    eol = text.indexOf('\r\n', pos);
    const colon = text.indexOf(':', pos);
    if (colon < 0 || colon >= eol || colon === pos) return undefined;
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
        }
        break;
      case FROM:
        s.froms++;
        s.fromStart = a;
        s.fromEnd = b;
        break;
      case TO:
        s.to++;
        break;
      case CALL_ID:
        s.callId++;
        break;
      case CSEQ:
        s.cseqs++;
        s.cseqStart = a;
        s.cseqEnd = b;
        break;
      case LENGTH: {
        if (s.length >= 0) return undefined;
        const n = digits(text, a, b, MAX_LENGTH_DIGITS);
        if (n < 0) return undefined;
        s.length = n;
        break;
      }
      case MAX_FORWARDS: {
        if (s.maxForwards >= 0) return undefined;
        const n = digits(text, a, b, 3);
        if (n < 0 || n > MAX_MAX_FORWARDS) return undefined;
        s.maxForwards = n;
        s.mfStart = a;
        s.mfEnd = b;
        break;
      }
      case ROUTE:
        s.route = true;
        break;
    }
  }
  return s.vias > 0 && s.froms === 1 && s.to === 1 && s.callId === 1 && s.cseqs === 1 && s.length === text.length - end - 4 ? s : undefined;
}

/**
 * A device request in the plain shape (MESSAGE/NOTIFY, no Route, …: see the top of this file), or
 * undefined → the parsed path. Read before admission, so a request the byte path will not take is charged
 * once, by the parsed path.
 */
export function readDeviceDatagram(data: Buffer): Scan | undefined {
  const text = decodeLatin1(data);
  const method = plainMethod(text);
  if (method === undefined) return undefined;
  const s = scanHeaders(data, text);
  if (s === undefined || s.route || s.maxForwards === 0 || !cseqIs(text, s.cseqStart, s.cseqEnd, method)) return undefined;
  const deviceId = fromDeviceId(text, s.fromStart, s.fromEnd);
  if (deviceId === undefined) return undefined;
  s.deviceId = deviceId;
  s.method = method;
  return s;
}

/**
 * The request read by readDeviceDatagram, its top Via stamped for `flow` (RFC 3581 §4), to the shard
 * placement picks; undefined → the parsed path decides (a top Via not in the canonical shape, no shard).
 */
export function forwardDeviceDatagram(s: Scan, flow: Flow, ctx: ForwardContext): DatagramOut | undefined {
  const text = s.text;
  // the transport would stamp the same way before the parsed path (stampReceived + formatVia)
  const stamped = stampCanonicalViaAt(text, s.viaStart, s.viaEnd, flow.remoteAddress, flow.remotePort, false);
  if (stamped === undefined) return undefined;
  const shard = placeDevice(ctx.policy, ctx.shards(), s.deviceId);
  if (shard === null) return undefined;
  const topBranch = branchParam(stamped.line) ?? `${headerValue(s, CALL_ID)}|${text.slice(s.cseqStart, s.cseqEnd)}`;
  const token = ctx.codec.encode({ transport: 'udp', address: flow.remoteAddress, port: flow.remotePort });
  const edgeVia = viaOf(ctx.self, branchFrom(topBranch, token), token);
  const mf = String((s.maxForwards < 0 ? DEFAULT_MAX_FORWARDS : s.maxForwards) - 1);
  // request line, our Via, the header lines with two values replaced (in text order), the body: copied
  // from the datagram's bytes around three edits, no string built over the whole message
  const via = `Via: ${edgeVia}\r\n`;
  const at = s.startEol + 2;
  if (s.mfStart < 0) return out(s.data, shard.sipHost, shard.sipPort, at, at, via, s.viaStart, s.viaEnd, stamped.line, s.end + 2, s.end + 2, `Max-Forwards: ${mf}\r\n`);
  if (s.mfStart < s.viaStart) return out(s.data, shard.sipHost, shard.sipPort, at, at, via, s.mfStart, s.mfEnd, mf, s.viaStart, s.viaEnd, stamped.line);
  return out(s.data, shard.sipHost, shard.sipPort, at, at, via, s.viaStart, s.viaEnd, stamped.line, s.mfStart, s.mfEnd, mf);
}

/**
 * `data` with three ranges ([a, b), in order, not overlapping) replaced by latin1 strings (one byte per
 * char: the datagram's own text, or ASCII the edge writes).
 */
function out(data: Buffer, host: string, port: number, a1: number, b1: number, r1: string, a2: number, b2: number, r2: string, a3: number, b3: number, r3: string): DatagramOut {
  const buf = Buffer.allocUnsafe(data.length + r1.length - (b1 - a1) + r2.length - (b2 - a2) + r3.length - (b3 - a3));
  let o = data.copy(buf, 0, 0, a1);
  o += buf.write(r1, o, 'latin1');
  o += data.copy(buf, o, b1, a2);
  o += buf.write(r2, o, 'latin1');
  o += data.copy(buf, o, b2, a3);
  o += buf.write(r3, o, 'latin1');
  data.copy(buf, o, b3);
  return { data: buf, host, port };
}

/** Self's Via prefix up to the branch, per edge identity (host and port are fixed once listening). */
let prefixOf: { host: string; port: number; prefix: string } = { host: '', port: 0, prefix: '' };

/**
 * A shard's response through this edge in the plain shape → the device's UDP flow, the edge's Via line
 * removed; undefined → the parsed path.
 */
export function forwardShardResponse(data: Buffer, ctx: ForwardContext): DatagramOut | undefined {
  const text = decodeLatin1(data);
  const s = isStatusLine(text) ? scanHeaders(data, text) : undefined;
  if (s === undefined || s.vias < 2) return undefined;
  const self = ctx.self;
  if (prefixOf.host !== self.host || prefixOf.port !== self.port) {
    prefixOf = { host: self.host, port: self.port, prefix: `SIP/2.0/UDP ${hostPart(self.host)}:${self.port};` };
  }
  const prefix = prefixOf.prefix;
  if (!text.startsWith(prefix, s.viaStart)) return undefined;
  // the hop's parameters: `;name[=value]`, plain values only (no comma: one hop on the line)
  let branchOk = false;
  let token: string | undefined;
  let i = s.viaStart + prefix.length - 1;
  while (i < s.viaEnd) {
    if (text.charCodeAt(i) !== 59 /* ; */) return undefined;
    const nameStart = ++i;
    while (i < s.viaEnd && isParamChar(text.charCodeAt(i)) && text.charCodeAt(i) !== 61) i++;
    const nameEnd = i;
    let valueStart = i;
    if (i < s.viaEnd && text.charCodeAt(i) === 61 /* = */) {
      valueStart = ++i;
      while (i < s.viaEnd && isParamChar(text.charCodeAt(i))) i++;
    }
    const name = nameEnd - nameStart;
    if (name === 6 && text.startsWith('branch', nameStart)) {
      if (branchOk) return undefined;
      branchOk = text.startsWith('z9hG4bKe', valueStart);
      if (!branchOk) return undefined;
    } else if (name === 5 && text.startsWith('vms-f', nameStart)) {
      if (token !== undefined) return undefined;
      token = text.slice(valueStart, i);
    }
  }
  if (!branchOk || token === undefined || token.length === 0) return undefined;
  const ref = ctx.codec.decode(token);
  if (ref === null || ref.transport !== 'udp') return undefined; // not ours: the parsed path drops it and counts
  const out = Buffer.allocUnsafe(data.length - (s.viaNext - s.viaLine));
  data.copy(out, 0, 0, s.viaLine);
  data.copy(out, s.viaLine, s.viaNext);
  return { data: out, host: ref.address, port: ref.port };
}

/** Whether the datagram is a response (cheap test on the first bytes). */
export const isResponseDatagram = (data: Buffer): boolean =>
  data.length > 8 && data[0] === 83 /* S */ && data[1] === 73 && data[2] === 80 && data[3] === 47 && data[7] === 32;

const PLAIN_METHODS = ['MESSAGE', 'NOTIFY'] as const;
/** `MESSAGE|NOTIFY SP Request-URI SP SIP/2.0 CRLF` (§7.1), the URI one token: the method, else undefined. */
const REQUEST_LINE = /^(MESSAGE|NOTIFY) [^\x00-\x20]+ SIP\/2\.0\r\n/;
function plainMethod(text: string): (typeof PLAIN_METHODS)[number] | undefined {
  const m = REQUEST_LINE.exec(text);
  return m === null ? undefined : (m[1] as (typeof PLAIN_METHODS)[number]);
}

const STATUS_LINE = /^SIP\/2\.0 [1-6]\d\d [^\r\n]*\r\n/;
const isStatusLine = (text: string): boolean => STATUS_LINE.test(text);

/** `<sip:` 20 digits `@`: the device code (what getFrom().uri.user gives for that shape). */
function fromDeviceId(text: string, a: number, b: number): string | undefined {
  if (b - a < 26 || !text.startsWith('<sip:', a) || text.charCodeAt(a + 25) !== 64 /* @ */) return undefined;
  for (let k = a + 5; k < a + 25; k++) if (!isDigit(text.charCodeAt(k))) return undefined;
  return text.slice(a + 5, a + 25);
}

/** `CSeq: 1*10DIGIT LWS Method`, the request's method (§8.1.1.5). */
function cseqIs(text: string, a: number, b: number, method: string): boolean {
  let i = a;
  while (i < b && isDigit(text.charCodeAt(i))) i++;
  if (i === a || i - a > 10) return false;
  const digitsEnd = i;
  while (i < b && isLws(text.charCodeAt(i))) i++;
  return i > digitsEnd && b - i === method.length && text.startsWith(method, i);
}

/** The `branch` value of a canonical Via line (lower-case names, `;`-separated, no LWS), or undefined. */
function branchParam(line: string): string | undefined {
  const at = line.indexOf(';branch=');
  if (at < 0) return undefined;
  const from = at + 8;
  const to = line.indexOf(';', from);
  return line.slice(from, to < 0 ? line.length : to);
}

/** The trimmed value of the (single) header `key` in the scanned text (rare: a Via without a branch). */
function headerValue(s: Scan, key: number): string {
  const text = s.text;
  for (let pos = s.startEol + 2, eol = 0; pos < s.end; pos = eol + 2) {
    eol = text.indexOf('\r\n', pos);
    const colon = text.indexOf(':', pos);
    if (headerKey(text, pos, colon) === key) return text.slice(colon + 1, eol).trim();
  }
  return '';
}

/** Decimal digits in text[a, b), at most `max` of them; -1 otherwise. */
function digits(text: string, a: number, b: number, max: number): number {
  if (b === a || b - a > max) return -1;
  let n = 0;
  for (let k = a; k < b; k++) {
    const d = text.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** The header `text[start, colon)` names (trailing LWS allowed), case-insensitively, or OTHER. */
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
        default: return OTHER;
      }
    case 2: return named(text, start, 'To', TO);
    case 3: return named(text, start, 'Via', VIA);
    case 4: return named(text, start, 'From', FROM) || named(text, start, 'CSeq', CSEQ);
    case 5: return named(text, start, 'Route', ROUTE);
    case 7: return named(text, start, 'Call-ID', CALL_ID);
    case 12: return named(text, start, 'Max-Forwards', MAX_FORWARDS);
    case 14: return named(text, start, 'Content-Length', LENGTH);
    default: return OTHER;
  }
}

/** `key` when text at `start` spells `word` in any letter case, else OTHER (the usual spelling first). */
function named(text: string, start: number, word: string, key: number): number {
  if (text.startsWith(word, start)) return key;
  for (let k = 0; k < word.length; k++) {
    const c = text.charCodeAt(start + k) | 0x20;
    const w = word.charCodeAt(k) | 0x20;
    if (c !== w || (w < 97 && w !== 45 && !isDigit(w))) return OTHER;
  }
  return key;
}

const isLws = (c: number): boolean => c === 32 || c === 9;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
/** A Via parameter's name or unquoted value char: not `;`, `,`, `"`, LWS, CR, LF. */
const isParamChar = (c: number): boolean => c !== 59 && c !== 44 && c !== 34 && c !== 32 && c !== 9 && c !== 13 && c !== 10;
