import { SipParseError } from '../errors.ts';
import { capturedPort } from './lex.ts';
import type { Params, SipUri } from './types.ts';

/**
 * RFC 3261 §19.1 SIP/SIPS URIs. Other schemes (`tel:`, `http:`, `urn:` …) are valid in Contact and
 * friends and are kept opaque. The user part stays %-escaped exactly as received (§19.1.4 compares
 * escaped and unescaped forms as equal; we never need the unescaped text and must not alter it).
 */
export function parseUri(s: string): SipUri {
  return parsePlainSipUri(s) ?? parseUriFully(s);
}

/**
 * `sip:user@host[:port]` and nothing else (a GB28181 device's Request-URI, From and To; issue 11: four
 * URIs per registration at ~3.7k instructions each by the scanner below): one match of a linear regex,
 * the same SipUri as parseUriFully (message-parts.test.ts holds the two equal). The user excludes what
 * would end it or need the scanner (`@ : ; ?`) besides what no URI holds unescaped; the host is
 * isHostChar's set. undefined: not that shape (the scanner decides, a port over 65535 included).
 */
export function parsePlainSipUri(s: string): SipUri | undefined {
  const m = PLAIN_SIP_URI.exec(s);
  if (m === null) return undefined;
  const port = capturedPort(m[3]);
  if (port === -1) return undefined;
  return { scheme: 'sip', user: m[1] as string, password: null, host: m[2] as string, port, params: new Map(), headers: new Map() };
}

const PLAIN_SIP_URI = /^sip:([^\x00-\x20\x7f<>"@:;?]+)@([A-Za-z0-9._-]+)(?::([0-9]{1,5}))?$/;

/** parseUri() by the scanner alone, every form (exported for the test holding parsePlainSipUri to it). */
export function parseUriFully(s: string): SipUri {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    // No LWS, controls, or the delimiters that cannot appear unescaped in any URI we accept.
    if (c <= 32 || c === 127 || c === 60 || c === 62 || c === 34) throw uriError(s, 'illegal character');
  }
  const colon = s.indexOf(':');
  if (colon <= 0) throw uriError(s, 'no scheme');
  for (let i = 0; i < colon; i++) {
    const c = s.charCodeAt(i) | 0x20;
    const alpha = c >= 97 && c <= 122;
    if (!alpha && (i === 0 || !isSchemeExtra(s.charCodeAt(i)))) throw uriError(s, 'bad scheme');
  }
  const scheme = s.slice(0, colon).toLowerCase();
  if (scheme !== 'sip' && scheme !== 'sips') {
    return { scheme, user: null, password: null, host: '', port: null, params: new Map(), headers: new Map(), opaque: s.slice(colon + 1) };
  }

  let i = colon + 1;
  let user: string | null = null;
  let password: string | null = null;
  const at = s.indexOf('@', i);
  if (at !== -1) {
    const userinfo = s.slice(i, at);
    const pw = userinfo.indexOf(':');
    user = pw === -1 ? userinfo : userinfo.slice(0, pw);
    password = pw === -1 ? null : userinfo.slice(pw + 1);
    if (user.length === 0) throw uriError(s, 'empty user');
    i = at + 1;
  }

  const hostStart = i;
  if (s.charCodeAt(i) === 91 /* [ */) {
    const close = s.indexOf(']', i);
    if (close === -1) throw uriError(s, 'unterminated IPv6 reference');
    for (let j = i + 1; j < close; j++) if (!isIpv6Char(s.charCodeAt(j))) throw uriError(s, 'bad IPv6 reference');
    i = close + 1;
  } else {
    while (i < n && isHostChar(s.charCodeAt(i))) i++;
  }
  if (i === hostStart) throw uriError(s, 'empty host');
  const host = s.slice(hostStart, i);

  let port: number | null = null;
  if (i < n && s.charCodeAt(i) === 58 /* : */) {
    const portStart = ++i;
    let value = 0;
    while (i < n && isDigit(s.charCodeAt(i)) && i - portStart < 5) value = value * 10 + s.charCodeAt(i++) - 48;
    if (i === portStart || value > 65535 || (i < n && isDigit(s.charCodeAt(i)))) throw uriError(s, 'bad port');
    port = value;
  }

  const params: Params = new Map();
  while (i < n && s.charCodeAt(i) === 59 /* ; */) {
    let end = i + 1;
    while (end < n && s.charCodeAt(end) !== 59 && s.charCodeAt(end) !== 63 /* ? */) end++;
    const item = s.slice(i + 1, end);
    const eq = item.indexOf('=');
    const name = (eq === -1 ? item : item.slice(0, eq)).toLowerCase();
    if (name.length === 0) throw uriError(s, 'empty parameter name');
    if (!params.has(name)) params.set(name, eq === -1 ? null : item.slice(eq + 1));
    i = end;
  }

  const headers: Params = new Map();
  if (i < n && s.charCodeAt(i) === 63 /* ? */) {
    for (const item of s.slice(i + 1).split('&')) {
      const eq = item.indexOf('=');
      const name = eq === -1 ? item : item.slice(0, eq);
      if (name.length === 0) throw uriError(s, 'empty header name');
      if (!headers.has(name)) headers.set(name, eq === -1 ? null : item.slice(eq + 1));
    }
    i = n;
  }
  if (i !== n) throw uriError(s, 'unexpected character after host');
  return { scheme, user, password, host, port, params, headers };
}

export function formatUri(u: SipUri): string {
  if (u.opaque !== undefined) return `${u.scheme}:${u.opaque}`;
  let out = `${u.scheme}:`;
  if (u.user !== null) out += u.password !== null ? `${u.user}:${u.password}@` : `${u.user}@`;
  out += u.host;
  if (u.port !== null) out += `:${u.port}`;
  for (const [k, v] of u.params) out += v === null ? `;${k}` : `;${k}=${v}`;
  let sep = '?';
  for (const [k, v] of u.headers) {
    out += v === null ? `${sep}${k}` : `${sep}${k}=${v}`;
    sep = '&';
  }
  return out;
}

function uriError(s: string, why: string): SipParseError {
  return new SipParseError('SIP_ERR_URI', `${why}: ${s.slice(0, 80)}`);
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isSchemeExtra = (c: number): boolean => isDigit(c) || c === 43 || c === 45 || c === 46; // + - .
// hostname / IPv4 (RFC 3261 §25.1); `_` accepted because some NAT boxes emit it in hostnames.
const isHostChar = (c: number): boolean =>
  isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 122) || c === 45 || c === 46 || c === 95;
const isIpv6Char = (c: number): boolean =>
  isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 102) || c === 58 || c === 46;
