// Digest auto-retry (RFC 3261 §22.2) against a stack that challenges with the package's DigestServer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DigestServer } from '../src/auth/digest.server.ts';
import type { SipRequest } from '../src/message/types.ts';
import type { SipStack } from '../src/ua/stack.ts';
import { startStack } from './support/stack-fixtures.ts';

const PASSWORD = '12345678';

/** The whole "REGISTER with 401 digest then 200" UAS — what a SIPp scenario needs on our side. */
async function registrar(seen: SipRequest[]): Promise<SipStack> {
  const stack = await startStack();
  const digest = new DigestServer({ realm: '3402000000', secret: 'test-secret' });
  stack.onRequest('REGISTER', (req, ctx) => {
    seen.push(req);
    const auth = req.headers.get('Authorization');
    const verdict = auth === undefined ? undefined : digest.verify(auth, { method: 'REGISTER', password: PASSWORD, now: Date.now() });
    if (verdict?.ok !== true) return ctx.reply(401, { headers: { 'WWW-Authenticate': digest.challengeHeader(Date.now()) } });
    return ctx.reply(200, { headers: { Expires: req.headers.get('Expires') ?? '3600' } });
  });
  return stack;
}

describe('digest auto-retry', () => {
  for (const transport of ['udp', 'tcp'] as const) {
    it(`REGISTER → 401 → REGISTER with Authorization → 200 (${transport})`, async () => {
      const seen: SipRequest[] = [];
      const upper = await registrar(seen);
      const lower = await startStack();
      try {
        const res = await lower.request(
          {
            method: 'REGISTER',
            uri: `sip:34020000002000000001@127.0.0.1:${upper.port}`,
            headers: { From: '<sip:34020000001110000001@3402000000>', To: '<sip:34020000001110000001@3402000000>', Expires: 3600 },
            target: { host: '127.0.0.1', port: upper.port, transport },
          },
          { auth: { username: '34020000001110000001', password: PASSWORD } },
        );
        assert.equal(res.status, 200);
        assert.equal(seen.length, 2);
        const [first, second] = seen as [SipRequest, SipRequest];
        assert.equal(first.headers.has('Authorization'), false);
        assert.match(second.headers.get('Authorization') ?? '', /^Digest username="34020000001110000001", realm="3402000000"/);
        assert.equal(first.headers.get('CSeq'), '1 REGISTER');
        assert.equal(second.headers.get('CSeq'), '2 REGISTER', 'CSeq + 1 (§22.2)');
        assert.equal(second.headers.get('Call-ID'), first.headers.get('Call-ID'));
        assert.equal(second.headers.get('From'), first.headers.get('From'), 'same From tag');
        assert.notEqual(second.headers.get('Via'), first.headers.get('Via'), 'a new transaction');
        assert.match(first.headers.get('Contact') ?? '', /^<sip:34020000001110000001@127\.0\.0\.1:\d+/);
      } finally {
        await lower.close();
        await upper.close();
      }
    });
  }

  it('retries only once: a wrong password resolves with the second 401', async () => {
    const seen: SipRequest[] = [];
    const upper = await registrar(seen);
    const lower = await startStack();
    try {
      const res = await lower.request({ method: 'REGISTER', uri: `sip:x@127.0.0.1:${upper.port}` }, { auth: { username: 'u', password: 'wrong' } });
      assert.equal(res.status, 401);
      assert.equal(seen.length, 2);
    } finally {
      await lower.close();
      await upper.close();
    }
  });

  it('without credentials the 401 is simply the final response', async () => {
    const seen: SipRequest[] = [];
    const upper = await registrar(seen);
    const lower = await startStack();
    try {
      assert.equal((await lower.request({ method: 'REGISTER', uri: `sip:x@127.0.0.1:${upper.port}` })).status, 401);
    } finally {
      await lower.close();
      await upper.close();
    }
  });

  it('INVITE challenged with 407: retried with Proxy-Authorization, and the 2xx ACK carries it too', async () => {
    const digest = new DigestServer({ realm: '3402000000', secret: 's', qop: true });
    const callee = await startStack();
    const caller = await startStack();
    try {
      const ack = new Promise<SipRequest>((resolve) => {
        callee.onRequest('INVITE', (req, ctx) => {
          const cred = req.headers.get('Proxy-Authorization');
          if (cred === undefined || !digest.verify(cred, { method: 'INVITE', password: 'pw', now: Date.now() }).ok) {
            return ctx.reply(407, { headers: { 'Proxy-Authenticate': digest.challengeHeader(Date.now()) } });
          }
          ctx.accept({ body: 'v=0\r\n' }).once('ack', resolve);
        });
      });
      const { dialog } = await caller.createUAC({ uri: `sip:dev@127.0.0.1:${callee.port}`, body: 'v=0\r\n' }, { auth: { username: 'dev', password: 'pw' } });
      const got = await ack;
      assert.match(got.headers.get('Proxy-Authorization') ?? '', /qop=auth/);
      assert.equal(got.headers.get('CSeq'), '2 ACK');
      await dialog.destroy();
    } finally {
      await caller.close();
      await callee.close();
    }
  });
});
