// The digest `uri` against the Request-URI (RFC 2617 §3.2.2.5: "the server must assure that the
// resource designated by the uri directive is the same as the resource specified in the Request-Line";
// RFC 3261 §22.4). Same bytes, or equal under RFC 3261 §19.1.4 URI comparison (case-insensitive
// scheme, host and parameter names, a parameter present in both must match, the transport, user,
// ttl, method and maddr parameters must be present in both or neither; headers are not compared).
import { parseUri } from '../message/uri.ts';

const MUST_MATCH = ['transport', 'user', 'ttl', 'method', 'maddr'];

export function digestUriMatches(digestUri: string, requestUri: string): boolean {
  if (digestUri === requestUri) return true;
  let a, b;
  try {
    a = parseUri(digestUri);
    b = parseUri(requestUri);
  } catch {
    return false;
  }
  if (a.scheme !== b.scheme || (a.scheme !== 'sip' && a.scheme !== 'sips')) return false;
  if (a.user !== b.user || a.password !== b.password || a.port !== b.port) return false;
  if (a.host.toLowerCase() !== b.host.toLowerCase()) return false;
  for (const name of MUST_MATCH) if (a.params.has(name) !== b.params.has(name)) return false;
  for (const [name, value] of a.params) {
    if (!b.params.has(name)) continue;
    if ((value ?? '').toLowerCase() !== (b.params.get(name) ?? '').toLowerCase()) return false;
  }
  return true;
}
