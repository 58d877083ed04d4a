// The digest decision for a REGISTER (RFC 3261 §22.4, GB/T 28181-2016 §9.1.2.1, SPEC SEC-1), pure.
//
// The device is identified by the From user (its 20-digit id). The digest is checked against the
// password of the device named in From (its own password if provisioned, else the platform password),
// and the answer must be for a nonce issued to that same device id (the nonce is MAC'd (keyed SHA-256) over it), for
// this Request-URI (RFC 2617 §3.2.2.5), with a nonce/nc never used before, and — unless the operator
// allowed any username (`digest-username: any`, for devices that send a login name such as Hikvision's
// "admin", sample 03) — with the device id as username. So a captured answer registers nothing else:
// not another device id, not another time.
import type { DigestServer } from '@vms/sip';
import type { DigestUsernameRule } from '../config/config.types.ts';

export type RegisterAuthDecision =
  | { readonly kind: 'accept'; readonly username: string | null }
  /** 401 with a fresh challenge; `stale`: the password was right but the nonce expired or was used already. */
  | { readonly kind: 'challenge'; readonly stale: boolean; readonly reason: string }
  /** 403: wrong password, another realm, username or uri (retrying the same will not help). */
  | { readonly kind: 'forbidden'; readonly reason: string };

export interface RegisterAuthInput {
  /** The Authorization header, if any. */
  readonly authorization: string | undefined;
  /** The device's password, else the platform's; null = no authentication configured. */
  readonly password: string | null;
  /** The From user: the nonce must have been issued for it. */
  readonly deviceId: string;
  /** The Request-URI as received: the digest `uri` must designate it. */
  readonly requestUri: string;
  readonly usernameRule: DigestUsernameRule;
  readonly digest: Pick<DigestServer, 'verify'>;
  readonly now: number;
}

/** An Authorization header worth checking (absent or blank: none). */
export const hasCredentials = (authorization: string | undefined): authorization is string => authorization !== undefined && authorization.trim() !== '';

export function decideRegisterAuth(input: RegisterAuthInput): RegisterAuthDecision {
  if (input.password === null) return { kind: 'accept', username: null };
  if (!hasCredentials(input.authorization)) {
    return { kind: 'challenge', stale: false, reason: 'no credentials' };
  }
  const verdict = input.digest.verify(input.authorization, {
    method: 'REGISTER',
    password: input.password,
    now: input.now,
    subject: input.deviceId,
    requestUri: input.requestUri,
    ...(input.usernameRule === 'device-id' ? { username: input.deviceId } : {}),
  });
  if (verdict.ok) return { kind: 'accept', username: verdict.username };
  switch (verdict.reason) {
    case 'response':
      return { kind: 'forbidden', reason: 'wrong password' };
    case 'realm':
      return { kind: 'forbidden', reason: 'credentials for another realm' };
    case 'username':
      return { kind: 'forbidden', reason: 'digest username is not the device id' };
    case 'uri':
      return { kind: 'forbidden', reason: 'digest uri is not the Request-URI' };
    case 'stale':
      return { kind: 'challenge', stale: true, reason: 'nonce expired' };
    case 'replay':
      return { kind: 'challenge', stale: true, reason: 'nonce already used' };
    default:
      // Unknown nonce (issued before a restart, by another instance, or for another device id),
      // malformed header, unsupported algorithm or qop: a fresh challenge lets a well-behaved device
      // answer again.
      return { kind: 'challenge', stale: false, reason: `digest ${verdict.reason}` };
  }
}
