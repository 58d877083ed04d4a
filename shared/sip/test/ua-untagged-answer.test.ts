// Capture 05 (Ellean device): the 200 OK to the platform's MESSAGE carries no To-tag (RFC 3261
// §8.2.6.2 wants one). A non-INVITE client transaction is matched by the Via branch and CSeq method
// (§17.1.3), so the query must complete on it. The peer here answers with the captured 200's bytes,
// only Via/Call-ID/CSeq/From copied from our request as any device does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getTo } from '../src/index.ts';
import { loadAllSamples } from './message-fixtures/samples.ts';
import { rawUdp, startStack } from './support/stack-fixtures.ts';

const captured = loadAllSamples().find((s) => s.file.startsWith('05') && s.index === 1);

describe('a 200 without To-tag (capture 05) completes a MESSAGE', () => {
  it('resolves the request with the untagged 200', async () => {
    assert.ok(captured);
    assert.equal(captured.wire.toString('latin1').match(/^To: .*$/m)?.[0].includes('tag='), false, 'the capture has no To-tag');
    const device = await rawUdp();
    const platform = await startStack();
    try {
      const pending = platform.request({ method: 'MESSAGE', uri: `sip:34020000001320000001@127.0.0.1:${device.port}`, body: '<Query/>', contentType: 'Application/MANSCDP+xml' });
      const req = await device.next();
      const copy = (name: string): string => req.match(new RegExp(`^${name}: .*$`, 'm'))?.[0] ?? '';
      // the captured answer with our request's transaction and dialog identifiers
      const answer = captured.wire
        .toString('latin1')
        .replace(/^Via: .*$/m, copy('Via'))
        .replace(/^From: .*$/m, copy('From'))
        .replace(/^Call-ID: .*$/m, copy('Call-ID'))
        .replace(/^CSeq: .*$/m, copy('CSeq'));
      await device.send(answer, platform.port);
      const res = await pending;
      assert.equal(res.status, 200);
      assert.equal(getTo(res).params.get('tag'), undefined);
    } finally {
      device.close();
      await platform.close();
    }
  });
});
