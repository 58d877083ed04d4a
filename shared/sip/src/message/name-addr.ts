import { SipParseError } from '../errors.ts';
import { capturedPort, endOfQuoted, isToken, parseParamsAt, quote, skipLws, trimLws, unquote } from './lex.ts';
import type { NameAddr } from './types.ts';
import { formatUri, parseUri } from './uri.ts';

/**
 * One value of From, To, Contact, Route, Record-Route (RFC 3261 §20.10, §25.1):
 *   name-addr = [ display-name ] LAQUOT addr-spec RAQUOT   (display-name: token sequence or quoted-string)
 *   addr-spec without brackets: everything after the first `;` is a HEADER parameter (§20.10),
 *   so `sip:a@b;tag=1` has tag in `params`, not in `uri.params`.
 */
export function parseNameAddr(value: string): NameAddr {
  return parseUsualNameAddr(value) ?? parseNameAddrFully(value);
}

/**
 * The From and To of nearly every GB28181 request, `<sip:user@host[:port]>` and at most a `;tag=…`
 * after it (parsePlainSipUri's URI; the tag's value what parseParamsAt takes unquoted): one match of a
 * linear regex, the same NameAddr as parseNameAddrFully (message-parts.test.ts holds the two equal).
 * Issue 11: From and To are parsed on both legs of every registration. undefined: another shape.
 */
export function parseUsualNameAddr(value: string): NameAddr | undefined {
  const m = USUAL_NAME_ADDR.exec(value);
  if (m === null) return undefined;
  const port = capturedPort(m[3]);
  if (port === -1) return undefined;
  const uri = { scheme: 'sip', user: m[1] as string, password: null, host: m[2] as string, port, params: new Map(), headers: new Map() };
  const tag = m[4];
  return { displayName: null, uri, params: tag === undefined ? new Map() : new Map([['tag', tag]]) };
}

const USUAL_NAME_ADDR = /^<sip:([^\x00-\x20\x7f<>"@:;?]+)@([A-Za-z0-9._-]+)(?::([0-9]{1,5}))?>(?:;tag=([^;",\x20\t]+))?$/;

/** parseNameAddr() by the scanner alone, every form (exported for the test holding parseUsualNameAddr to it). */
export function parseNameAddrFully(value: string): NameAddr {
  const s = trimLws(value);
  if (s.length === 0) throw nameAddrError(value, 'empty');
  let i = 0;
  let displayName: string | null = null;
  let laquot: number;

  if (s.charCodeAt(0) === 34 /* " */) {
    const end = endOfQuoted(s, 0);
    displayName = unquote(s.slice(0, end));
    laquot = skipLws(s, end);
    if (s.charCodeAt(laquot) !== 60 /* < */) throw nameAddrError(value, 'quoted display name without <uri>');
  } else {
    // First of `<`, `;`, `"` decides: `<` means name-addr with an optional token display name.
    laquot = -1;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 60) {
        laquot = i;
        break;
      }
      if (c === 59 || c === 34) break;
    }
    if (laquot > 0) {
      const name = trimLws(s.slice(0, laquot));
      displayName = name.length > 0 ? name : null;
    }
  }

  if (laquot === -1) {
    const semi = s.indexOf(';');
    const uriText = semi === -1 ? s : trimLws(s.slice(0, semi));
    return { displayName: null, uri: parseUri(uriText), params: semi === -1 ? new Map() : parseParamsAt(s, semi) };
  }
  const raquot = s.indexOf('>', laquot + 1);
  if (raquot === -1) throw nameAddrError(value, 'missing >');
  const uri = parseUri(s.slice(laquot + 1, raquot));
  return { displayName, uri, params: parseParamsAt(s, raquot + 1) };
}

/** Always the bracketed form, so URI parameters can never be mistaken for header parameters. */
export function formatNameAddr(n: NameAddr): string {
  let out = '';
  if (n.displayName !== null && n.displayName.length > 0) out = `${isDisplayToken(n.displayName) ? n.displayName : quote(n.displayName)} `;
  out += `<${formatUri(n.uri)}>`;
  for (const [k, v] of n.params) out += v === null ? `;${k}` : `;${k}=${v}`;
  return out;
}

function isDisplayToken(s: string): boolean {
  return s.split(' ').every(isToken);
}

function nameAddrError(value: string, why: string): SipParseError {
  return new SipParseError('SIP_ERR_HEADER_VALUE', `${why}: ${value.slice(0, 80)}`);
}
