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
import { BAD_MAX_FORWARDS, cseqMatches, decodeLatin1, scanHeaderSection, stampCanonicalViaAt, type Flow, type HeaderScan } from '@vms/sip';
import { branchFrom, DEFAULT_MAX_FORWARDS, hostPart, viaOf, type ForwardContext } from './forward.ts';

/** A datagram to send: the transport's shortcut answer shape. */
export interface DatagramOut {
  readonly data: Buffer;
  readonly host: string;
  readonly port: number;
}

/** A device request read by readDeviceDatagram: the shared header scan, its method and device code. */
export interface DeviceDatagram {
  readonly data: Buffer;
  readonly text: string;
  readonly s: HeaderScan;
  readonly method: 'MESSAGE' | 'NOTIFY';
  readonly deviceId: string;
}

/**
 * The header scan (@vms/sip scanHeaderSection, the one the stack's stateless answers use) with the rules
 * both directions share here: exactly one From/To/Call-ID/CSeq and a Content-Length equal to the body.
 */
function scanPlain(text: string, startEol: number): HeaderScan | undefined {
  const s = scanHeaderSection(text, startEol);
  return s !== undefined && s.vias > 0 && s.froms === 1 && s.tos === 1 && s.callIds === 1 && s.cseqs === 1 && s.length === text.length - s.end - 4 ? s : undefined;
}

/**
 * A device request in the plain shape (MESSAGE/NOTIFY, no Route, …: see the top of this file), or
 * undefined → the parsed path. Read before admission, so a request the byte path will not take is charged
 * once, by the parsed path.
 */
export function readDeviceDatagram(data: Buffer): DeviceDatagram | undefined {
  const text = decodeLatin1(data);
  const method = plainMethod(text);
  if (method === undefined) return undefined;
  const s = scanPlain(text, text.indexOf('\r\n'));
  if (s === undefined || s.routes > 0 || s.maxForwards === 0 || s.maxForwards === BAD_MAX_FORWARDS || !cseqMatches(text, s.cseqStart, s.cseqEnd, method)) return undefined;
  const deviceId = fromDeviceId(text, s.fromStart, s.fromEnd);
  if (deviceId === undefined) return undefined;
  return { data, text, s, method, deviceId };
}

/**
 * The request read by readDeviceDatagram, its top Via stamped for `flow` (RFC 3581 §4), to the shard
 * placement picks; undefined → the parsed path decides (a top Via not in the canonical shape, no shard).
 */
export function forwardDeviceDatagram(d: DeviceDatagram, flow: Flow, ctx: ForwardContext): DatagramOut | undefined {
  const { text, s } = d;
  // the transport would stamp the same way before the parsed path (stampReceived + formatVia)
  const stamped = stampCanonicalViaAt(text, s.viaStart, s.viaEnd, flow.remoteAddress, flow.remotePort, false);
  if (stamped === undefined) return undefined;
  const shard = placeDevice(ctx.policy, ctx.shards(), d.deviceId);
  if (shard === null) return undefined;
  const topBranch = branchParam(stamped.line) ?? `${text.slice(s.callIdStart, s.callIdEnd)}|${text.slice(s.cseqStart, s.cseqEnd)}`;
  const token = ctx.codec.encode({ transport: 'udp', address: flow.remoteAddress, port: flow.remotePort });
  const edgeVia = viaOf(ctx.self, branchFrom(topBranch, token), token);
  const mf = String((s.maxForwards < 0 ? DEFAULT_MAX_FORWARDS : s.maxForwards) - 1);
  // request line, our Via, the header lines with two values replaced (in text order), the body: copied
  // from the datagram's bytes around three edits, no string built over the whole message
  const via = `Via: ${edgeVia}\r\n`;
  const at = s.startEol + 2;
  if (s.mfStart < 0) return out(d.data, shard.sipHost, shard.sipPort, at, at, via, s.viaStart, s.viaEnd, stamped.line, s.end + 2, s.end + 2, `Max-Forwards: ${mf}\r\n`);
  if (s.mfStart < s.viaStart) return out(d.data, shard.sipHost, shard.sipPort, at, at, via, s.mfStart, s.mfEnd, mf, s.viaStart, s.viaEnd, stamped.line);
  return out(d.data, shard.sipHost, shard.sipPort, at, at, via, s.viaStart, s.viaEnd, stamped.line, s.mfStart, s.mfEnd, mf);
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
  const s = isStatusLine(text) ? scanPlain(text, text.indexOf('\r\n')) : undefined;
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

/** The `branch` value of a canonical Via line (lower-case names, `;`-separated, no LWS), or undefined. */
function branchParam(line: string): string | undefined {
  const at = line.indexOf(';branch=');
  if (at < 0) return undefined;
  const from = at + 8;
  const to = line.indexOf(';', from);
  return line.slice(from, to < 0 ? line.length : to);
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
/** A Via parameter's name or unquoted value char: not `;`, `,`, `"`, LWS, CR, LF. */
const isParamChar = (c: number): boolean => c !== 59 && c !== 44 && c !== 34 && c !== 32 && c !== 9 && c !== 13 && c !== 10;
