// The JavaScript MD5 of the digest check (src/auth/md5.ts, issue 11) against node:crypto's.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { md5HexOfAscii } from '../src/auth/md5.ts';

const md5 = (text: string): string => createHash('md5').update(text, 'latin1').digest('hex');

describe('md5HexOfAscii', () => {
  it('RFC 1321 test suite', () => {
    assert.equal(md5HexOfAscii(''), 'd41d8cd98f00b204e9800998ecf8427e');
    assert.equal(md5HexOfAscii('a'), '0cc175b9c0f1b6a831c399e269772661');
    assert.equal(md5HexOfAscii('abc'), '900150983cd24fb0d6963f7d28e17f72');
    assert.equal(md5HexOfAscii('message digest'), 'f96b697d7cb7938d525a2f31aaf161d0');
    assert.equal(md5HexOfAscii('12345678901234567890123456789012345678901234567890123456789012345678901234567890'), '57edf4a22be3c955ac49da2e2107b67a');
  });

  it('equals node:crypto on every length across the block boundaries and on random ASCII texts', () => {
    let seed = 0x9e3779b9;
    const rand = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const text = (n: number): string => Array.from({ length: n }, () => String.fromCharCode(rand(128))).join('');
    for (let n = 0; n <= 300; n++) {
      const t = text(n);
      assert.equal(md5HexOfAscii(t), md5(t), `length ${n}`);
    }
    // a long one after short ones (the word buffer grows) and short ones after it (stale words cleared)
    for (const n of [5000, 3, 64, 1000, 0]) {
      const t = text(n);
      assert.equal(md5HexOfAscii(t), md5(t), `length ${n}`);
    }
  });
});
