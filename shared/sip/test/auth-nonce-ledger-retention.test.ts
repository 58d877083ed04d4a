// The used-nonce ledger keeps each nonce for its lifetime (minutes): the key must not be a V8 slice of
// the REGISTER it was parsed from, or every entry keeps its whole datagram's text alive (issue 11: a
// storm's worth of messages in old space). Checked in a heap snapshot, as register-device-id.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { NonceLedger } from '../src/auth/nonce-ledger.ts';
import { parseDigestCredentials } from '../src/index.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapStringsWith(match: (s: string) => boolean): number {
  const file = writeHeapSnapshot(join(mkdtempSync(join(tmpdir(), 'nonce-ledger-')), 'h.heapsnapshot'));
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { strings: string[] }).strings.filter(match).length;
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

describe('NonceLedger', () => {
  it('keeps a nonce that does not keep the Authorization text it was parsed from alive', async () => {
    const marker = randomBytes(8).toString('hex');
    const ledger = new NonceLedger();
    const nonce = '0123456789abcdef0123456789abcdef';
    ((): void => {
      // assembled from bytes: no string of the test holds the text; the one in the heap was made here
      const value = Buffer.concat([Buffer.from(`Digest username="34020000001320000001", realm="3402000000", nonce="${nonce}", uri="sip:x", response="`), Buffer.from(marker), Buffer.from('"')]).toString('latin1');
      const cred = parseDigestCredentials(value);
      assert.ok(ledger.use(cred.nonce, 1, Date.now() + 60_000, Date.now()));
    })();
    assert.ok(/\d/.test('0')); // RegExp.lastMatch: see register-device-id.test.ts
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    assert.equal(ledger.use(nonce, 1, Date.now() + 60_000, Date.now()), false, 'the nonce is recorded');
    assert.equal(heapStringsWith((s) => s.includes(marker) && s.includes('Digest username')), 0);
  });
});
