import { SipParseError } from '../errors.ts';
import { capturedPort, formatParams, isTokenChar, parseParamsAt, skipLws, splitHeaderValues } from './lex.ts';
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
  return parseCanonicalViaHop(s) ?? parseViaHopFully(s);
}

/**
 * The hop as devices write it, `SIP/2.0/UDP host[:port](;name[=value])*` (or TCP): upper-case protocol,
 * one space, lower-case parameter names, no LWS, quote or comma: one match of a linear regex (the regex
 * engine reads the message's text in place; charCodeAt on a header's slice of it costs ~60 instructions a
 * character under callgrind), the same ViaHop as parseViaHopFully (message-usual-forms.test.ts holds the
 * two equal). Issue 11: the top Via of every request parsed is read this way (~8k instructions by the
 * scanner). undefined: another shape (the scanner decides).
 */
export function parseCanonicalViaHop(s: string): ViaHop | undefined {
  const m = CANONICAL_VIA.exec(s);
  if (m === null) return undefined;
  const port = capturedPort(m[3]);
  if (port === -1) return undefined;
  const params: ViaHop['params'] = new Map();
  const p = m[4] as string;
  // `;name[=value]` each, as the regex took them: a name holds no `=`, a value no `;`
  for (let i = 0; i < p.length; ) {
    let next = p.indexOf(';', i + 1);
    if (next < 0) next = p.length;
    let eq = p.indexOf('=', i + 1);
    if (eq > next) eq = -1;
    const name = p.slice(i + 1, eq < 0 ? next : eq);
    if (!params.has(name)) params.set(name, eq < 0 ? null : p.slice(eq + 1, next));
    i = next;
  }
  return { protocol: 'SIP/2.0', transport: m[1] === 'UDP' ? 'UDP' : 'TCP', host: m[2] as string, port, params };
}

/** Token characters (lex.ts) but upper-case letters for names; what parseParamsAt takes unquoted for values. */
const CANONICAL_VIA = /^SIP\/2\.0\/(UDP|TCP) ([A-Za-z0-9._-]+)(?::([0-9]{1,5}))?((?:;[a-z0-9!%'*+._`~-]+(?:=[^;",\x20\t]+)?)*)$/;

/** parseViaHop() by the scanner alone, every form (exported for the test holding parseCanonicalViaHop to it). */
export function parseViaHopFully(s: string): ViaHop {
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
