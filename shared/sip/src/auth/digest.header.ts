import { SipParseError } from '../errors.ts';
import { endOfQuoted, isLws, isTokenChar, quote, skipLws, unquote } from '../message/lex.ts';

/**
 * WWW-Authenticate / Authorization values for HTTP Digest as SIP uses it (RFC 3261 §22.4 with
 * RFC 2617 §3.2.1/§3.2.2; RFC 7616 keeps the same syntax). Parameter names are case-insensitive,
 * values may be quoted strings or tokens, LWS may surround `=` and `,`.
 */
export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  /** As sent (`MD5`, `MD5-sess`); absent means MD5 (RFC 2617 §3.2.1). */
  algorithm?: string;
  /** qop options offered, e.g. `['auth']`; absent means the RFC 2069-compatible digest. */
  qop?: string[];
  stale?: boolean;
  domain?: string;
  /** Every parameter, names lower-cased, values unquoted. */
  params: Map<string, string>;
}

export interface DigestCredentials {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  response: string;
  algorithm?: string;
  opaque?: string;
  qop?: string;
  /** nonce-count, 8 hex digits as sent. */
  nc?: string;
  cnonce?: string;
  params: Map<string, string>;
}

export function parseDigestChallenge(value: string): DigestChallenge {
  const params = parseDigestParams(value);
  const realm = required(params, 'realm', value);
  const nonce = required(params, 'nonce', value);
  const qop = params.get('qop');
  const stale = params.get('stale');
  return {
    realm,
    nonce,
    opaque: params.get('opaque'),
    algorithm: params.get('algorithm'),
    qop: qop === undefined ? undefined : qop.split(',').map((q) => q.trim()).filter((q) => q.length > 0),
    stale: stale === undefined ? undefined : stale.toLowerCase() === 'true',
    domain: params.get('domain'),
    params,
  };
}

export function parseDigestCredentials(value: string): DigestCredentials {
  return usualOrderCredentials(value) ?? plainCredentials(value) ?? usualCredentials(value) ?? credentialsOf(parseDigestParamsScan(value), value);
}

/**
 * The value as GB28181 devices (osip/eXosip, Hikvision, Dahua; the captures) and our client write it:
 * `Digest username="…", realm="…", nonce="…", uri="…", response="…"`, then at most `, algorithm=token`,
 * `, qop=token, nc=token, cnonce="…"` and `, opaque="…"`, in formatDigestCredentials's order, one SP after
 * each comma, ASCII only. One match of a linear regex (a quoted value runs to the next `"` and holds no `\`
 * nor a character above 0x7f, a token is letters, digits and `-`) instead of plainCredentials's indexOf
 * and slice per parameter (issue 11: ~9k instructions under callgrind on the second leg of every
 * registration). Anything else is null and plainCredentials decides; where this answers, the scan answers
 * the same (auth-digest-header.test.ts, on every single-character mutation of such values).
 */
export function usualOrderCredentials(value: string): DigestCredentials | null {
  const m = USUAL_ORDER.exec(value);
  if (m === null) return null;
  const c = new UsualCredentials(value);
  c.username = m[1] as string;
  c.realm = m[2] as string;
  c.nonce = m[3] as string;
  c.uri = m[4] as string;
  c.response = m[5] as string;
  c.algorithm = m[6];
  c.qop = m[7];
  c.nc = m[8];
  c.cnonce = m[9];
  c.opaque = m[10];
  c.ascii = true;
  return c;
}

/**
 * Whether every field of `c` is known ASCII: read by usualOrderCredentials (its regex takes no character
 * above 0x7f), so the digest check hashes them without testing each (digest.compute.ts responseOf).
 */
export function wireAscii(c: DigestCredentials): boolean {
  return c instanceof UsualCredentials && c.ascii;
}

const USUAL_ORDER =
  /^Digest username="([^"\\\x80-\uffff]*)", realm="([^"\\\x80-\uffff]*)", nonce="([^"\\\x80-\uffff]*)", uri="([^"\\\x80-\uffff]*)", response="([^"\\\x80-\uffff]*)"(?:, algorithm=([A-Za-z0-9-]+))?(?:, qop=([A-Za-z0-9-]+), nc=([A-Za-z0-9-]+), cnonce="([^"\\\x80-\uffff]*)")?(?:, opaque="([^"\\\x80-\uffff]*)")?$/;

function credentialsOf(params: Map<string, string>, value: string): DigestCredentials {
  return {
    username: required(params, 'username', value),
    realm: required(params, 'realm', value),
    nonce: required(params, 'nonce', value),
    uri: required(params, 'uri', value),
    response: required(params, 'response', value),
    algorithm: params.get('algorithm'),
    opaque: params.get('opaque'),
    qop: params.get('qop'),
    nc: params.get('nc'),
    cnonce: params.get('cnonce'),
    params,
  };
}

/**
 * Credentials read straight into their fields by the usual path's steps (issue 11: one per registration;
 * the map of every parameter, with its lookups and growth, was ~7k instructions of ~23k). The map is
 * built when asked for: the digest check never reads it.
 */
class UsualCredentials implements DigestCredentials {
  /** Set by usualOrderCredentials, whose regex takes ASCII only: every field is ASCII (wireAscii). */
  ascii = false;
  username = '';
  realm = '';
  nonce = '';
  uri = '';
  response = '';
  algorithm: string | undefined = undefined;
  opaque: string | undefined = undefined;
  qop: string | undefined = undefined;
  nc: string | undefined = undefined;
  cnonce: string | undefined = undefined;
  #params: Map<string, string> | undefined;
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  get params(): Map<string, string> {
    return (this.#params ??= parseDigestParams(this.#value));
  }

  set params(params: Map<string, string>) {
    this.#params = params;
  }
}

/** The field a credentials parameter sets, as a bit (0: not one of them), by its name as sent: lower case only. */
function fieldBit(name: string): number {
  switch (name) {
    case 'username':
      return 1;
    case 'realm':
      return 2;
    case 'nonce':
      return 4;
    case 'uri':
      return 8;
    case 'response':
      return 16;
    case 'algorithm':
      return 32;
    case 'opaque':
      return 64;
    case 'qop':
      return 128;
    case 'nc':
      return 256;
    case 'cnonce':
      return 512;
    default:
      return 0;
  }
}
/** username, realm, nonce, uri and response. */
const REQUIRED_FIELDS = 31;

/**
 * The plainest form, which devices and our own client send: `Digest ` then `name="value"` or `name=token`
 * joined by `,` or `, `, every name one of the ten fields in lower case. Read by `indexOf` and slices,
 * which skip over the values in native code (issue 11: the regex steps, one match object per parameter,
 * were ~14k instructions a registration). Anything else — another name or case, other spacing, a
 * quoted-pair, a `"`, space or tab in a token value, a missing field — is null, and the regex steps (then
 * the scan) read it as before; where this answers, they answer the same (auth-digest-header.test.ts).
 */
export function plainCredentials(value: string): DigestCredentials | null {
  if (!value.startsWith('Digest ')) return null;
  const c = new UsualCredentials(value);
  let seen = 0;
  const end = value.length;
  for (let at = 7; ; ) {
    const eq = value.indexOf('=', at);
    if (eq < 0) return null;
    const bit = fieldBit(value.slice(at, eq));
    if (bit === 0) return null;
    let v: string;
    let next: number;
    if (value.charCodeAt(eq + 1) === 34 /* " */) {
      const close = value.indexOf('"', eq + 2);
      if (close < 0) return null;
      v = value.slice(eq + 2, close);
      if (v.includes('\\')) return null; // a quoted-pair: the scan resolves it
      next = close + 1;
    } else {
      next = value.indexOf(',', eq + 1);
      if (next < 0) next = end;
      v = value.slice(eq + 1, next);
      if (v.includes('"') || v.includes(' ') || v.includes('\t')) return null;
    }
    if ((seen & bit) === 0) {
      seen |= bit;
      switch (bit) {
        case 1:
          c.username = v;
          break;
        case 2:
          c.realm = v;
          break;
        case 4:
          c.nonce = v;
          break;
        case 8:
          c.uri = v;
          break;
        case 16:
          c.response = v;
          break;
        case 32:
          c.algorithm = v;
          break;
        case 64:
          c.opaque = v;
          break;
        case 128:
          c.qop = v;
          break;
        case 256:
          c.nc = v;
          break;
        default:
          c.cnonce = v;
      }
    }
    if (next === end) break;
    if (value.charCodeAt(next) !== 44 /* , */) return null;
    at = value.charCodeAt(next + 1) === 32 ? next + 2 : next + 1;
  }
  return (seen & REQUIRED_FIELDS) === REQUIRED_FIELDS ? c : null;
}

/**
 * parseDigestParamsUsual's steps into the fields (the first of a repeated name wins, as there); null where it
 * declines. (A char-by-char reader was tried: ~60 instructions a character on the header's slice of the
 * message, 19.6k against the regex steps' 16.9k, measured.)
 */
function usualCredentials(value: string): DigestCredentials | null {
  SCHEME.lastIndex = 0;
  const scheme = SCHEME.exec(value);
  if (scheme === null || (scheme[1] as string).toLowerCase() !== 'digest') return null;
  const c = new UsualCredentials(value);
  // which required fields were set (empty values count: a map would hold them)
  let seen = 0;
  for (let at = SCHEME.lastIndex; ; ) {
    PARAM.lastIndex = at;
    const m = PARAM.exec(value);
    if (m === null) return null;
    const rawName = m[1];
    if (rawName === undefined) break; // the end
    const v = m[2] ?? (m[3] as string);
    switch (rawName.toLowerCase()) {
      case 'username':
        if ((seen & 1) === 0) (c.username = v), (seen |= 1);
        break;
      case 'realm':
        if ((seen & 2) === 0) (c.realm = v), (seen |= 2);
        break;
      case 'nonce':
        if ((seen & 4) === 0) (c.nonce = v), (seen |= 4);
        break;
      case 'uri':
        if ((seen & 8) === 0) (c.uri = v), (seen |= 8);
        break;
      case 'response':
        if ((seen & 16) === 0) (c.response = v), (seen |= 16);
        break;
      case 'algorithm':
        c.algorithm ??= v;
        break;
      case 'opaque':
        c.opaque ??= v;
        break;
      case 'qop':
        c.qop ??= v;
        break;
      case 'nc':
        c.nc ??= v;
        break;
      case 'cnonce':
        c.cnonce ??= v;
        break;
      default:
    }
    at = PARAM.lastIndex;
  }
  if (seen !== 31) {
    const missing = ['username', 'realm', 'nonce', 'uri', 'response'].find((_, i) => (seen & (1 << i)) === 0) as string;
    throw authError(`missing ${missing}`, value);
  }
  return c;
}

/** `Digest realm="…", nonce="…"[, opaque="…"], algorithm=MD5[, qop="auth"][, stale=true]`. */
export function formatDigestChallenge(c: Omit<DigestChallenge, 'params'>): string {
  const parts = [`realm=${quote(c.realm)}`, `nonce=${quote(c.nonce)}`];
  if (c.domain !== undefined) parts.push(`domain=${quote(c.domain)}`);
  if (c.opaque !== undefined) parts.push(`opaque=${quote(c.opaque)}`);
  if (c.algorithm !== undefined) parts.push(`algorithm=${c.algorithm}`);
  if (c.qop !== undefined && c.qop.length > 0) parts.push(`qop=${quote(c.qop.join(','))}`);
  if (c.stale === true) parts.push('stale=true');
  return `Digest ${parts.join(', ')}`;
}

/**
 * Parameter order and quoting as the GB28181 devices in our captures send them (RFC 2617 §3.2.2:
 * qop and nc are unquoted tokens, everything else but algorithm is quoted).
 */
export function formatDigestCredentials(c: Omit<DigestCredentials, 'params'>): string {
  const parts = [
    `username=${quote(c.username)}`,
    `realm=${quote(c.realm)}`,
    `nonce=${quote(c.nonce)}`,
    `uri=${quote(c.uri)}`,
    `response=${quote(c.response)}`,
  ];
  if (c.algorithm !== undefined) parts.push(`algorithm=${c.algorithm}`);
  if (c.qop !== undefined) parts.push(`qop=${c.qop}`, `nc=${c.nc ?? ''}`, `cnonce=${quote(c.cnonce ?? '')}`);
  if (c.opaque !== undefined) parts.push(`opaque=${quote(c.opaque)}`);
  return `Digest ${parts.join(', ')}`;
}

/** `Digest` then a comma-separated auth-param list (RFC 2617 §1.2, RFC 3261 §25.1). */
function parseDigestParams(value: string): Map<string, string> {
  return parseDigestParamsUsual(value) ?? parseDigestParamsScan(value);
}

// token = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~")  (RFC 3261 §25.1), as lex.ts
const SCHEME = /[ \t]*([A-Za-z0-9\-.!%*_+`'~]+)/y;
/**
 * One step of the scan below as one sticky match: LWS and commas, then either the end or
 * `name LWS = LWS value LWS` before a comma or the end, the value a quoted string without a quoted-pair
 * or a run without `"`, `,` and LWS. Adjacent parts have disjoint character sets, so nothing backtracks.
 */
const PARAM = /[ \t]*(?:,[ \t]*)*(?:([A-Za-z0-9\-.!%*_+`'~]+)[ \t]*=[ \t]*(?:"([^"\\]*)"|([^", \t]*))[ \t]*(?=,|$)|$)/y;

/**
 * The usual header (issue 11: one per registration; the char scan was ~17k instructions of it) in a few
 * regex steps; null when the value has anything else (a quoted-pair, a `"` inside a token value, a
 * syntax error), which the scan then parses or rejects with its precise error. Where it returns a map,
 * the scan returns the same (`digest.header.test.ts` holds the two against each other).
 */
export function parseDigestParamsUsual(value: string): Map<string, string> | null {
  SCHEME.lastIndex = 0;
  const scheme = SCHEME.exec(value);
  if (scheme === null || (scheme[1] as string).toLowerCase() !== 'digest') return null;
  const params = new Map<string, string>();
  for (let at = SCHEME.lastIndex; ; ) {
    PARAM.lastIndex = at;
    const m = PARAM.exec(value);
    if (m === null) return null;
    const rawName = m[1];
    if (rawName === undefined) return params; // the end
    const name = rawName.toLowerCase();
    if (!params.has(name)) params.set(name, m[2] ?? (m[3] as string));
    at = PARAM.lastIndex;
  }
}

/** The char-by-char scan: every value, every error (exported for the tests holding the usual path to it). */
export function parseDigestParamsScan(value: string): Map<string, string> {
  let i = skipLws(value, 0);
  const schemeStart = i;
  while (i < value.length && isTokenChar(value.charCodeAt(i))) i++;
  if (value.slice(schemeStart, i).toLowerCase() !== 'digest') throw authError('not a Digest header', value);
  const params = new Map<string, string>();
  while (true) {
    i = skipLws(value, i);
    while (i < value.length && value.charCodeAt(i) === 44 /* , */) i = skipLws(value, i + 1);
    if (i >= value.length) break;
    const nameStart = i;
    while (i < value.length && isTokenChar(value.charCodeAt(i))) i++;
    if (i === nameStart) throw authError('bad parameter name', value);
    const name = value.slice(nameStart, i).toLowerCase();
    i = skipLws(value, i);
    if (value.charCodeAt(i) !== 61 /* = */) throw authError(`parameter ${name} without value`, value);
    i = skipLws(value, i + 1);
    const valueStart = i;
    if (value.charCodeAt(i) === 34 /* " */) {
      try {
        i = endOfQuoted(value, i);
      } catch {
        throw authError('unterminated quoted string', value);
      }
    } else {
      while (i < value.length && value.charCodeAt(i) !== 44 && !isLws(value.charCodeAt(i))) i++;
    }
    if (!params.has(name)) params.set(name, unquote(value.slice(valueStart, i)));
    i = skipLws(value, i);
    if (i < value.length && value.charCodeAt(i) !== 44) throw authError('expected comma', value);
  }
  return params;
}

function required(params: Map<string, string>, name: string, value: string): string {
  const v = params.get(name);
  if (v === undefined) throw authError(`missing ${name}`, value);
  return v;
}

function authError(why: string, value: string): SipParseError {
  return new SipParseError('SIP_ERR_AUTH_HEADER', `${why}: ${value.slice(0, 120)}`);
}
