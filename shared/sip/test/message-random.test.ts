// Tags and branches come from a pooled CSPRNG buffer: still the right shape and never repeated.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BRANCH_MAGIC_COOKIE, generateBranch, generateTag } from '../src/message/build.ts';

describe('pooled random identifiers', () => {
  it('tags are 16 hex digits (RFC 3261 §19.3), branches cookie + 20 hex (§8.1.1.7), none repeated across pool refills', () => {
    const tags = new Set<string>();
    const branches = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const tag = generateTag();
      const branch = generateBranch();
      assert.match(tag, /^[0-9a-f]{16}$/);
      assert.ok(branch.startsWith(BRANCH_MAGIC_COOKIE));
      assert.match(branch.slice(BRANCH_MAGIC_COOKIE.length), /^[0-9a-f]{20}$/);
      tags.add(tag);
      branches.add(branch);
    }
    assert.equal(tags.size, 5000);
    assert.equal(branches.size, 5000);
  });
});
