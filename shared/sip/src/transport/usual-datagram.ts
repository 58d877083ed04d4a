/**
 * The usual head of a keepalive-rate datagram read by one compiled regex, for the datagram shortcut
 * (datagram-shortcut.ts). Nearly every device's SIP stack (osip/eXosip, Hikvision, SIPp, the
 * simulators and the SPVMN tool in the captures of @vms/fixtures) writes a request the same way:
 *
 *   METHOD uri SIP/2.0
 *   Via: SIP/2.0/UDP host[:port](;name[=value])*     (the canonical-via.ts shape)
 *   From: …
 *   To: …
 *   Call-ID: …
 *   CSeq: digits METHOD
 *   [Content-Type: …  Max-Forwards: digits  [User-Agent: …]  Content-Length: digits  CRLF]
 *   or a REGISTER's [Contact: …  Max-Forwards: digits  [User-Agent: …]  Expires: digits  Content-Length: digits  CRLF]
 *
 * with the usual header spellings, one SP after the colon and no LWS at the ends of a value. One
 * match of that shape reads what the header scanner (header-scan.ts) would read line by line with a
 * builtin call or two per line, the canonical Via's parts included, in one pass of native code:
 * measured with callgrind, the per-line scan and the Via stamp were ~12k of the ~55k instructions a
 * keepalive cost (docs/benchmarks.md). The bracketed tail is optional: when it is not there in that
 * order, the caller scans the remaining lines with the scanner, from where the match ended.
 *
 * A strict subset: whatever does not match — other order, compact or other-case names, LWS, folded
 * lines, several Via lines on top, a Via of another shape — makes readUsualHead return false and the
 * caller take the scanner, which decides as before. The values read are exactly the scanner's (the
 * regex takes no LWS at a value's ends, so trimmed = as written); test/transport-datagram-equivalence
 * holds the two against each other and against the parser on the captures and on mutations.
 *
 * The regex is linear: every repeated part is bounded by a character the next part cannot start
 * with, and each value's backtracking stays within its line (anchored by the CRLF after it).
 */
import { canonicalParams, paramBounds } from './canonical-via.ts';

/** A value with no SP/HT at either end and no CR or LF in it. */
const V = String.raw`[^ \t\r\n](?:[^\r\n]*[^ \t\r\n])?`;

const USUAL_HEAD = new RegExp(
  // the Request-URI captured for its length: where the request line ends without a search (a capture costs less)
  String.raw`([A-Z]+) ([^\x00-\x20]+) SIP\/2\.0\r\n` +
    // sent-by host, port, parameters as canonical-via.ts reads them (lower-case token names)
    // eXosip's and SIPp's parameters, `;rport;branch=<value>` and nothing after, flagged by an empty group (m[6]):
    // canonicalParams' verdict and bounds for them without its calls (the other alternative takes every list)
    String.raw`Via: SIP\/2\.0\/UDP ([A-Za-z0-9._\-]+)(?::(0|[1-9][0-9]{0,4}))?(;rport;branch=[^;", \t\r\n]+()|(?:;[a-z0-9!%'*+._\x60~\-]+(?:=[^;", \t\r\n]+)?)*)\r\n` +
    `From: (${V})\r\n` +
    `To: (${V})\r\n` +
    `Call-ID: (${V})\r\n` +
    String.raw`CSeq: ([0-9]{1,10} \1)\r\n` +
    // the devices' own MANSCDP spelling flagged by an empty group (m[11]): read as the one constant below
    String.raw`(?:Content-Type: (?:Application\/MANSCDP\+xml()|(${V}))\r\nMax-Forwards: [0-9]{1,3}\r\n(?:User-Agent: [^\r\n]*\r\n)?Content-Length: *([0-9]{1,10})\r\n\r\n` +
    // or a REGISTER's (the first leg of every registration, issue 11): Contact, Max-Forwards, [User-Agent], Expires (m[14]), Content-Length (m[15])
    String.raw`|Contact: ${V}\r\nMax-Forwards: [0-9]{1,3}\r\n(?:User-Agent: [^\r\n]*\r\n)?Expires: ([0-9]{1,10})\r\nContent-Length: *([0-9]{1,10})\r\n\r\n)?`,
  'y',
);

/**
 * The Content-Type GB28181 devices write (and the standard's examples), returned as this one internalized
 * string rather than a slice of the datagram: a handler comparing with it makes a pointer compare, where
 * a slice of 13 chars or more against a constant is a runtime call (~0.4k instructions under callgrind).
 */
const MANSCDP_SPELLING = 'Application/MANSCDP+xml';

const VIA_PREFIX = 'Via: SIP/2.0/UDP '.length;
const RPORT_END = ';rport'.length;
const BRANCH_AT = ';rport;branch='.length;

/** What readUsualHead read. */
export class UsualHead {
  method = '';
  /** The CRLF ending the request line. */
  startEol = -1;
  /** The Via value's bounds in the text, the host's, the sent-by port (null: none). */
  viaStart = -1;
  viaEnd = -1;
  hostEnd = -1;
  sentPort: number | null = null;
  /** Whether the Via's parameters follow canonical-via.ts's rules (then rportAt/rportEnd hold). */
  canonicalVia = false;
  /** The `rport` parameter's bounds ([name start, parameter end)), -1 when absent. */
  rportAt = -1;
  rportEnd = -1;
  /** The `branch` parameter's value bounds when canonicalVia, -1 when absent. */
  branchStart = -1;
  branchEnd = -1;
  from = '';
  to = '';
  callId = '';
  cseq = '';
  /** Where the match ended: the body's start when `tail`, else the start of the next header line. */
  next = -1;
  /** Whether a tail (Content-Type … Content-Length or Contact … Content-Length, the empty line) matched. */
  tail = false;
  contentType: string | undefined = undefined;
  /** Content-Length's value when `tail`. */
  length = -1;
  /**
   * The Expires value when the REGISTER tail matched (then the lines after CSeq are Contact, Max-Forwards,
   * User-Agent if there, Expires and Content-Length, each once); undefined otherwise.
   */
  expires: string | undefined = undefined;
}

/** Reads the usual head of `text` (a datagram's latin1 text); undefined when it is not one. */
export function readUsualHead(text: string): UsualHead | undefined {
  USUAL_HEAD.lastIndex = 0;
  const m = USUAL_HEAD.exec(text);
  if (m === null) return undefined;
  // a new object per read: storing fresh strings into a long-lived one costs a write barrier each (RecordWrite)
  const h = new UsualHead();
  const method = m[1] as string;
  const host = m[3] as string;
  const port = m[4];
  const params = m[5] as string;
  // the literal, not the match's copy: the stack's handler lookup by method then hashes nothing
  h.method = method === 'MESSAGE' ? 'MESSAGE' : method === 'REGISTER' ? 'REGISTER' : method;
  h.startEol = method.length + 1 + (m[2] as string).length + ' SIP/2.0'.length;
  h.viaStart = h.startEol + 2 + 'Via: '.length;
  h.hostEnd = h.startEol + 2 + VIA_PREFIX + host.length;
  const paramsStart = port === undefined ? h.hostEnd : h.hostEnd + 1 + port.length;
  h.viaEnd = paramsStart + params.length;
  if (port === undefined) h.sentPort = null;
  else {
    const n = decimal(port);
    if (n > 65535) return undefined; // the scanner path parses it and decides
    h.sentPort = n;
  }
  if (m[6] !== undefined) {
    // `;rport;branch=<value>`: what canonicalParams finds for it (transport-usual-datagram.test.ts)
    h.canonicalVia = true;
    h.rportAt = paramsStart + 1;
    h.rportEnd = paramsStart + RPORT_END;
    h.branchStart = paramsStart + BRANCH_AT;
    h.branchEnd = h.viaEnd;
  } else {
    h.canonicalVia = canonicalParams(text, paramsStart, h.viaEnd);
    h.rportAt = paramBounds[0] as number;
    h.rportEnd = paramBounds[1] as number;
    h.branchStart = paramBounds[2] as number;
    h.branchEnd = paramBounds[3] as number;
  }
  h.from = m[7] as string;
  h.to = m[8] as string;
  h.callId = m[9] as string;
  h.cseq = m[10] as string;
  h.next = USUAL_HEAD.lastIndex;
  const length = m[13] ?? m[15];
  h.tail = length !== undefined;
  h.contentType = m[11] !== undefined ? MANSCDP_SPELLING : m[12];
  h.length = length === undefined ? -1 : decimal(length);
  h.expires = m[14];
  return h;
}

/** The value of a string of 1-10 decimal digits (the regex checked them): no Number(), which hashes the string. */
function decimal(digits: string): number {
  let v = 0;
  for (let i = 0; i < digits.length; i++) v = v * 10 + digits.charCodeAt(i) - 48;
  return v;
}
