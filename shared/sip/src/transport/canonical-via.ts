/**
 * §18.2.1 / RFC 3581 §4 Via stamping for the datagram shortcut without parsing the hop into a
 * ViaHop: keepalives arrive at fleet rate and their top Via is nearly always written the canonical
 * way, `SIP/2.0/UDP host[:port](;name[=value])*` — upper-case protocol, one space, lower-case unique
 * parameter names, no LWS, no comma. For exactly that shape, formatVia(parseViaHop(x)) === x, so
 * stamping is string surgery giving the same line stampReceived() + formatVia() would, and the same
 * destination as responseDestination(). Any other shape (IPv6, a `received` already present, other
 * spellings, several hops on the line, an IPv6 source) returns undefined and the caller parses.
 */
import { isTokenChar } from '../message/lex.ts';
import { DEFAULT_SIP_PORT } from './via-stamp.ts';

export interface StampedLine {
  /** The Via line, its (only) hop stamped. */
  readonly line: string;
  /** §18.2.2 / RFC 3581 §4 destination of the response. */
  readonly host: string;
  readonly port: number;
}

const PREFIX = 'SIP/2.0/UDP ';
const MAX_PARAMS = 16;
/** Scratch for the duplicate-name check: parameter name bounds. One call at a time (synchronous). */
const nameStart = new Int32Array(MAX_PARAMS);
const nameEnd = new Int32Array(MAX_PARAMS);

export function stampCanonicalVia(line: string, srcAddress: string, srcPort: number, forceRport: boolean): StampedLine | undefined {
  return stampCanonicalViaAt(line, 0, line.length, srcAddress, srcPort, forceRport);
}

/**
 * stampCanonicalVia() of `text[from, to)`, read in place: the datagram shortcut passes the whole
 * datagram text, whose char reads are cheaper than those of a slice of it.
 */
export function stampCanonicalViaAt(text: string, from: number, to: number, srcAddress: string, srcPort: number, forceRport: boolean): StampedLine | undefined {
  if (!text.startsWith(PREFIX, from) || to - from < PREFIX.length || srcAddress.includes(':')) return undefined;
  const n = to;
  let i = from + PREFIX.length;
  const hostStart = i;
  while (i < n && isHostChar(text.charCodeAt(i))) i++;
  if (i === hostStart) return undefined;
  const hostEnd = i;
  let sentPort: number | null = null;
  if (i < n && text.charCodeAt(i) === 58 /* : */) {
    const portStart = ++i;
    let value = 0;
    while (i < n && isDigit(text.charCodeAt(i)) && i - portStart < 5) value = value * 10 + text.charCodeAt(i++) - 48;
    // formatVia writes the number: a leading zero would not survive a parse and format.
    if (i === portStart || value > 65535 || (text.charCodeAt(portStart) === 48 && i - portStart > 1)) return undefined;
    sentPort = value;
  }
  let rportAt = -1; // start of `rport` / `rport=v`, and end
  let rportEnd = -1;
  let params = 0;
  while (i < n) {
    if (text.charCodeAt(i) !== 59 /* ; */ || params === MAX_PARAMS) return undefined;
    const start = ++i;
    while (i < n && isLowerTokenChar(text.charCodeAt(i))) i++;
    if (i === start) return undefined;
    for (let p = 0; p < params; p++) if (sameName(text, nameStart[p] as number, nameEnd[p] as number, start, i)) return undefined;
    nameStart[params] = start;
    nameEnd[params++] = i;
    const name = i - start;
    if (name === 8 && text.startsWith('received', start)) return undefined; // its value would steer the answer
    const isRport = name === 5 && text.startsWith('rport', start);
    if (i < n && text.charCodeAt(i) === 61 /* = */) {
      const valueStart = ++i;
      while (i < n && isValueChar(text.charCodeAt(i))) i++;
      if (i === valueStart) return undefined;
    }
    if (isRport) {
      rportAt = start;
      rportEnd = i;
    }
  }
  return stampCanonicalParts(text, from, to, hostStart, hostEnd, sentPort, rportAt, rportEnd, srcAddress, srcPort, forceRport);
}

/**
 * The stamped line and destination of a canonical hop text[from, to) already taken apart: host at
 * [hostStart, hostEnd), the sent-by port or null, the `rport` parameter at [rportAt, rportEnd) or -1.
 * For stampCanonicalViaAt and for usual-datagram.ts, whose regex has checked the same shape.
 */
export function stampCanonicalParts(
  text: string,
  from: number,
  to: number,
  hostStart: number,
  hostEnd: number,
  sentPort: number | null,
  rportAt: number,
  rportEnd: number,
  srcAddress: string,
  srcPort: number,
  forceRport: boolean,
): StampedLine {
  const host = text.slice(hostStart, hostEnd);
  const wantsRport = rportAt >= 0 || forceRport;
  // The same address as written (the usual case) needs no case-folded copies.
  const received = wantsRport || (host !== srcAddress && host.toLowerCase() !== srcAddress.toLowerCase());
  // Map order as stampReceived leaves it: rport in place (or appended), then received appended.
  let out = rportAt >= 0 ? `${text.slice(from, rportAt)}rport=${srcPort}${text.slice(rportEnd, to)}` : text.slice(from, to);
  if (rportAt < 0 && wantsRport) out += `;rport=${srcPort}`;
  if (received) out += `;received=${srcAddress}`;
  return { line: out, host: received ? srcAddress : host, port: wantsRport ? srcPort : (sentPort ?? DEFAULT_SIP_PORT) };
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isHostChar = (c: number): boolean => isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 122) || c === 45 || c === 46 || c === 95;
/** Parameter names are lower-cased by the parser: only already-lower-case ones are canonical. */
const isLowerTokenChar = (c: number): boolean => isTokenChar(c) && !(c >= 65 && c <= 90);
/** What parseParamsAt takes as an unquoted value: anything but `;`, `"`, `,` and LWS. */
const isValueChar = (c: number): boolean => c !== 59 && c !== 34 && c !== 44 && c !== 32 && c !== 9;

function sameName(s: string, a0: number, a1: number, b0: number, b1: number): boolean {
  if (a1 - a0 !== b1 - b0) return false;
  for (let k = 0; k < a1 - a0; k++) if (s.charCodeAt(a0 + k) !== s.charCodeAt(b0 + k)) return false;
  return true;
}

/**
 * What canonicalParams() found: the `rport` parameter's name start and end ([0], [1]), the `branch`
 * parameter's value start and end ([2], [3]; empty for `;branch` without a value); -1 when absent.
 */
export const paramBounds = new Int32Array(4);

/**
 * The `branch` value of a canonical hop text[from, to) (one stampCanonicalViaAt accepted: lower-case
 * names, each once, values without `;`), as the parser reads it; '' without one.
 */
export function canonicalBranch(text: string, from: number, to: number): string {
  for (let at = text.indexOf(';branch', from); at >= 0 && at < to; at = text.indexOf(';branch', at + 1)) {
    const end = at + ';branch'.length;
    if (end === to || text.charCodeAt(end) === 59 /* ; */) return '';
    if (text.charCodeAt(end) !== 61 /* = */) continue; // a longer name
    let stop = text.indexOf(';', end);
    if (stop < 0 || stop > to) stop = to;
    return text.slice(end + 1, stop);
  }
  return '';
}

const USUAL_PARAMS = ';rport;branch=';

/**
 * The parameter rules of the canonical shape for `;name[=value]…` in text[a, b), whose characters a
 * regex has already checked (lower-case token names, values without `;` `"` `,` or LWS): at most
 * MAX_PARAMS, no name twice, no `received`. Records `rport` and `branch` in paramBounds. False: not canonical.
 */
export function canonicalParams(text: string, a: number, b: number): boolean {
  // eXosip's and SIPp's parameters, `;rport;branch=<value>` and nothing after: the walk's verdict and
  // bounds without the walk (one indexOf and a compare, not one indexOf and a name loop per parameter)
  if (b - a > USUAL_PARAMS.length && text.startsWith(USUAL_PARAMS, a)) {
    const more = text.indexOf(';', a + USUAL_PARAMS.length);
    if (more < 0 || more >= b) {
      paramBounds[0] = a + 1;
      paramBounds[1] = a + ';rport'.length;
      paramBounds[2] = a + USUAL_PARAMS.length;
      paramBounds[3] = b;
      return true;
    }
  }
  return walkCanonicalParams(text, a, b);
}

/** canonicalParams() by the walk alone (every shape; exported for the test holding the two equal). */
export function walkCanonicalParams(text: string, a: number, b: number): boolean {
  paramBounds[0] = -1;
  paramBounds[1] = -1;
  paramBounds[2] = -1;
  paramBounds[3] = -1;
  let params = 0;
  for (let i = a; i < b; ) {
    const start = i + 1; // past the `;`
    let next = text.indexOf(';', start);
    if (next < 0 || next > b) next = b;
    let end = start;
    while (end < next && text.charCodeAt(end) !== 61 /* = */) end++;
    if (params === MAX_PARAMS) return false;
    for (let p = 0; p < params; p++) if (sameName(text, nameStart[p] as number, nameEnd[p] as number, start, end)) return false;
    nameStart[params] = start;
    nameEnd[params++] = end;
    if (end - start === 8 && text.startsWith('received', start)) return false;
    if (end - start === 5 && text.startsWith('rport', start)) {
      paramBounds[0] = start;
      paramBounds[1] = next;
    } else if (end - start === 6 && text.startsWith('branch', start)) {
      paramBounds[2] = end === next ? end : end + 1; // past the `=`
      paramBounds[3] = next;
    }
    i = next;
  }
  return true;
}
