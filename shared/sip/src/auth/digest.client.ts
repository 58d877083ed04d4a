import { randomBytes } from 'node:crypto';
import { SipError } from '../errors.ts';
import { computeDigestResponse, formatNonceCount, normalizeAlgorithm } from './digest.compute.ts';
import { formatDigestCredentials, parseDigestChallenge, type DigestChallenge } from './digest.header.ts';

export interface AuthorizationOptions {
  username: string;
  password: string;
  method: string;
  /** digest-uri: the Request-URI of the request being authorized (RFC 3261 §22.4). */
  uri: string;
  /** Fixed cnonce for reproducible tests; default 64 random bits. */
  cnonce?: string;
  /** nonce-count for this nonce, starting at 1 (RFC 2617 §3.2.2). */
  nc?: number;
}

/**
 * Client side (REGISTER towards an upper platform): the Authorization / Proxy-Authorization value
 * answering `challenge`. Uses qop=auth when offered (RFC 2617 §3.2.2: the client MUST then use it),
 * echoes opaque and algorithm. Throws SipError SIP_ERR_AUTH_UNSUPPORTED for other algorithms/qops.
 */
export function buildAuthorization(challenge: Omit<DigestChallenge, 'params'> | string, o: AuthorizationOptions): string {
  const c = typeof challenge === 'string' ? parseDigestChallenge(challenge) : challenge;
  normalizeAlgorithm(c.algorithm);
  let qop: string | undefined;
  if (c.qop !== undefined) {
    if (!c.qop.includes('auth')) throw new SipError('SIP_ERR_AUTH_UNSUPPORTED', `qop ${c.qop.join(',')} is not supported`);
    qop = 'auth';
  }
  const nc = qop === undefined ? undefined : formatNonceCount(o.nc ?? 1);
  const cnonce = qop === undefined ? undefined : (o.cnonce ?? randomBytes(8).toString('hex'));
  const response = computeDigestResponse({
    username: o.username,
    realm: c.realm,
    password: o.password,
    method: o.method,
    uri: o.uri,
    nonce: c.nonce,
    algorithm: c.algorithm,
    qop,
    nc,
    cnonce,
  });
  return formatDigestCredentials({
    username: o.username,
    realm: c.realm,
    nonce: c.nonce,
    uri: o.uri,
    response,
    algorithm: c.algorithm ?? 'MD5',
    qop,
    nc,
    cnonce,
    opaque: c.opaque,
  });
}
