import { SipParseError, type SipErrorCode } from '../errors.ts';
import { getCallId, getCSeq, getFrom, getTo, getTopVia } from './accessors.ts';
import { parseContentLength } from './content-length.ts';
import { SipHeaders } from './headers.ts';
import { isLws, isToken, trimLws } from './lex.ts';
import type { SipMessage, SipRequest, SipResponse, SipUri } from './types.ts';
import { parseUri } from './uri.ts';
import { readUsualHeaderLines } from './usual-lines.ts';

const CR = 13;
const LF = 10;
const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');
const LFLF = Buffer.from('\n\n', 'latin1');
const EMPTY = Buffer.alloc(0);
/** Headers without which no response can be built (RFC 3261 §8.1.1; Max-Forwards is often missing in GB28181 traffic). */
const REQUIRED = ['Via', 'From', 'To', 'Call-ID', 'CSeq'] as const;

/**
 * Parses one SIP message from a datagram, or from a message cut out by SipStreamFramer.
 * Headers are stored raw (latin1 strings, one char per byte); structured parsing is left to the
 * accessors. Body rules are RFC 3261 §18.3 for message-oriented transports:
 *  - Content-Length present: the body is that many bytes, extra bytes are discarded; fewer bytes
 *    than announced is an error (a 400 for requests).
 *  - Content-Length absent: the body is the rest of the datagram.
 * The body is a view (`subarray`) of `buf`, never re-encoded: GB28181 bodies are GB2312 bytes.
 */
export interface ParseOptions {
  /**
   * A datagram, or a stream frame cut by SipStreamFramer: when Content-Length is shorter than the
   * bytes that follow and those bytes are not padding, keep the whole rest as the body. Some GB28181
   * devices count the body in characters or in GB2312 but send UTF-8, or forget a CRLF, and RFC 3261
   * §18.3 truncation would cut their XML. A datagram holds exactly one message, and a frame is
   * exactly what the framer measured (miscounted-length.ts), so nothing else can be in those bytes.
   */
  trustDatagramEnd?: boolean;
}

/** Set on a message whose body was kept past its Content-Length (see ParseOptions.trustDatagramEnd). */
export const BODY_LENGTH_MISCOUNTED = Symbol('vms.sip.bodyLengthMiscounted');

export function parseSipMessage(buf: Buffer, options?: ParseOptions): SipMessage {
  const len = buf.length;
  let start = 0;
  // RFC 3261 §7.5: CRLFs before the start line are ignored.
  while (start < len && (buf[start] === CR || buf[start] === LF)) start++;
  if (start === len) throw new SipParseError('SIP_ERR_START_LINE', 'empty message');

  // The header section ends at the first empty line. Peers that end lines with bare LF get the same
  // treatment; the first line's terminator tells which separator to look for.
  const firstLf = buf.indexOf(LF, start);
  let headEnd = len;
  let bodyStart = len;
  if (firstLf !== -1) {
    const crlf = firstLf > start && buf[firstLf - 1] === CR;
    const at = buf.indexOf(crlf ? CRLFCRLF : LFLF, start);
    if (at !== -1) {
      headEnd = at;
      bodyStart = at + (crlf ? 4 : 2);
    }
  }
  const head = buf.toString('latin1', start, headEnd);

  let eol = head.indexOf('\n');
  if (eol === -1) eol = head.length;
  const startLine = head.charCodeAt(eol - 1) === CR ? head.slice(0, eol - 1) : head.slice(0, eol);
  const headers = new SipHeaders();
  // the usual REGISTER lines in one regex match (usual-lines.ts), else the line scanner
  const usual = readUsualHeaderLines(head, eol + 1, headers);
  const headerError = usual ? undefined : parseHeaderLines(head, eol + 1, headers);

  let msg: SipMessage;
  let deferred: SipParseError | undefined;
  if (startsWithSipVersion(startLine)) {
    msg = parseStatusLine(startLine, headers);
  } else {
    const req = parseRequestLine(startLine, headers);
    msg = req.request;
    deferred = req.error;
  }

  if (deferred?.code === 'SIP_ERR_VERSION') fail(msg, deferred.code, deferred.message);
  // the usual lines hold every required header
  if (!usual) for (const name of REQUIRED) if (!headers.has(name)) fail(msg, 'SIP_ERR_MISSING_HEADER', `missing ${name}`, name);
  if (headerError !== undefined) fail(msg, headerError.code, headerError.message, headerError.header);
  if (deferred !== undefined) fail(msg, deferred.code, deferred.message);

  let contentLength: number | null;
  try {
    contentLength = parseContentLength(headers.getLines('Content-Length'));
  } catch (err) {
    if (!(err instanceof SipParseError)) throw err;
    return fail(msg, err.code, err.message, 'Content-Length');
  }
  const available = len - bodyStart;
  if (contentLength === null) {
    msg.body = available === 0 ? EMPTY : buf.subarray(bodyStart);
  } else if (contentLength > available) {
    fail(msg, 'SIP_ERR_BODY_TRUNCATED', `Content-Length ${contentLength} exceeds the ${available} body bytes received`, 'Content-Length');
  } else if (options?.trustDatagramEnd === true && contentLength < available && !isPadding(buf, bodyStart + contentLength)) {
    msg.body = buf.subarray(bodyStart);
    (msg as unknown as Record<symbol, boolean>)[BODY_LENGTH_MISCOUNTED] = true;
  } else {
    msg.body = contentLength === 0 ? EMPTY : buf.subarray(bodyStart, bodyStart + contentLength);
  }
  return msg;
}

/** The two readings of a head's header lines (from `from` on), each alone: for the test holding readUsualHeaderLines to the scanner. */
export const headerLineReadings = {
  usual(head: string, from: number): SipHeaders | undefined {
    const headers = new SipHeaders();
    return readUsualHeaderLines(head, from, headers) ? headers : undefined;
  },
  scanned(head: string, from: number): { headers: SipHeaders; error: SipParseError | undefined } {
    const headers = new SipHeaders();
    return { headers, error: parseHeaderLines(head, from, headers) };
  },
};

/** True when every byte from `from` on is CR, LF, SP, HT or NUL (keepalive padding some stacks add). */
function isPadding(buf: Buffer, from: number): boolean {
  for (let i = from; i < buf.length; i++) {
    const b = buf[i];
    if (b !== CR && b !== LF && b !== 32 && b !== 9 && b !== 0) return false;
  }
  return true;
}

/**
 * Header lines from `pos` to the end of `head`. Folded lines (leading SP/HT, RFC 3261 §7.3.1) join
 * the previous value with one SP. Bad lines are skipped and the first problem is returned, so the
 * caller can still answer the request with a 400.
 */
function parseHeaderLines(head: string, pos: number, headers: SipHeaders): SipParseError | undefined {
  let error: SipParseError | undefined;
  let name: string | undefined;
  let value = '';
  while (pos < head.length) {
    let nl = head.indexOf('\n', pos);
    if (nl === -1) nl = head.length;
    const end = nl > pos && head.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
    if (end > pos) {
      if (isLws(head.charCodeAt(pos))) {
        if (name === undefined) error ??= headerLineError('continuation line without a header', head, pos, end);
        else value = joinFolded(value, head.slice(pos, end));
      } else {
        if (name !== undefined) headers.append(name, value);
        name = undefined;
        const colon = head.indexOf(':', pos);
        if (colon === -1 || colon >= end) {
          error ??= headerLineError('header line without colon', head, pos, end);
        } else {
          let nameEnd = colon;
          while (nameEnd > pos && isLws(head.charCodeAt(nameEnd - 1))) nameEnd--;
          const rawName = head.slice(pos, nameEnd);
          if (isToken(rawName)) {
            name = rawName;
            let vs = colon + 1;
            let ve = end;
            while (vs < ve && isLws(head.charCodeAt(vs))) vs++;
            while (ve > vs && isLws(head.charCodeAt(ve - 1))) ve--;
            value = head.slice(vs, ve);
          } else {
            error ??= headerLineError('bad header name', head, pos, end);
          }
        }
      }
    }
    pos = nl + 1;
  }
  if (name !== undefined) headers.append(name, value);
  return error;
}

function joinFolded(value: string, continuation: string): string {
  const more = trimLws(continuation);
  if (more.length === 0) return value;
  return value.length === 0 ? more : `${value} ${more}`;
}

/** `SIP/` in any case: the start of a Status-Line (a request method cannot contain `/`). */
function startsWithSipVersion(line: string): boolean {
  return (
    (line.charCodeAt(0) | 0x20) === 115 && (line.charCodeAt(1) | 0x20) === 105 && (line.charCodeAt(2) | 0x20) === 112 && line.charCodeAt(3) === 47
  );
}

/** Status-Line = SIP-Version SP Status-Code SP Reason-Phrase (RFC 3261 §7.2); empty reason tolerated. */
function parseStatusLine(line: string, headers: SipHeaders): SipResponse {
  const sp = line.indexOf(' ');
  const version = sp === -1 ? line : line.slice(0, sp);
  const codeText = sp === -1 ? '' : line.slice(sp + 1, sp + 4);
  const after = line.charCodeAt(sp + 4);
  const status = Number(codeText);
  if (!/^[1-6]\d\d$/.test(codeText) || (sp + 4 < line.length && after !== 32)) {
    throw new SipParseError('SIP_ERR_START_LINE', `bad status line: ${line.slice(0, 80)}`);
  }
  checkVersion(version, line);
  return { type: 'response', status, reason: line.slice(sp + 5), headers, body: EMPTY };
}

/**
 * Request-Line = Method SP Request-URI SP SIP-Version (RFC 3261 §7.1). Extra SPs between the three
 * parts are tolerated (RFC 4475 case "lwsstart" permits leniency), LWS inside the URI is not ("lwsruri").
 * Version and URI problems are returned rather than thrown: the request can still get a 505/400.
 */
function parseRequestLine(line: string, headers: SipHeaders): { request: SipRequest; error?: SipParseError } {
  const sp1 = line.indexOf(' ');
  const sp2 = line.lastIndexOf(' ');
  const method = sp1 === -1 ? '' : line.slice(0, sp1);
  if (sp1 <= 0 || sp2 <= sp1 || !isToken(method)) {
    throw new SipParseError('SIP_ERR_START_LINE', `bad request line: ${line.slice(0, 80)}`);
  }
  const version = line.slice(sp2 + 1);
  const rawUri = trimLws(line.slice(sp1 + 1, sp2));
  let uri: SipUri;
  let error: SipParseError | undefined;
  try {
    if (rawUri.length === 0) throw new SipParseError('SIP_ERR_URI', 'empty Request-URI');
    uri = parseUri(rawUri);
  } catch (err) {
    if (!(err instanceof SipParseError)) throw err;
    error = err;
    uri = { scheme: '', user: null, password: null, host: '', port: null, params: new Map(), headers: new Map(), opaque: rawUri };
  }
  try {
    checkVersion(version, line);
  } catch (err) {
    if (!(err instanceof SipParseError) || err.code !== 'SIP_ERR_VERSION') throw err;
    error = err;
  }
  return { request: { type: 'request', method, uri, rawUri, headers, body: EMPTY }, error };
}

/** SIP-Version is case-insensitive (RFC 3261 §7.1); anything but 2.0 gets 505 (§8.2.2). */
function checkVersion(version: string, line: string): void {
  if (version === 'SIP/2.0') return;
  if (!/^SIP\/\d{1,3}\.\d{1,3}$/i.test(version)) {
    throw new SipParseError('SIP_ERR_START_LINE', `bad SIP version: ${line.slice(0, 80)}`);
  }
  if (version.slice(4) !== '2.0') throw new SipParseError('SIP_ERR_VERSION', `unsupported SIP version ${version}`);
}

/** Throws with the partial request attached; answerable when a 4xx/5xx can be built from it. */
function fail(msg: SipMessage, code: SipErrorCode, message: string, header?: string): never {
  const request = msg.type === 'request' ? msg : undefined;
  throw new SipParseError(code, message, { request, header }, request !== undefined && canAnswer(request));
}

function canAnswer(req: SipRequest): boolean {
  try {
    getTopVia(req);
    getFrom(req);
    getTo(req);
    getCallId(req);
    getCSeq(req);
    return true;
  } catch (err) {
    if (err instanceof SipParseError) return false;
    throw err;
  }
}

function headerLineError(why: string, head: string, pos: number, end: number): SipParseError {
  return new SipParseError('SIP_ERR_HEADER', `${why}: ${head.slice(pos, Math.min(end, pos + 80))}`);
}
