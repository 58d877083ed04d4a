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
    assert.deepEqual(await verifyToken(token, KEY, NOW + 59_000), { tenantId: '000000', userId: '1123598821738675201', role: 'tenant' });
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
    assert.deepEqual(await verifyToken(t, KEY, NOW), { tenantId: '000000', userId: '42', role: 'tenant' });
  });
});

describe('token claims (SPEC §12, SEC-2)', () => {
  const sign = (claims: Record<string, unknown>): Promise<string> =>
    new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(NOW / 1000 + 60).sign(new TextEncoder().encode(KEY));

  it('refuses malformed tenant and user ids', async () => {
    for (const tenant_id of ['t'.repeat(5000), 't'.repeat(13), '', 'a b', "0' OR 1=1", 'ten/ant', 12.5, true, null, ['000000']]) {
      assert.equal(await reasonOf(verifyToken(await sign({ user_id: 'u', tenant_id }), KEY, NOW)), 'invalid', JSON.stringify(tenant_id));
    }
    for (const user_id of ['u'.repeat(65), '', 'a b', 'line\nbreak', 1.5, Number.MAX_SAFE_INTEGER + 2, {}]) {
      assert.equal(await reasonOf(verifyToken(await sign({ user_id, tenant_id: '000000' }), KEY, NOW)), 'invalid', JSON.stringify(user_id));
    }
    assert.deepEqual(await verifyToken(await sign({ user_id: 'u'.repeat(64), tenant_id: 'Ab_-09'.padEnd(12, 'x') }), KEY, NOW), {
      tenantId: 'Ab_-09xxxxxx', userId: 'u'.repeat(64), role: 'tenant',
    });
  });

  it('reads the role claim: absent = tenant, operator explicit, anything else refused', async () => {
    assert.equal((await verifyToken(await sign({ user_id: 'u', tenant_id: '000000' }), KEY, NOW)).role, 'tenant', 'tenant 000000 is not implicitly operator');
    assert.equal((await verifyToken(await sign({ user_id: 'u', tenant_id: '000000', role: 'tenant' }), KEY, NOW)).role, 'tenant');
    assert.equal((await verifyToken(await sign({ user_id: 'u', tenant_id: '100001', role: 'operator' }), KEY, NOW)).role, 'operator');
    for (const role of ['admin', 'Operator', '', 1, ['operator'], null]) {
      assert.equal(await reasonOf(verifyToken(await sign({ user_id: 'u', tenant_id: '000000', role }), KEY, NOW)), 'invalid', JSON.stringify(role));
    }
    const token = await signToken({ tenantId: '000000', userId: 'ops', ttlSec: 60, role: 'operator' }, KEY, NOW);
    assert.equal((await verifyToken(token, KEY, NOW)).role, 'operator');
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
