import * as crypto from 'node:crypto';
import { createHash, randomFillSync } from 'node:crypto';
import { SipParseError } from '../errors.ts';
import { checkDigestResponse, normalizeAlgorithm, sameText } from './digest.compute.ts';
import { formatDigestChallenge, parseDigestCredentials, type DigestChallenge, type DigestCredentials } from './digest.header.ts';
import { digestUriMatches } from './digest-uri.ts';
import { NONCE_CONSUMED, NonceLedger } from './nonce-ledger.ts';

/** RFC 2617 §3.2.1 leaves nonce lifetime to the server; long enough for a device's 401 round trip. */
export const DEFAULT_NONCE_TTL_MS = 5 * 60_000;
/** Nonces dated this far in the future are accepted (clock steps). */
const FUTURE_SKEW_S = 30;

export interface DigestServerOptions {
  realm: string;
  /**
   * Key of the nonces' MAC: only a server holding it accepts them. The platform uses a random key per
   * process, so a nonce (and an answer to it) is valid on the instance that issued it only.
   */
  secret: string | Buffer;
  nonceTtlMs?: number;
  /**
   * Offer `qop="auth"` (RFC 2617). Answers in either form verify: with qop (nc, cnonce checked) and
   * without (RFC 2069, what devices that ignore qop send, e.g. sample 01's simulator).
   */
  qop?: boolean;
  opaque?: string;
  /** Bound of the used-nonce ledger (see nonce-ledger.ts). */
  maxTrackedNonces?: number;
}

export type DigestFailure =
  | 'malformed' // unparsable Authorization value
  | 'realm' // answer for another realm
  | 'algorithm' // neither MD5 nor MD5-sess
  | 'nonce' // not a nonce of ours for this subject (bad format, bad MAC, from the future, issued for another id)
  | 'qop' // unsupported qop, or qop=auth without a valid nc/cnonce
  | 'uri' // digest uri is not the Request-URI (RFC 2617 §3.2.2.5)
  | 'username' // digest username is not the one required
  | 'response' // wrong password / tampered parameters
  | 'stale' // right password, expired nonce: challenge again with stale=true
  | 'replay'; // right password, but this nonce (and nc) was already used: challenge again with stale=true

export type DigestVerifyResult =
  | { ok: true; username: string }
  | { ok: false; reason: DigestFailure; /** RFC 2617 §3.2.1: set stale=true in the next challenge. */ stale: boolean };

export interface DigestVerifyInput {
  method: string;
  /** The device's password; the caller looks the device up by From/To, not by `username` (Hikvision sends "admin"). */
  password: string;
  now: number;
  /** When given, `uri=` must designate it (same bytes, or equal by RFC 3261 §19.1.4). */
  requestUri?: string;
  /** Who the nonce must have been issued for (the `subject` of the challenge; the device id). Default ''. */
  subject?: string;
  /** When given, the digest `username` must equal it. */
  username?: string;
}

export interface ChallengeOptions {
  stale?: boolean;
  /** Who the nonce is issued for (the device id): an answer to it is valid for that subject only. Default ''. */
  subject?: string;
}

/**
 * Server side of SIP digest (RFC 3261 §22.4, SPEC SEC-1):
 *   nonce = hex8(issued-at seconds) hex8(random) hex16(SHA-256(hex(secret) | time random | realm | subject))
 * 32 hex characters, the length of the MD5-looking nonces GB28181 devices are used to. Validating a
 * nonce needs only the secret, the subject and `now`; each nonce/nc pair is then accepted once (a
 * bounded in-memory ledger), so a captured answer cannot be replayed, nor used for another device id.
 *
 * The MAC is a secret-prefix SHA-256, not HMAC (issue 11: an HMAC object per challenge and per answer
 * was ~25k instructions each, one `crypto.hash` call ~5k). Forging a nonce means finding 64 bits of
 * SHA-256 over a 256-bit secret. Length extension, the weakness of a secret-prefix hash, needs the
 * whole 256-bit digest (only 64 bits are published) and would append bytes after the subject, which
 * then is no longer the device id the nonce is checked for.
 */
export class DigestServer {
  readonly realm: string;
  /** The secret as hex text: the prefix of every MAC input. */
  readonly #key: string;
  readonly #ttlMs: number;
  readonly #qop: boolean;
  readonly #opaque: string | undefined;
  readonly #ledger: NonceLedger;
  /** challengeHeader's text around the nonce: everything but the nonce is fixed per server. */
  readonly #challengeHead: string;
  readonly #challengeTail: string;
  readonly #challengeTailStale: string;

  constructor(opts: DigestServerOptions) {
    this.realm = opts.realm;
    this.#key = (typeof opts.secret === 'string' ? Buffer.from(opts.secret, 'utf8') : opts.secret).toString('hex');
    this.#ttlMs = opts.nonceTtlMs ?? DEFAULT_NONCE_TTL_MS;
    this.#qop = opts.qop ?? false;
    this.#opaque = opts.opaque;
    this.#ledger = new NonceLedger(opts.maxTrackedNonces);
    // formatDigestChallenge's output with a placeholder nonce, split around it (a nonce is 32 hex digits: quoted as is)
    const PLACEHOLDER = '0'.repeat(32);
    const fixed = (stale: boolean): [string, string] => {
      const text = formatDigestChallenge({ ...this.createChallenge(0, { stale }), nonce: PLACEHOLDER });
      const at = text.indexOf(`, nonce="${PLACEHOLDER}"`) + ', nonce="'.length; // the realm before it is quoted: no `"` unescaped
      return [text.slice(0, at), text.slice(at + PLACEHOLDER.length)];
    };
    [this.#challengeHead, this.#challengeTail] = fixed(false);
    this.#challengeTailStale = fixed(true)[1];
  }

  createChallenge(now: number, opts: ChallengeOptions = {}): Omit<DigestChallenge, 'params'> {
    return {
      realm: this.realm,
      nonce: this.#issueNonce(now, opts.subject ?? ''),
      opaque: this.#opaque,
      algorithm: 'MD5',
      qop: this.#qop ? ['auth'] : undefined,
      stale: opts.stale === true ? true : undefined,
    };
  }

  /**
   * Value for the WWW-Authenticate header of a 401: formatDigestChallenge(createChallenge(now, opts)),
   * joined from the fixed parts around the nonce (issue 11: one per registration's first leg).
   */
  challengeHeader(now: number, opts: ChallengeOptions = {}): string {
    return this.#challengeHead + this.#issueNonce(now, opts.subject ?? '') + (opts.stale === true ? this.#challengeTailStale : this.#challengeTail);
  }

  checkNonce(nonce: string, now: number, subject = ''): 'valid' | 'stale' | 'invalid' {
    if (!/^[0-9a-f]{32}$/.test(nonce)) return 'invalid';
    if (!sameText(nonce.slice(16), this.#mac(nonce.slice(0, 16), subject))) return 'invalid';
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
    const nonce = this.checkNonce(cred.nonce, input.now, input.subject ?? '');
    if (nonce === 'invalid') return fail('nonce');
    let nc = NONCE_CONSUMED;
    if (cred.qop !== undefined) {
      // RFC 2617 §3.2.2: with qop, nc is 8 hex digits (from 1) and cnonce is mandatory.
      if (cred.qop !== 'auth' || cred.cnonce === undefined || cred.cnonce === '' || cred.nc === undefined || !/^[0-9a-fA-F]{8}$/.test(cred.nc)) {
        return fail('qop');
      }
      nc = parseInt(cred.nc, 16);
      if (nc === 0) return fail('qop');
    }
    if (input.requestUri !== undefined && !digestUriMatches(cred.uri, input.requestUri)) return fail('uri');
    if (input.username !== undefined && cred.username !== input.username) return fail('username');
    if (!checkDigestResponse(cred, input.method, input.password)) return fail('response');
    // §3.2.1: stale only when the digest itself was right, so the client retries without new credentials.
    if (nonce === 'stale') return { ok: false, reason: 'stale', stale: true };
    // Recorded only now: an answer that did not verify (no password) can neither use up nor fill the ledger.
    const until = parseInt(cred.nonce.slice(0, 8), 16) * 1000 + this.#ttlMs + 1000;
    if (!this.#ledger.use(cred.nonce, nc, until, input.now)) return { ok: false, reason: 'replay', stale: true };
    return { ok: true, username: cred.username };
  }

  #issueNonce(now: number, subject: string): string {
    const stamp = Math.floor(now / 1000).toString(16).padStart(8, '0').slice(-8) + nonceRandom();
    return stamp + this.#mac(stamp, subject);
  }

  /** The key (hex) and the stamp have fixed lengths and the realm is fixed per server: whatever follows is the subject. */
  #mac(stamp: string, subject: string): string {
    return sha256Hex(`${this.#key}|${stamp}|${this.realm}|${subject}`).slice(0, 16);
  }
}

/** One-shot hashing where Node has it (≥ 20.12): one call into C++, no Hash object; the same digest either way. */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'hex') : (text) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * 4 random bytes (8 hex digits) per nonce, from a pool refilled 1,024 nonces at a time: one
 * randomFillSync per 1,024 challenges instead of one randomBytes each (issue 11: a registration storm
 * challenges every device). The bytes only make nonces unique; the MAC makes them unforgeable.
 */
const NONCE_POOL = Buffer.alloc(4096);
let noncePoolAt = NONCE_POOL.length;
function nonceRandom(): string {
  if (noncePoolAt === NONCE_POOL.length) {
    randomFillSync(NONCE_POOL);
    noncePoolAt = 0;
  }
  noncePoolAt += 4;
  return NONCE_POOL.toString('hex', noncePoolAt - 4, noncePoolAt);
}

/** GB/T 28181: the SIP domain (digest realm) is the first 10 digits of the server's 20-digit id. */
export function gbRealmFromServerId(serverId: string): string {
  return serverId.slice(0, 10);
}

function fail(reason: DigestFailure): DigestVerifyResult {
  return { ok: false, reason, stale: false };
}
