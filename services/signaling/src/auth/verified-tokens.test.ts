import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UnauthorizedError } from '../errors/catalog.ts';
import { signToken, verifyToken } from './jwt.ts';
import { rememberVerifiedTokens, type TokenVerifier } from './verified-tokens.ts';

const KEY = 'verified-tokens-test-key-0123456789abcd';
const NOW = Date.UTC(2025, 5, 1);

function counting(): { verify: TokenVerifier; calls: () => number } {
  let n = 0;
  return {
    verify: async (t, k, now) => {
      n++;
      return verifyToken(t, k, now);
    },
    calls: () => n,
  };
}

describe('remembered token verification', () => {
  it('verifies a token once, then answers from memory until it expires', async () => {
    const c = counting();
    const { verify } = rememberVerifiedTokens(c.verify);
    const token = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, KEY, NOW);
    for (let i = 0; i < 5; i++) assert.deepEqual(await verify(token, KEY, NOW + i), { tenantId: '000000', userId: 'u', role: 'tenant' });
    assert.equal(c.calls(), 1);
    await assert.rejects(verify(token, KEY, NOW + 60_000), (err: unknown) => err instanceof UnauthorizedError && err.reason === 'expired');
    assert.equal(c.calls(), 2);
  });

  it('never remembers a failure, and a token is only good with the key it verified with', async () => {
    const c = counting();
    const { verify } = rememberVerifiedTokens(c.verify);
    const token = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, KEY, NOW);
    const forged = `${token.slice(0, -2)}AA`;
    await assert.rejects(verify(forged, KEY, NOW), UnauthorizedError);
    await assert.rejects(verify(forged, KEY, NOW), UnauthorizedError);
    assert.equal(c.calls(), 2);
    await verify(token, KEY, NOW);
    await assert.rejects(verify(token, 'another-key-0123456789abcdef0123456789', NOW), UnauthorizedError);
  });

  it('stays bounded, dropping the least recently used token', async () => {
    const c = counting();
    const { verify } = rememberVerifiedTokens(c.verify, 2);
    const t = await Promise.all(['a', 'b', 'c'].map((u) => signToken({ tenantId: '000000', userId: u, ttlSec: 60 }, KEY, NOW)));
    await verify(t[0] as string, KEY, NOW);
    await verify(t[1] as string, KEY, NOW);
    await verify(t[0] as string, KEY, NOW); // a is now the most recent
    await verify(t[2] as string, KEY, NOW); // evicts b
    assert.equal(c.calls(), 3);
    await verify(t[0] as string, KEY, NOW);
    assert.equal(c.calls(), 3);
    await verify(t[1] as string, KEY, NOW);
    assert.equal(c.calls(), 4);
  });

  it('peek answers only for a token that verified, with its key, before its expiry; it never verifies', async () => {
    const c = counting();
    const tokens = rememberVerifiedTokens(c.verify);
    const token = await signToken({ tenantId: '000000', userId: 'u', ttlSec: 60 }, KEY, NOW);
    assert.equal(tokens.peek(token, KEY, NOW), undefined, 'not verified yet');
    const forged = `${token.slice(0, -2)}AA`;
    await assert.rejects(tokens.verify(forged, KEY, NOW), UnauthorizedError);
    assert.equal(tokens.peek(forged, KEY, NOW), undefined, 'a failure is never remembered');
    await tokens.verify(token, KEY, NOW);
    assert.deepEqual(tokens.peek(token, KEY, NOW + 59_999), { tenantId: '000000', userId: 'u', role: 'tenant' });
    assert.equal(tokens.peek(token, 'another-key-0123456789abcdef0123456789', NOW), undefined);
    assert.equal(tokens.peek(token, KEY, NOW + 60_000), undefined, 'expired');
    assert.equal(c.calls(), 2, 'peek never called the verifier');
  });
});
