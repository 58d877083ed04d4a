// Which upstream platform sent a request: the From user is the platform's server id. Requests from
// anything else (devices, unknown peers, a From that does not parse) belong to no platform.
import type { UpstreamPlatform } from '@vms/cascade';
import { getFrom, type SipRequest } from '@vms/sip';

export function platformOfRequest(req: SipRequest, known: ReadonlyMap<string, UpstreamPlatform>): UpstreamPlatform | undefined {
  let user: string | null;
  try {
    user = getFrom(req).uri.user;
  } catch {
    return undefined;
  }
  return user === null ? undefined : known.get(user);
}
