/**
 * The instance-to-instance forward protocol (SPEC ROUTE-3, ROUTE-6), shared by the sending client and
 * the receiving hook so both sides spell it the same way. A forward is an ordinary HTTP request to the
 * owner's internal base URL plus three headers:
 *  - the marker, naming the origin node: the owner runs its local handler and never routes it again;
 *  - the shared secret, checked in constant time: without it the marker is a forgery;
 *  - a forward id, for correlating the two instances' logs.
 * Header names are lower case (Node's and undici's header maps are).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export const FORWARD_HEADERS = {
  /** Origin node code; presence alone marks the request as forwarded. */
  marker: 'x-vms-forwarded-by',
  /** node-forward-secret, verbatim. Redacted from logs. */
  secret: 'x-vms-forward-secret',
  forwardId: 'x-vms-forward-id',
} as const;

/** SPEC ROUTE-5: a dead owner must fail fast, so connects never wait longer than this. */
export const MAX_FORWARD_CONNECT_TIMEOUT_MS = 1000;

/**
 * SPEC ROUTE-3: constant-time secret check. Both sides are hashed first so the comparison always runs
 * on two equal-length digests: neither the configured secret's length nor a matching prefix leaks
 * through timing. A missing or empty secret on either side never matches (ROUTE-6: no secret, the
 * channel is closed).
 */
export function forwardSecretMatches(presented: string | undefined, configured: string | null): boolean {
  if (configured === null || configured === '' || presented === undefined || presented === '') return false;
  return timingSafeEqual(digest(presented), digest(configured));
}

/**
 * forwardSecretMatches with the configured secret fixed and its digest computed once: the receiving
 * hook checks every forwarded request with it. Same rules: constant time, empty never matches.
 */
export function createForwardSecretCheck(configured: string | null): (presented: string | undefined) => boolean {
  if (configured === null || configured === '') return () => false;
  const expected = digest(configured);
  return (presented) => presented !== undefined && presented !== '' && timingSafeEqual(digest(presented), expected);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
