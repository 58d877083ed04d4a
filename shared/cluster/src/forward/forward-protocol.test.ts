import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createForwardSecretCheck, forwardSecretMatches } from './forward-protocol.ts';

describe('forward secret check (ROUTE-3, ROUTE-6)', () => {
  it('matches only the exact configured secret', () => {
    assert.equal(forwardSecretMatches('a8f3k29slx7q', 'a8f3k29slx7q'), true);
    assert.equal(forwardSecretMatches('a8f3k29slx7Q', 'a8f3k29slx7q'), false);
    assert.equal(forwardSecretMatches('a8f3k29slx7', 'a8f3k29slx7q'), false, 'a prefix is not enough');
    assert.equal(forwardSecretMatches('a8f3k29slx7qq', 'a8f3k29slx7q'), false);
  });

  it('no secret on either side never matches: the channel is closed', () => {
    assert.equal(forwardSecretMatches(undefined, 'x'), false);
    assert.equal(forwardSecretMatches('', 'x'), false);
    assert.equal(forwardSecretMatches('x', null), false);
    assert.equal(forwardSecretMatches('', ''), false);
    assert.equal(forwardSecretMatches(undefined, null), false);
  });

  it('the precomputed check answers exactly as forwardSecretMatches', () => {
    const configured = ['a8f3k29slx7q', '', null] as const;
    const presented = [undefined, '', 'a8f3k29slx7q', 'a8f3k29slx7Q', 'a8f3k29slx7', 'a8f3k29slx7qq', 'x'];
    for (const c of configured) {
      const check = createForwardSecretCheck(c);
      for (const p of presented) assert.equal(check(p), forwardSecretMatches(p, c), `${String(p)} against ${String(c)}`);
    }
  });
});
