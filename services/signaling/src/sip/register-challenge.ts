// The first leg of a REGISTER with digest (issue 11, target 1), answered statelessly: a REGISTER without
// credentials while the platform has a password gets its 401 challenge on the datagram shortcut
// (RFC 3261 §8.2.7: a stateless UAS), without a parse of the whole request, a server transaction kept
// for Timer J (32 s over UDP) or a handler run. Nothing needs remembering: the nonce is MAC'd (keyed SHA-256) over the
// device id and its issue time (DigestServer, SPEC SEC-1), so the answer to it is checked from the
// nonce alone. A retransmission is challenged again (another nonce, each valid); the device answers
// whichever 401 it got first.
//
// Only the common case is answered here, and it gets exactly what register.handler.ts would answer; the
// rest returns undefined and takes the ordinary handler, which answers it properly:
// - credentials present (the second leg), or no platform password (a device's own password needs a
//   store read);
// - a From that does not parse or whose user is not a 20-digit id (400 there);
// - no Expires header (the lifetime may be in a Contact parameter, RFC 3261 §10.2.1.1), a malformed one
//   (400), or one under register-expires-min (423 with Min-Expires before any challenge, §10.3 step 7).
// What the shortcut does not check is what it only copies (Request-URI, To, Call-ID): a request the
// parser would refuse gets the challenge, and its answer (the second leg, parsed in full) gets the 400.
import { parseNameAddr, SipStatus, type DigestServer, type StatelessAnswer, type StatelessRequest } from '@vms/sip';
import type { Clock } from '../core/clock.ts';
import { isGbId } from '../core/gb-id.ts';
import { hasCredentials } from './register-auth.ts';

/** RFC 3261 §20.19: delta-seconds up to 2**32-1, the bound getExpires() applies on the ordinary path. */
const MAX_EXPIRES = 0xffffffff;

export interface StatelessChallengeOptions {
  /** The platform password (vms.gb28181.sip.password); null: no challenge without a store read, none here. */
  readonly password: string | null;
  /** vms.gb28181.sip.register-expires-min: a shorter lifetime gets 423 from the ordinary handler. */
  readonly registerExpiresMin: number;
  readonly digest: Pick<DigestServer, 'challengeHeader'>;
  readonly clock: Clock;
}

export type StatelessChallenge = (req: StatelessRequest) => StatelessAnswer | undefined;

export function createStatelessChallenge(o: StatelessChallengeOptions): StatelessChallenge {
  const { password, registerExpiresMin, digest, clock } = o;
  return (req) => {
    if (password === null || hasCredentials(req.header('Authorization'))) return undefined;
    const expires = req.header('Expires');
    if (expires === undefined) return undefined;
    const requested = deltaSeconds(expires);
    if (requested === null || (requested !== 0 && requested < registerExpiresMin)) return undefined;
    const deviceId = fromDeviceId(req.from);
    if (deviceId === undefined) return undefined;
    return { status: SipStatus.Unauthorized, headers: [['WWW-Authenticate', digest.challengeHeader(clock.now(), { subject: deviceId })]] };
  };
}

/** 1*10DIGIT within MAX_EXPIRES (the caller trimmed it), else null: what getExpires() accepts. */
export function deltaSeconds(value: string): number | null {
  if (value.length === 0 || value.length > 10) return null;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return null;
    n = n * 10 + d;
  }
  return n > MAX_EXPIRES ? null : n;
}

/** The From user when it is a GB id, parsed as the ordinary path parses it (registeringDevice). */
function fromDeviceId(from: string): string | undefined {
  let user: string | null;
  try {
    user = parseNameAddr(from).uri.user;
  } catch {
    return undefined; // the ordinary path answers 400
  }
  return user !== null && isGbId(user) ? user : undefined;
}
