// The device id a REGISTER names is kept as long as the device stays registered (sessions, store
// caches, ownership): it must not be a V8 slice of the message text, or every registered device keeps
// its whole REGISTER alive (issue 11, memory per registered device). Checked in a heap snapshot.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseSipMessage, type SipRequest } from '@vms/sip';
import { registeringDevice } from './register.handler.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapStringsWith(match: (s: string) => boolean): number {
  const file = writeHeapSnapshot(join(mkdtempSync(join(tmpdir(), 'register-id-')), 'h.heapsnapshot'));
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { strings: string[] }).strings.filter(match).length;
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

describe('registeringDevice', () => {
  it('returns a device id that does not keep the REGISTER text alive', async () => {
    // assembled from bytes: no string of the test holds the text; one in the heap was made by the parser
    const marker = randomBytes(8).toString('hex');
    const ids = ((): string[] => {
      const head =
        'REGISTER sip:34020000002000000001@3402000000 SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.0.9:5060;branch=z9hG4bK-id-1\r\n' +
        'From: <sip:34020000001320000001@3402000000>;tag=r1\r\nTo: <sip:34020000001320000001@3402000000>\r\n' +
        'Call-ID: id-1@10.0.0.9\r\nCSeq: 1 REGISTER\r\nMax-Forwards: 70\r\nUser-Agent: ';
      const req = parseSipMessage(Buffer.concat([Buffer.from(head), Buffer.from(marker), Buffer.from('\r\nContent-Length: 0\r\n\r\n')])) as SipRequest;
      return [registeringDevice(req)];
    })();
    // V8 keeps the subject of the last RegExp match (RegExp.lastMatch): one string process-wide, replaced
    // by the next match; a match here keeps it from counting as the device id's doing.
    assert.ok(/\d/.test('0'));
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    assert.equal(ids[0], '34020000001320000001');
    assert.equal(heapStringsWith((s) => s.includes(marker) && s.includes('CSeq: 1 REGISTER')), 0);
  });
});
