// Verifying an HS256 token through WebCrypto costs ~0.2 ms of CPU and a thread-pool round trip, and an
// operator sends the same token with every request for its whole lifetime; a forwarded request is
// verified on two instances (SPEC ROUTE-3). Tokens that verified are therefore remembered, keyed by
// their full text (signature included) and the signing key, until their `exp`: a remembered token is
// exactly one that passed verification, and past its expiry it is verified again (and refused as
// expired). Bounded: the least recently used entry goes first.
import type { Principal } from './principal.ts';

export type TokenVerifier = (token: string, signingKey: string, nowMs: number) => Promise<Principal>;

interface Entry {
  readonly principal: Principal;
  readonly signingKey: string;
  readonly expiresAtMs: number;
}

export interface VerifiedTokens {
  /** Verifies (or answers from memory); rejects with UnauthorizedError as the verifier does. */
  readonly verify: TokenVerifier;
  /**
   * The principal of a token that verified with `signingKey` and has not expired, without verifying
   * anything: undefined when it is not remembered. Lets a caller that must stay synchronous (the HTTP
   * edge, http/edge.ts) use a token only once it has passed the full check.
   */
  peek(token: string, signingKey: string, nowMs: number): Principal | undefined;
}

export function rememberVerifiedTokens(verify: TokenVerifier, maxEntries = 4096): VerifiedTokens {
  const entries = new Map<string, Entry>();
  const peek = (token: string, signingKey: string, nowMs: number): Principal | undefined => {
    const hit = entries.get(token);
    if (hit === undefined) return undefined;
    entries.delete(token);
    if (hit.signingKey !== signingKey || nowMs >= hit.expiresAtMs) return undefined;
    entries.set(token, hit); // most recently used last
    return hit.principal;
  };
  return {
    peek,
    async verify(token, signingKey, nowMs) {
      const remembered = peek(token, signingKey, nowMs);
      if (remembered !== undefined) return remembered;
      const principal = await verify(token, signingKey, nowMs); // throws for invalid / expired
      const expiresAtMs = expiryOf(token);
      if (expiresAtMs !== null) {
        entries.set(token, { principal, signingKey, expiresAtMs });
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
      }
      return principal;
    },
  };
}

/** `exp` of a token that just verified (so well-formed), in ms; null if it cannot be read. */
function expiryOf(token: string): number | null {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' && Number.isFinite(payload.exp) ? payload.exp * 1000 : null;
  } catch {
    return null;
  }
}
