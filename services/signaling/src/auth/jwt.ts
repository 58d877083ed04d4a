// Operator tokens (SPEC §12): HS256 JWT with claims user_id, tenant_id, exp, and optionally role
// (SPEC SEC-2: the all-tenant operator role is an explicit claim). Every claim is checked here, once,
// when the token is verified: a token with a malformed tenant or user id, or a role we do not know, is
// invalid (401), so nothing downstream (logs, SQL, cache keys) ever sees an unchecked claim.
import { errors, jwtVerify, SignJWT } from 'jose';
import { UnauthorizedError } from '../errors/catalog.ts';
import { ROLES, TENANT_ID, USER_ID, type Principal, type Role } from './principal.ts';

const ALG = 'HS256';
const keyBytes = (signingKey: string): Uint8Array => new TextEncoder().encode(signingKey);

/** The claim naming the token's role; absent = `tenant`. */
export const ROLE_CLAIM = 'role';

export interface TokenRequest {
  readonly tenantId: string;
  readonly userId: string;
  readonly ttlSec: number;
  /** Default `tenant` (no claim written). */
  readonly role?: Role;
}

export async function signToken(request: TokenRequest, signingKey: string, nowMs: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const claims: Record<string, string> = { user_id: request.userId, tenant_id: request.tenantId };
  if (request.role !== undefined && request.role !== 'tenant') claims[ROLE_CLAIM] = request.role;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALG, typ: 'JWT' })
    .setIssuedAt(iat)
    .setExpirationTime(iat + request.ttlSec)
    .sign(keyBytes(signingKey));
}

/** A string claim, or a finite integer one (BladeX issues numeric user ids), as text. */
const claimText = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : null;

const roleOf = (value: unknown): Role | null => {
  if (value === undefined) return 'tenant';
  return (ROLES as readonly unknown[]).includes(value) ? (value as Role) : null;
};

/**
 * Verifies signature, algorithm, expiry (`exp` required) and the claims: tenant_id 1-12 of
 * [A-Za-z0-9_-], user_id 1-64 printable characters, role absent / `tenant` / `operator`.
 * Throws UnauthorizedError('invalid' | 'expired').
 */
export async function verifyToken(token: string, signingKey: string, nowMs: number): Promise<Principal> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, keyBytes(signingKey), {
      algorithms: [ALG],
      requiredClaims: ['exp'],
      currentDate: new Date(nowMs),
    }));
  } catch (err) {
    throw new UnauthorizedError(err instanceof errors.JWTExpired ? 'expired' : 'invalid');
  }
  const tenantId = claimText(payload['tenant_id']);
  const userId = claimText(payload['user_id']);
  const role = roleOf(payload[ROLE_CLAIM]);
  if (tenantId === null || !TENANT_ID.test(tenantId)) throw new UnauthorizedError('invalid');
  if (userId === null || !USER_ID.test(userId)) throw new UnauthorizedError('invalid');
  if (role === null) throw new UnauthorizedError('invalid');
  return { tenantId, userId, role };
}
