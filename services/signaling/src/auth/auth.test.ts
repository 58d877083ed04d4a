import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { UnauthorizedError } from '../errors/catalog.ts';
import { extractToken } from './bearer.ts';
import { signToken, verifyToken } from './jwt.ts';

const KEY = 'a'.repeat(32);
const NOW = Date.UTC(2025, 0, 1);

const reasonOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof UnauthorizedError);
    return err.reason;
  }
  return 'accepted';
};

describe('operator tokens', () => {
  it('round-trips tenant and user', async () => {
    const token = await signToken({ tenantId: '000000', userId: '1123598821738675201', ttlSec: 60 }, KEY, NOW);
    assert.deepEqual(await verifyToken(token, KEY, NOW + 59_000), { tenantId: '000000', userId: '1123598821738675201' });
  });

  it('rejects expired, wrongly signed, unsigned and claim-less tokens', async () => {
    const token = await signToken({ tenantId: 't', userId: 'u', ttlSec: 60 }, KEY, NOW);
    assert.equal(await reasonOf(verifyToken(token, KEY, NOW + 61_000)), 'expired');
    assert.equal(await reasonOf(verifyToken(token, 'b'.repeat(32), NOW)), 'invalid');
    assert.equal(await reasonOf(verifyToken('not.a.jwt', KEY, NOW)), 'invalid');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${token.split('.')[1] ?? ''}.`;
    assert.equal(await reasonOf(verifyToken(none, KEY, NOW)), 'invalid');
    const noTenant = await new SignJWT({ user_id: 'u' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(NOW / 1000 + 60).sign(new TextEncoder().encode(KEY));
    assert.equal(await reasonOf(verifyToken(noTenant, KEY, NOW)), 'invalid');
    const noExp = await new SignJWT({ user_id: 'u', tenant_id: 't' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(KEY));
    assert.equal(await reasonOf(verifyToken(noExp, KEY, NOW)), 'invalid');
  });

  it('accepts numeric user ids', async () => {
    const t = await new SignJWT({ user_id: 42, tenant_id: '000000' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(NOW / 1000 + 60).sign(new TextEncoder().encode(KEY));
    assert.deepEqual(await verifyToken(t, KEY, NOW), { tenantId: '000000', userId: '42' });
  });
});

describe('extractToken', () => {
  it('reads Blade-Auth with any-case bearer, a bare JWT, then Authorization', () => {
    assert.equal(extractToken({ 'blade-auth': 'bearer a.b.c' }), 'a.b.c');
    assert.equal(extractToken({ 'blade-auth': 'BEARER  a.b.c ' }), 'a.b.c');
    assert.equal(extractToken({ 'blade-auth': 'a.b.c' }), 'a.b.c');
    assert.equal(extractToken({ authorization: 'Bearer x.y.z' }), 'x.y.z');
    assert.equal(extractToken({ 'blade-auth': 'bearer a.b.c', authorization: 'Bearer x.y.z' }), 'a.b.c');
    assert.equal(extractToken({ authorization: 'x.y.z' }), null, 'Authorization needs the scheme');
    assert.equal(extractToken({ authorization: 'Basic dXNlcjpwdw==' }), null);
    assert.equal(extractToken({}), null);
  });
});
