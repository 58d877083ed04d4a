import { SipParseError } from '../errors.ts';
import { formatParams, isTokenChar, parseParamsAt, skipLws, splitHeaderValues } from './lex.ts';
import type { ViaHop } from './types.ts';

/**
 * RFC 3261 §20.42 / §25.1:
 *   via-parm = sent-protocol LWS sent-by *( SEMI via-params )
 *   sent-protocol = protocol-name SLASH protocol-version SLASH transport   (SLASH = SWS "/" SWS)
 *   sent-by = host [ COLON port ]                                          (COLON = SWS ":" SWS)
 * One header line may carry several hops separated by commas.
 */
export function parseVia(value: string): ViaHop[] {
  const hops = splitHeaderValues(value).map(parseViaHop);
  if (hops.length === 0) throw viaError(value, 'empty Via');
  return hops;
}

export function parseViaHop(s: string): ViaHop {
  let i = skipLws(s, 0);
  const name = readToken(s, i);
  i = expectSlash(s, i + name.length);
  const version = readToken(s, i);
  i = expectSlash(s, i + version.length);
  const transport = readToken(s, i);
  i += transport.length;
  if (name.length === 0 || version.length === 0 || transport.length === 0) throw viaError(s, 'bad sent-protocol');
  const afterProtocol = i;
  i = skipLws(s, i);
  if (i === afterProtocol) throw viaError(s, 'missing LWS before sent-by');

  const hostStart = i;
  if (s.charCodeAt(i) === 91 /* [ */) {
    const close = s.indexOf(']', i);
    if (close === -1) throw viaError(s, 'unterminated IPv6 reference');
    i = close + 1;
  } else {
    while (i < s.length && isHostChar(s.charCodeAt(i))) i++;
  }
  if (i === hostStart) throw viaError(s, 'empty sent-by host');
  const host = s.slice(hostStart, i);

  let port: number | null = null;
  let j = skipLws(s, i);
  if (s.charCodeAt(j) === 58 /* : */) {
    j = skipLws(s, j + 1);
    const portStart = j;
    let value = 0;
    while (j < s.length && isDigit(s.charCodeAt(j)) && j - portStart < 5) value = value * 10 + s.charCodeAt(j++) - 48;
    if (j === portStart || value > 65535 || isDigit(s.charCodeAt(j))) throw viaError(s, 'bad sent-by port');
    port = value;
    i = j;
  }
  return {
    protocol: `${name.toUpperCase()}/${version}`,
    transport: transport.toUpperCase(),
    host,
    port,
    params: parseParamsAt(s, i),
  };
}

export function formatVia(v: ViaHop): string {
  return `${v.protocol}/${v.transport} ${v.host}${v.port === null ? '' : `:${v.port}`}${formatParams(v.params)}`;
}

function readToken(s: string, i: number): string {
  let j = i;
  while (j < s.length && isTokenChar(s.charCodeAt(j))) j++;
  return s.slice(i, j);
}

function expectSlash(s: string, i: number): number {
  i = skipLws(s, i);
  if (s.charCodeAt(i) !== 47 /* / */) throw viaError(s, 'bad sent-protocol');
  return skipLws(s, i + 1);
}

function viaError(s: string, why: string): SipParseError {
  return new SipParseError('SIP_ERR_HEADER_VALUE', `${why}: ${s.slice(0, 80)}`, { header: 'Via' });
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isHostChar = (c: number): boolean =>
  isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 122) || c === 45 || c === 46 || c === 95;
