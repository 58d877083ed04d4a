import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';
import { SipError } from '../errors.ts';
import { wireAscii, type DigestCredentials } from './digest.header.ts';
import { detachString } from '../message/detach.ts';

/** The algorithms GB/T 28181 peers use (RFC 2617 §3.2.2.2). */
export type DigestAlgorithm = 'MD5' | 'MD5-sess';

export interface DigestInput {
  username: string;
  realm: string;
  password: string;
  method: string;
  /** digest-uri exactly as it appears in the `uri=` parameter. */
  uri: string;
  nonce: string;
  algorithm?: string;
  /** Only `auth` (GB28181 never uses auth-int); absent = RFC 2069 compatibility mode. */
  qop?: string;
  nc?: string;
  cnonce?: string;
}

const WIDE = /[^\x00-\xff]/;

/**
 * RFC 2617 §3.2.2.1:
 *   qop=auth: response = MD5( HA1 ":" nonce ":" nc ":" cnonce ":" qop ":" HA2 )
 *   no qop:   response = MD5( HA1 ":" nonce ":" HA2 )
 *   HA1 = MD5(username ":" realm ":" password)  (MD5-sess: MD5(that ":" nonce ":" cnonce))
 *   HA2 = MD5(method ":" digest-uri)
 * Wire values are latin1 "binary" strings, so each part is hashed as the bytes that travel on the
 * wire; the password never travels and is hashed UTF-8.
 */
export function computeDigestResponse(i: DigestInput): string {
  return responseOf(i.username, i.realm, i.password, i.method, i.uri, i.nonce, i.algorithm, i.qop, i.nc, i.cnonce);
}

/** computeDigestResponse by position (checkDigestResponse calls it with the credentials' fields: no input object per check). */
function responseOf(
  username: string,
  realm: string,
  password: string,
  method: string,
  uri: string,
  nonce: string,
  algorithmName: string | undefined,
  qop: string | undefined,
  nc: string | undefined,
  cnonce: string | undefined,
  wirePartsAscii = false,
): string {
  const algorithm = normalizeAlgorithm(algorithmName);
  // Every wire part ASCII (what devices send): so is every hash input (the HA1/HA2 are hex), checked
  // once here instead of once per hash (issue 11: three regex runs per registration); not again for
  // the parts the caller knows ASCII (wirePartsAscii: username, realm, uri, nonce, nc, cnonce).
  const ascii =
    oneShot !== undefined && isAscii(method) && (wirePartsAscii || (isAscii(username) && isAscii(realm) && isAscii(uri) && isAscii(nonce) && isAscii(nc ?? '') && isAscii(cnonce ?? '')));
  let ha1 = md5Hex([username, ':', realm, ':'], ascii, password);
  if (algorithm === 'MD5-sess') ha1 = md5Hex([ha1, ':', nonce, ':', cnonce ?? ''], ascii);
  const ha2 = ha2Of(method, uri, ascii);
  if (qop === undefined) return md5Hex([ha1, ':', nonce, ':', ha2], ascii);
  if (qop !== 'auth') throw new SipError('SIP_ERR_AUTH_UNSUPPORTED', `qop ${qop} is not supported`);
  return md5Hex([ha1, ':', nonce, ':', nc ?? '', ':', cnonce ?? '', ':', qop, ':', ha2], ascii);
}

/**
 * HA2 of the last (method, uri) pair, kept: every device registers to the same Request-URI (the
 * platform's id at its domain), so a registration storm hashes the same HA2 over and over (issue 11:
 * one of the three MD5s, ~4.6k instructions). A pure function's last answer: nothing to invalidate.
 */
let lastHa2: { readonly method: string; readonly uri: string; readonly ascii: boolean; readonly ha2: string } | null = null;
function ha2Of(method: string, uri: string, ascii: boolean): string {
  const last = lastHa2;
  if (last !== null && last.uri === uri && last.method === method && last.ascii === ascii) return last.ha2;
  const ha2 = md5Hex([method, ':', uri], ascii);
  // copies: the uri as parsed is a slice of the request, which the memo would keep alive
  lastHa2 = { method: detachString(method), uri: detachString(uri), ascii, ha2 };
  return ha2;
}

/**
 * Checks `credentials.response` against the password in constant time (no early exit on the first
 * differing byte). Pure: no nonce validation, see DigestServer for that.
 */
export function checkDigestResponse(credentials: DigestCredentials, method: string, password: string): boolean {
  const c = credentials;
  // credentials read by the usual-order regex are ASCII (wireAscii): six regex runs fewer (issue 11, ~2k instructions)
  const expected = responseOf(c.username, c.realm, password, method, c.uri, c.nonce, c.algorithm, c.qop, c.nc, c.cnonce, wireAscii(c));
  return sameText(credentials.response.toLowerCase(), expected);
}

/**
 * Whether two strings are equal, in time that depends on their length only (no early exit at the first
 * difference): for MACs and digest responses, which are hex of a known length. Over the UTF-16 units,
 * without the two Buffers and the native call `timingSafeEqual` takes (issue 11: ~5k instructions per
 * registration for two comparisons of 16 and 32 characters).
 */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** nonce-count as 8 lower-case hex digits (RFC 2617 §3.2.2). */
export function formatNonceCount(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}

export function normalizeAlgorithm(algorithm: string | undefined): DigestAlgorithm {
  if (algorithm === undefined) return 'MD5';
  const a = algorithm.toUpperCase();
  if (a === 'MD5') return 'MD5';
  if (a === 'MD5-SESS') return 'MD5-sess';
  throw new SipError('SIP_ERR_AUTH_UNSUPPORTED', `digest algorithm ${algorithm} is not supported`);
}

/** One-shot hashing (Node ≥ 20.12): one call into C++ instead of a Hash object and an update() per part. */
const oneShot: ((algorithm: string, data: string, encoding: 'hex') => string) | undefined = typeof crypto.hash === 'function' ? crypto.hash : undefined;

const NOT_ASCII = /[^\x00-\x7f]/;
/**
 * Whether every character is below 0x80: a regex run per part, no joined copy to flatten (issue 11; a
 * charCodeAt loop was tried: slower on the parts, which are slices of the message).
 */
const isAscii = (s: string): boolean => !NOT_ASCII.test(s);

/** `ascii`: every part is known ASCII (responseOf checked them), so no check here. */
function md5Hex(wireParts: readonly string[], ascii: boolean, secret?: string): string {
  // issue 11: three of these per registration. Parts all ASCII: their latin1 bytes are their UTF-8
  // bytes, so the joined text (the secret UTF-8 as always) is hashed in one call. (An MD5 in
  // JavaScript was tried: ~3.4k instructions a hash against crypto.hash's ~2.6k, measured.)
  if (oneShot !== undefined && ascii) {
    let text = '';
    for (const p of wireParts) text += p;
    return oneShot('md5', secret === undefined ? text : text + secret, 'hex');
  }
  const h = createHash('md5');
  for (const p of wireParts) h.update(p, WIDE.test(p) ? 'utf8' : 'latin1');
  if (secret !== undefined) h.update(secret, 'utf8');
  return h.digest('hex');
}
