import { SipParseError } from '../errors.ts';
import type { Params } from './types.ts';

/**
 * Shared lexical helpers (RFC 3261 §25.1). Hand-written scanners over charCodes: no regex with
 * backtracking runs on network input, and every failure is a SipParseError.
 */
const SP = 32;
const HT = 9;
const DQUOTE = 34;
const BACKSLASH = 92;

// token = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~")  (RFC 3261 §25.1)
const TOKEN = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  TOKEN[c] = /[A-Za-z0-9\-.!%*_+`'~]/.test(ch) ? 1 : 0;
}

export function isTokenChar(c: number): boolean {
  return c < 128 && TOKEN[c] === 1;
}

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) if (!isTokenChar(s.charCodeAt(i))) return false;
  return true;
}

export function isLws(c: number): boolean {
  return c === SP || c === HT;
}

/** Trims SP/HT only. String#trim would also eat U+00A0, a legitimate byte of GB2312/UTF-8 text. */
export function trimLws(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isLws(s.charCodeAt(a))) a++;
  while (b > a && isLws(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

export function skipLws(s: string, i: number): number {
  while (i < s.length && isLws(s.charCodeAt(i))) i++;
  return i;
}

/** Index just past the closing quote of the quoted-string opening at `i`; throws when unterminated. */
export function endOfQuoted(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === BACKSLASH) j++; // quoted-pair (RFC 3261 §25.1)
    else if (c === DQUOTE) return j + 1;
  }
  throw new SipParseError('SIP_ERR_HEADER_VALUE', 'unterminated quoted string');
}

/** Removes surrounding quotes and resolves quoted-pairs; a bare token comes back as is. */
export function unquote(s: string): string {
  if (s.length < 2 || s.charCodeAt(0) !== DQUOTE || s.charCodeAt(s.length - 1) !== DQUOTE) return s;
  const inner = s.slice(1, -1);
  return inner.includes('\\') ? inner.replace(/\\(.)/gs, '$1') : inner;
}

export function quote(s: string): string {
  return `"${s.replace(/(["\\])/g, '\\$1')}"`;
}

/**
 * Splits a header value at commas that are outside quoted strings and `<…>` (RFC 3261 §7.3.1:
 * multiple values of one header may share a line). Empty items are dropped.
 * Only for list headers (Via, Contact, Route, …): Date, Subject or Authorization contain commas.
 */
export function splitHeaderValues(s: string): string[] {
  if (s.indexOf(',') === -1) {
    const t = trimLws(s);
    return t.length === 0 ? [] : [t];
  }
  const out: string[] = [];
  let from = 0;
  let inQuote = false;
  let inAngle = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inQuote) {
      if (c === BACKSLASH) i++;
      else if (c === DQUOTE) inQuote = false;
    } else if (c === DQUOTE) inQuote = true;
    else if (c === 60 /* < */) inAngle = true;
    else if (c === 62 /* > */) inAngle = false;
    else if (c === 44 /* , */ && !inAngle) {
      const part = trimLws(s.slice(from, i));
      if (part.length > 0) out.push(part);
      from = i + 1;
    }
  }
  const last = trimLws(s.slice(from));
  if (last.length > 0) out.push(last);
  return out;
}

/**
 * Header parameters `;name[=value]…` (RFC 3261 §7.3.1 generic-param), LWS allowed around `;` and `=`.
 * Names are lower-cased (they are case-insensitive); values stay raw, quoted strings keep their quotes
 * so that formatting gives back what was received. The first occurrence of a duplicate name wins.
 * The leading `;` is optional here; a trailing `;` is tolerated.
 */
export function parseParams(s: string): Params {
  const i = skipLws(s, 0);
  if (i < s.length && s.charCodeAt(i) !== 59 /* ; */) return parseParamsAt(`;${s.slice(i)}`, 0);
  return parseParamsAt(s, i);
}

/** Parses `;param;param…` from `i` to the end of `s`; anything else there is an error. */
export function parseParamsAt(s: string, i: number): Params {
  const params: Params = new Map();
  while (true) {
    i = skipLws(s, i);
    if (i >= s.length) return params;
    if (s.charCodeAt(i) !== 59) throw paramError(s);
    i = skipLws(s, i + 1);
    if (i >= s.length) return params;
    const nameStart = i;
    while (i < s.length && isTokenChar(s.charCodeAt(i))) i++;
    if (i === nameStart) throw paramError(s);
    const name = s.slice(nameStart, i).toLowerCase();
    i = skipLws(s, i);
    let value: string | null = null;
    if (i < s.length && s.charCodeAt(i) === 61 /* = */) {
      i = skipLws(s, i + 1);
      const valueStart = i;
      if (i < s.length && s.charCodeAt(i) === DQUOTE) i = endOfQuoted(s, i);
      else {
        // token or host (IPv6 brackets included): anything up to `;`, LWS, quote or comma
        while (i < s.length) {
          const c = s.charCodeAt(i);
          if (c === 59 || c === DQUOTE || c === 44 || isLws(c)) break;
          i++;
        }
      }
      if (i === valueStart) throw paramError(s);
      value = s.slice(valueStart, i);
    }
    if (!params.has(name)) params.set(name, value);
  }
}

function paramError(s: string): SipParseError {
  return new SipParseError('SIP_ERR_HEADER_VALUE', `malformed parameters: ${s.slice(0, 80)}`);
}

/** `;name=value;flag` in Map order. */
export function formatParams(params: Params): string {
  let out = '';
  for (const [k, v] of params) out += v === null ? `;${k}` : `;${k}=${v}`;
  return out;
}

/**
 * The port a usual-form regex captured as decimal digits (parsePlainSipUri, parseUsualNameAddr,
 * parseCanonicalViaHop): null when there was none, -1 past 65535 (that shape is then left to the scanner,
 * which rejects it).
 */
export function capturedPort(digits: string | undefined): number | null {
  if (digits === undefined) return null;
  let port = 0;
  for (let i = 0; i < digits.length; i++) port = port * 10 + digits.charCodeAt(i) - 48;
  return port > 65535 ? -1 : port;
}
