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
import { bytesOf, sameAt, sameText } from './header-scan.ts';
import { DEFAULT_SIP_PORT } from './via-stamp.ts';

export interface StampedLine {
  /** The Via line, its (only) hop stamped. */
  readonly line: string;
  /** §18.2.2 / RFC 3581 §4 destination of the response. */
  readonly host: string;
  readonly port: number;
}

const PREFIX = bytesOf('SIP/2.0/UDP ');
const RECEIVED = bytesOf('received');
const RPORT = bytesOf('rport');
const MAX_PARAMS = 16;
/** Scratch for the duplicate-name check: parameter name bounds. One call at a time (synchronous). */
const nameStart = new Int32Array(MAX_PARAMS);
const nameEnd = new Int32Array(MAX_PARAMS);

export function stampCanonicalVia(line: string, srcAddress: string, srcPort: number, forceRport: boolean): StampedLine | undefined {
  return stampCanonicalViaAt(Buffer.from(line, 'latin1'), line, 0, line.length, srcAddress, srcPort, forceRport);
}

/**
 * stampCanonicalVia() of `text[from, to)`, read in place from a datagram's `bytes` (`text` the same as
 * latin1, for the slices): byte reads cost a fraction of String#charCodeAt (header-scan.ts).
 */
export function stampCanonicalViaAt(bytes: Uint8Array, text: string, from: number, to: number, srcAddress: string, srcPort: number, forceRport: boolean): StampedLine | undefined {
  // char-code tests, not startsWith/includes: a builtin call each costs more than the chars they read
  if (to - from < PREFIX.length || !sameAt(bytes, from, PREFIX) || hasColon(srcAddress)) return undefined;
  const n = to;
  let i = from + PREFIX.length;
  const hostStart = i;
  while (i < n && isHostChar((bytes[i] as number))) i++;
  if (i === hostStart) return undefined;
  const hostEnd = i;
  let sentPort: number | null = null;
  if (i < n && (bytes[i] as number) === 58 /* : */) {
    const portStart = ++i;
    let value = 0;
    while (i < n && isDigit((bytes[i] as number)) && i - portStart < 5) value = value * 10 + (bytes[i++] as number) - 48;
    // formatVia writes the number: a leading zero would not survive a parse and format.
    if (i === portStart || value > 65535 || ((bytes[portStart] as number) === 48 && i - portStart > 1)) return undefined;
    sentPort = value;
  }
  let rportAt = -1; // start of `rport` / `rport=v`, and end
  let rportEnd = -1;
  let params = 0;
  while (i < n) {
    if ((bytes[i] as number) !== 59 /* ; */ || params === MAX_PARAMS) return undefined;
    const start = ++i;
    while (i < n && isLowerTokenChar((bytes[i] as number))) i++;
    if (i === start) return undefined;
    for (let p = 0; p < params; p++) if (sameName(bytes, nameStart[p] as number, nameEnd[p] as number, start, i)) return undefined;
    nameStart[params] = start;
    nameEnd[params++] = i;
    const name = i - start;
    if (name === 8 && sameAt(bytes, start, RECEIVED)) return undefined; // its value would steer the answer
    const isRport = name === 5 && sameAt(bytes, start, RPORT);
    if (i < n && (bytes[i] as number) === 61 /* = */) {
      const valueStart = ++i;
      while (i < n && isValueChar((bytes[i] as number))) i++;
      if (i === valueStart) return undefined;
    }
    if (isRport) {
      rportAt = start;
      rportEnd = i;
    }
  }
  const wantsRport = rportAt >= 0 || forceRport;
  // The same address as written (the usual case) is compared in place; other spellings with case-folded copies.
  const sameHost = hostEnd - hostStart === srcAddress.length && sameText(bytes, hostStart, srcAddress);
  const received = wantsRport || (!sameHost && text.slice(hostStart, hostEnd).toLowerCase() !== srcAddress.toLowerCase());
  // Map order as stampReceived leaves it: rport in place (or appended), then received appended.
  let out = rportAt >= 0 ? `${text.slice(from, rportAt)}rport=${srcPort}${text.slice(rportEnd, to)}` : text.slice(from, to);
  if (rportAt < 0 && wantsRport) out += `;rport=${srcPort}`;
  if (received) out += `;received=${srcAddress}`;
  return { line: out, host: received || sameHost ? srcAddress : text.slice(hostStart, hostEnd), port: wantsRport ? srcPort : (sentPort ?? DEFAULT_SIP_PORT) };
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

function hasColon(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 58) return true;
  return false;
}
const isHostChar = (c: number): boolean => isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 122) || c === 45 || c === 46 || c === 95;
/** Parameter names are lower-cased by the parser: only already-lower-case ones are canonical. */
const isLowerTokenChar = (c: number): boolean => isTokenChar(c) && !(c >= 65 && c <= 90);
/** What parseParamsAt takes as an unquoted value: anything but `;`, `"`, `,` and LWS. */
const isValueChar = (c: number): boolean => c !== 59 && c !== 34 && c !== 44 && c !== 32 && c !== 9;

function sameName(s: Uint8Array, a0: number, a1: number, b0: number, b1: number): boolean {
  if (a1 - a0 !== b1 - b0) return false;
  for (let k = 0; k < a1 - a0; k++) if (s[a0 + k] !== s[b0 + k]) return false;
  return true;
}
