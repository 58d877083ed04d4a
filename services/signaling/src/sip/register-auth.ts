// The digest decision for a REGISTER (RFC 3261 §22.4, GB/T 28181-2016 §9.1.2.1), pure.
//
// The device is identified by the From user (its 20-digit id), never by the digest `username`: some
// devices put a login name there (Hikvision sends "admin", sample 03). The digest is checked with
// whatever username the device sent, against the password of the device named in From (its own
// password if provisioned, else the platform password). So a device can only register under the id
// whose password it knows.
import type { DigestServer } from '@vms/sip';

export type RegisterAuthDecision =
  | { readonly kind: 'accept'; readonly username: string | null }
  /** 401 with a fresh challenge; `stale`: the old nonce expired but the password was right. */
  | { readonly kind: 'challenge'; readonly stale: boolean; readonly reason: string }
  /** 403: wrong password, or an answer for another realm (a misconfigured domain, retrying will not help). */
  | { readonly kind: 'forbidden'; readonly reason: string };

export interface RegisterAuthInput {
  /** The Authorization header, if any. */
  readonly authorization: string | undefined;
  /** The device's password, else the platform's; null = no authentication configured. */
  readonly password: string | null;
  readonly digest: Pick<DigestServer, 'verify'>;
  readonly now: number;
}

export function decideRegisterAuth(input: RegisterAuthInput): RegisterAuthDecision {
  if (input.password === null) return { kind: 'accept', username: null };
  if (input.authorization === undefined || input.authorization.trim() === '') {
    return { kind: 'challenge', stale: false, reason: 'no credentials' };
  }
  const verdict = input.digest.verify(input.authorization, { method: 'REGISTER', password: input.password, now: input.now });
  if (verdict.ok) return { kind: 'accept', username: verdict.username };
  switch (verdict.reason) {
    case 'response':
      return { kind: 'forbidden', reason: 'wrong password' };
    case 'realm':
      return { kind: 'forbidden', reason: 'credentials for another realm' };
    case 'stale':
      return { kind: 'challenge', stale: true, reason: 'nonce expired' };
    default:
      // Unknown nonce (e.g. issued before a restart), malformed header, unsupported algorithm or qop:
      // a fresh challenge lets a well-behaved device answer again.
      return { kind: 'challenge', stale: false, reason: `digest ${verdict.reason}` };
  }
}
