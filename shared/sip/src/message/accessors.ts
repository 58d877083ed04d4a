import { SipParseError } from '../errors.ts';
import { isLws, isToken, parseParamsAt, splitHeaderValues, trimLws } from './lex.ts';
import { parseNameAddr } from './name-addr.ts';
import type { CSeq, NameAddr, Params, SipMessage, ViaHop } from './types.ts';
import { parseVia, parseViaHop } from './via.ts';

/**
 * Structured views of the headers, parsed on demand from the raw strings (parseSipMessage never
 * does this work). Every malformed or missing required value throws SipParseError.
 */

/** All hops, top first, splitting comma-separated values and joining lines (RFC 3261 §7.3.1). */
export function getVias(msg: SipMessage): ViaHop[] {
  const lines = msg.headers.getLines('Via');
  if (lines.length === 0) throw missing('Via');
  return lines.flatMap(parseVia);
}

/** SipHeaders.parsedOnce slots: a request's top Via is read ~7 times on its way (transaction key, stamp, response route…). */
const TOP_VIA_SLOT = 0;
const FROM_SLOT = 1;
const TO_SLOT = 2;

/**
 * The first hop of the first Via line. Parsed once per header set and Via value (SipHeaders.parsedOnce),
 * so the hop is shared: read it, or mutate it only to rewrite the Via from it (stampReceived).
 */
export function getTopVia(msg: SipMessage): ViaHop {
  const first = msg.headers.get('Via');
  if (first === undefined) throw missing('Via');
  return msg.headers.parsedOnce(TOP_VIA_SLOT, first, parseTopVia);
}

/**
 * The first Via line replaced by `line`, written from `hop` (formatVia of the stamped top hop, the
 * line's other hops unchanged), and `hop` kept as its parse: parseViaHop(formatVia(hop)) is hop
 * (transport-via-stamp.test.ts holds it), so the stamped Via is not parsed again (issue 11: ~10k
 * instructions per request, for the transaction key and the response route).
 */
export function replaceTopVia(msg: SipMessage, line: string, hop: ViaHop): void {
  msg.headers.replaceFirst('Via', line);
  msg.headers.keepParsed(TOP_VIA_SLOT, line, hop);
}

function parseTopVia(first: string): ViaHop {
  const top = splitHeaderValues(first)[0];
  if (top === undefined) throw invalid('Via', first);
  return parseViaHop(top);
}

/** From, parsed once per header set and value like getTopVia: shared, not to be mutated. */
export function getFrom(msg: SipMessage): NameAddr {
  return singleNameAddr(msg, 'From', FROM_SLOT);
}

/** To, parsed once per header set and value like getTopVia: shared, not to be mutated. */
export function getTo(msg: SipMessage): NameAddr {
  return singleNameAddr(msg, 'To', TO_SLOT);
}

/** Call-ID = word [ "@" word ] (RFC 3261 §25.1); compared byte-for-byte, so returned as received. */
export function getCallId(msg: SipMessage): string {
  const raw = msg.headers.get('Call-ID');
  if (raw === undefined) throw missing('Call-ID');
  const v = trimLws(raw);
  if (v.length === 0 || hasLws(v)) throw invalid('Call-ID', raw);
  return v;
}

const MAX_CSEQ = 0x7fffffff; // RFC 3261 §8.1.1.5: the sequence number MUST be less than 2**31

export function getCSeq(msg: SipMessage): CSeq {
  const raw = msg.headers.get('CSeq');
  if (raw === undefined) throw missing('CSeq');
  const v = trimLws(raw);
  let i = 0;
  let seq = 0;
  while (i < v.length && isDigit(v.charCodeAt(i))) {
    seq = seq * 10 + v.charCodeAt(i++) - 48;
    if (seq > MAX_CSEQ) throw invalid('CSeq', raw);
  }
  const digitsEnd = i;
  while (i < v.length && isLws(v.charCodeAt(i))) i++;
  const method = v.slice(i);
  if (digitsEnd === 0 || i === digitsEnd || !isToken(method)) throw invalid('CSeq', raw);
  return { seq, method };
}

/** A `Contact: *` (RFC 3261 §10.2.2, REGISTER only) comes back as one entry with `wildcard: true`. */
export function getContacts(msg: SipMessage): NameAddr[] {
  const out: NameAddr[] = [];
  for (const line of msg.headers.getLines('Contact')) {
    for (const value of splitHeaderValues(line)) {
      if (value === '*') out.push(wildcardContact());
      else out.push(parseNameAddr(value));
    }
  }
  return out;
}

export function getRouteSet(msg: SipMessage, name: 'Route' | 'Record-Route'): NameAddr[] {
  return msg.headers.getLines(name).flatMap((line) => splitHeaderValues(line).map(parseNameAddr));
}

/** Expires delta-seconds (RFC 3261 §20.19: 0 … 2**32-1); null when absent. */
export function getExpires(msg: SipMessage): number | null {
  return optionalInteger(msg, 'Expires', 0xffffffff);
}

/** Max-Forwards (RFC 3261 §20.22: 0 … 255); null when absent. */
export function getMaxForwards(msg: SipMessage): number | null {
  return optionalInteger(msg, 'Max-Forwards', 255);
}

export interface ContentType {
  /** `type/subtype`, lower-cased: compare against `application/manscdp+xml`, `application/sdp`. */
  mediaType: string;
  type: string;
  subtype: string;
  /** e.g. `charset` (names lower-cased, values raw). */
  params: Params;
}

/** RFC 3261 §20.15 media-type; null when absent. */
export function getContentType(msg: SipMessage): ContentType | null {
  const raw = msg.headers.get('Content-Type');
  if (raw === undefined) return null;
  const semi = raw.indexOf(';');
  const media = trimLws(semi === -1 ? raw : raw.slice(0, semi));
  const slash = media.indexOf('/');
  const type = trimLws(media.slice(0, Math.max(slash, 0))).toLowerCase();
  const subtype = trimLws(media.slice(slash + 1)).toLowerCase();
  if (slash === -1 || !isToken(type) || !isToken(subtype)) throw invalid('Content-Type', raw);
  return { mediaType: `${type}/${subtype}`, type, subtype, params: semi === -1 ? new Map() : parseParamsAt(raw, semi) };
}

export function isWildcardContact(n: NameAddr): boolean {
  return n.wildcard === true;
}

function wildcardContact(): NameAddr {
  return {
    displayName: null,
    uri: { scheme: '*', user: null, password: null, host: '', port: null, params: new Map(), headers: new Map(), opaque: '' },
    params: new Map(),
    wildcard: true,
  };
}

function singleNameAddr(msg: SipMessage, name: 'From' | 'To', slot: number): NameAddr {
  const raw = msg.headers.get(name);
  if (raw === undefined) throw missing(name);
  try {
    return msg.headers.parsedOnce(slot, raw, parseNameAddr);
  } catch (err) {
    if (err instanceof SipParseError) throw new SipParseError(err.code, err.message, { header: name });
    throw err;
  }
}

function optionalInteger(msg: SipMessage, name: string, max: number): number | null {
  const raw = msg.headers.get(name);
  if (raw === undefined) return null;
  const v = trimLws(raw);
  if (v.length === 0 || v.length > 10) throw invalid(name, raw);
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (!isDigit(c)) throw invalid(name, raw);
    n = n * 10 + c - 48;
  }
  if (n > max) throw invalid(name, raw);
  return n;
}

function hasLws(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (isLws(s.charCodeAt(i))) return true;
  return false;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

function missing(header: string): SipParseError {
  return new SipParseError('SIP_ERR_MISSING_HEADER', `missing ${header}`, { header });
}

function invalid(header: string, raw: string): SipParseError {
  return new SipParseError('SIP_ERR_HEADER_VALUE', `malformed ${header}: ${raw.slice(0, 80)}`, { header });
}
