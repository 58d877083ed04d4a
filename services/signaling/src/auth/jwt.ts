// Operator tokens (SPEC §12): HS256 JWT with claims user_id, tenant_id, exp.
import { errors, jwtVerify, SignJWT } from 'jose';
import { UnauthorizedError } from '../errors/catalog.ts';
import type { Principal } from './principal.ts';

const ALG = 'HS256';
const keyBytes = (signingKey: string): Uint8Array => new TextEncoder().encode(signingKey);

export interface TokenRequest {
  readonly tenantId: string;
  readonly userId: string;
  readonly ttlSec: number;
}

export async function signToken(request: TokenRequest, signingKey: string, nowMs: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({ user_id: request.userId, tenant_id: request.tenantId })
    .setProtectedHeader({ alg: ALG, typ: 'JWT' })
    .setIssuedAt(iat)
    .setExpirationTime(iat + request.ttlSec)
    .sign(keyBytes(signingKey));
}

const claimText = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : null;

/** Verifies signature, algorithm and expiry; throws UnauthorizedError('invalid' | 'expired'). */
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
  if (tenantId === null || userId === null) throw new UnauthorizedError('invalid');
  return { tenantId, userId };
}
