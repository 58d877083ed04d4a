import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SipParseError } from '../errors.ts';
import { checkDigestResponse, normalizeAlgorithm } from './digest.compute.ts';
import { formatDigestChallenge, parseDigestCredentials, type DigestChallenge, type DigestCredentials } from './digest.header.ts';

/** RFC 2617 §3.2.1 leaves nonce lifetime to the server; long enough for a device's 401 round trip. */
export const DEFAULT_NONCE_TTL_MS = 5 * 60_000;
/** Nonces dated this far in the future are accepted (clock steps between cluster instances). */
const FUTURE_SKEW_S = 30;

export interface DigestServerOptions {
  realm: string;
  /** HMAC key: instances that share it accept each other's nonces (stateless, no shared store). */
  secret: string | Buffer;
  nonceTtlMs?: number;
  /** Offer `qop="auth"` and require it in answers (RFC 2617); off = RFC 2069 style, as most GB28181 platforms. */
  qop?: boolean;
  opaque?: string;
}

export type DigestFailure =
  | 'malformed' // unparsable Authorization value
  | 'realm' // answer for another realm
  | 'algorithm' // neither MD5 nor MD5-sess
  | 'nonce' // not a nonce of ours (bad format, bad HMAC, from the future)
  | 'qop' // qop missing although required, unsupported, or without nc/cnonce
  | 'uri' // digest uri differs from the Request-URI (RFC 2617 §3.2.2.5)
  | 'response' // wrong password / tampered parameters
  | 'stale'; // right password, expired nonce: challenge again with stale=true

export type DigestVerifyResult =
  | { ok: true; username: string }
  | { ok: false; reason: DigestFailure; /** RFC 2617 §3.2.1: set stale=true in the next challenge. */ stale: boolean };

export interface DigestVerifyInput {
  method: string;
  /** The device's password; the caller looks the device up by From/To, not by `username` (Hikvision sends "admin"). */
  password: string;
  now: number;
  /** When given, `uri=` must equal it byte-for-byte. */
  requestUri?: string;
}

/**
 * Server side of SIP digest (RFC 3261 §22.4) with stateless nonces:
 *   nonce = hex8(issued-at seconds) hex8(random) hex16(HMAC-SHA256(secret, time|random|realm))
 * 32 hex characters, the length of the MD5-looking nonces GB28181 devices are used to; validating
 * needs only the secret and `now`. Nonce counts are not tracked, so a nonce can be replayed until it
 * expires: acceptable for REGISTER, where the response would only refresh the same binding.
 */
export class DigestServer {
  readonly realm: string;
  readonly #secret: Buffer;
  readonly #ttlMs: number;
  readonly #qop: boolean;
  readonly #opaque: string | undefined;

  constructor(opts: DigestServerOptions) {
    this.realm = opts.realm;
    this.#secret = typeof opts.secret === 'string' ? Buffer.from(opts.secret, 'utf8') : opts.secret;
    this.#ttlMs = opts.nonceTtlMs ?? DEFAULT_NONCE_TTL_MS;
    this.#qop = opts.qop ?? false;
    this.#opaque = opts.opaque;
  }

  createChallenge(now: number, opts: { stale?: boolean } = {}): Omit<DigestChallenge, 'params'> {
    return {
      realm: this.realm,
      nonce: this.#issueNonce(now),
      opaque: this.#opaque,
      algorithm: 'MD5',
      qop: this.#qop ? ['auth'] : undefined,
      stale: opts.stale === true ? true : undefined,
    };
  }

  /** Value for the WWW-Authenticate header of a 401. */
  challengeHeader(now: number, opts: { stale?: boolean } = {}): string {
    return formatDigestChallenge(this.createChallenge(now, opts));
  }

  checkNonce(nonce: string, now: number): 'valid' | 'stale' | 'invalid' {
    if (!/^[0-9a-f]{32}$/.test(nonce)) return 'invalid';
    const stamp = nonce.slice(0, 16);
    const mac = Buffer.from(nonce.slice(16), 'latin1');
    if (!timingSafeEqual(mac, Buffer.from(this.#mac(stamp), 'latin1'))) return 'invalid';
    const issuedS = parseInt(nonce.slice(0, 8), 16);
    const nowS = Math.floor(now / 1000);
    if (issuedS > nowS + FUTURE_SKEW_S) return 'invalid';
    return (nowS - issuedS) * 1000 > this.#ttlMs ? 'stale' : 'valid';
  }

  verify(authorization: string | DigestCredentials, input: DigestVerifyInput): DigestVerifyResult {
    let cred: DigestCredentials;
    try {
      cred = typeof authorization === 'string' ? parseDigestCredentials(authorization) : authorization;
    } catch (err) {
      if (err instanceof SipParseError) return fail('malformed');
      throw err;
    }
    if (cred.realm !== this.realm) return fail('realm');
    try {
      normalizeAlgorithm(cred.algorithm);
    } catch {
      return fail('algorithm');
    }
    const nonce = this.checkNonce(cred.nonce, input.now);
    if (nonce === 'invalid') return fail('nonce');
    if (cred.qop !== undefined || this.#qop) {
      // RFC 2617 §3.2.2: with qop, nc is 8 hex digits and cnonce is mandatory.
      if (cred.qop !== 'auth' || cred.cnonce === undefined || cred.nc === undefined || !/^[0-9a-fA-F]{8}$/.test(cred.nc)) {
        return fail('qop');
      }
    }
    if (input.requestUri !== undefined && cred.uri !== input.requestUri) return fail('uri');
    if (!checkDigestResponse(cred, input.method, input.password)) return fail('response');
    // §3.2.1: stale only when the digest itself was right, so the client retries without new credentials.
    if (nonce === 'stale') return { ok: false, reason: 'stale', stale: true };
    return { ok: true, username: cred.username };
  }

  #issueNonce(now: number): string {
    const stamp = Math.floor(now / 1000).toString(16).padStart(8, '0').slice(-8) + randomBytes(4).toString('hex');
    return stamp + this.#mac(stamp);
  }

  #mac(stamp: string): string {
    return createHmac('sha256', this.#secret).update(`${stamp}|${this.realm}`).digest('hex').slice(0, 16);
  }
}

/** GB/T 28181: the SIP domain (digest realm) is the first 10 digits of the server's 20-digit id. */
export function gbRealmFromServerId(serverId: string): string {
  return serverId.slice(0, 10);
}

function fail(reason: DigestFailure): DigestVerifyResult {
  return { ok: false, reason, stale: false };
}
