import * as crypto from 'node:crypto';
import { createHash, timingSafeEqual } from 'node:crypto';
import { SipError } from '../errors.ts';
import type { DigestCredentials } from './digest.header.ts';

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
  const algorithm = normalizeAlgorithm(i.algorithm);
  // Every wire part ASCII (what devices send): so is every hash input (the HA1/HA2 are hex), checked
  // once here instead of once per hash (issue 11: three regex runs per registration).
  const ascii = oneShot !== undefined && !NOT_ASCII.test(i.username + i.realm + i.method + i.uri + i.nonce + (i.nc ?? '') + (i.cnonce ?? ''));
  let ha1 = md5Hex([i.username, ':', i.realm, ':'], ascii, i.password);
  if (algorithm === 'MD5-sess') ha1 = md5Hex([ha1, ':', i.nonce, ':', i.cnonce ?? ''], ascii);
  const ha2 = md5Hex([i.method, ':', i.uri], ascii);
  if (i.qop === undefined) return md5Hex([ha1, ':', i.nonce, ':', ha2], ascii);
  if (i.qop !== 'auth') throw new SipError('SIP_ERR_AUTH_UNSUPPORTED', `qop ${i.qop} is not supported`);
  return md5Hex([ha1, ':', i.nonce, ':', i.nc ?? '', ':', i.cnonce ?? '', ':', i.qop, ':', ha2], ascii);
}

/**
 * Checks `credentials.response` against the password in constant time (no early exit on the first
 * differing byte). Pure: no nonce validation, see DigestServer for that.
 */
export function checkDigestResponse(credentials: DigestCredentials, method: string, password: string): boolean {
  const expected = Buffer.from(
    computeDigestResponse({
      username: credentials.username,
      realm: credentials.realm,
      password,
      method,
      uri: credentials.uri,
      nonce: credentials.nonce,
      algorithm: credentials.algorithm,
      qop: credentials.qop,
      nc: credentials.nc,
      cnonce: credentials.cnonce,
    }),
    'latin1',
  );
  const given = Buffer.from(credentials.response.toLowerCase(), 'latin1');
  return given.length === expected.length && timingSafeEqual(given, expected);
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

/** `ascii`: every part is known ASCII (computeDigestResponse checked them), so no check here. */
function md5Hex(wireParts: readonly string[], ascii: boolean, secret?: string): string {
  // issue 11: three of these per registration. Parts all ASCII: their latin1 bytes are their UTF-8
  // bytes, so the joined text (the secret UTF-8 as always) is hashed in one call.
  if (oneShot !== undefined) {
    let text = '';
    for (const p of wireParts) text += p;
    if (ascii || !NOT_ASCII.test(text)) return oneShot('md5', secret === undefined ? text : text + secret, 'hex');
  }
  const h = createHash('md5');
  for (const p of wireParts) h.update(p, WIDE.test(p) ? 'utf8' : 'latin1');
  if (secret !== undefined) h.update(secret, 'utf8');
  return h.digest('hex');
}
