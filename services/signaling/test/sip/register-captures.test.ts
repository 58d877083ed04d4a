// SPEC SEC-1 / #16 item 14: the two digest forms real devices answer with, from the repository's
// captures (@vms/fixtures, provenance at the top of each file):
//   01 (Ellean simulator): no qop — RFC 2069 style, the simulator ignores qop even when offered;
//   02 (sbgb28181): qop=auth with nc and cnonce, Request-URI and digest uri `sip:<domain>`.
// The captured nonces are another platform's, so each exchange is replayed against ours: our challenge
// (nonce issued for the From device id), answered exactly the way the device answered (username, uri,
// algorithm, qop, nc, cnonce as captured; the response recomputed with the password the captured
// response proves), checked by the REGISTER decision with the captured Request-URI.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { computeDigestResponse, DigestServer, formatDigestCredentials, getFrom, parseDigestChallenge, parseDigestCredentials, parseSipMessage, type SipMessage, type SipRequest } from '@vms/sip';
import { GB28181_SAMPLES_DIR } from '@vms/fixtures';
import { decideRegisterAuth } from '../../src/sip/register-auth.ts';

const PASSWORD = '12345678'; // reproduces both captured responses (first test)
const NOW = Date.UTC(2026, 10, 30, 6, 35, 6);

/** The SIP messages of a capture file, in order (headers rebuilt with CRLF; these have no bodies). */
function messages(file: string): SipMessage[] {
  const text = readFileSync(join(GB28181_SAMPLES_DIR, file), 'utf8');
  const blocks = text.split(/^===== .*$/m).slice(1);
  return blocks.map((b) => parseSipMessage(Buffer.from(`${b.trim().split('\n').join('\r\n')}\r\n\r\n`, 'latin1')));
}

const CAPTURES = [
  { name: '01 Ellean, no qop', file: '01-register-401-digest-md5-ellean.txt' },
  { name: '02 sbgb28181, qop=auth', file: '02-register-401-digest-qop-auth-sbgb28181.txt' },
];

for (const c of CAPTURES) {
  describe(`captured REGISTER digest: ${c.name}`, () => {
    const [first, challenge, reply] = messages(c.file);
    assert.ok(first && challenge && reply?.type === 'request');
    const answered: SipRequest = reply;
    const captured = parseDigestCredentials(answered.headers.get('Authorization') ?? '');
    const deviceId = getFrom(answered).uri.user ?? '';
    const realm = parseDigestChallenge(challenge.headers.get('WWW-Authenticate') ?? '').realm;

    /** The device's answer to `header` (our challenge), in the captured shape. */
    const deviceAnswer = (header: string, over: { nc?: string } = {}): string => {
      const ours = parseDigestChallenge(header);
      const fields = { ...captured, nonce: ours.nonce, nc: over.nc ?? captured.nc };
      return formatDigestCredentials({ ...fields, response: computeDigestResponse({ ...fields, password: PASSWORD, method: 'REGISTER' }) });
    };
    const decide = (digest: DigestServer, authorization: string, id = deviceId) =>
      decideRegisterAuth({ authorization, password: PASSWORD, deviceId: id, requestUri: answered.rawUri, usernameRule: 'device-id', digest, now: NOW });

    it('the captured response is reproduced with the password (the arithmetic and the password are right)', () => {
      assert.equal(computeDigestResponse({ ...captured, password: PASSWORD, method: 'REGISTER' }), captured.response);
      assert.equal(captured.uri, answered.rawUri, 'the device digests its Request-URI');
      assert.equal(captured.username, deviceId);
    });

    for (const qop of ['auth', 'none'] as const) {
      it(`verifies against our challenge with digest-qop ${qop}; the same answer again is refused as stale`, () => {
        const digest = new DigestServer({ realm, secret: 'test', qop: qop === 'auth' });
        const header = digest.challengeHeader(NOW, { subject: deviceId });
        assert.equal(parseDigestChallenge(header).qop?.[0], qop === 'auth' ? 'auth' : undefined);
        const auth = deviceAnswer(header);
        assert.deepEqual(decide(digest, auth), { kind: 'accept', username: deviceId });
        assert.deepEqual(decide(digest, auth), { kind: 'challenge', stale: true, reason: 'nonce already used' });
      });
    }

    it('the same answer for another device id, or from a server that did not issue the nonce: a fresh 401', () => {
      const digest = new DigestServer({ realm, secret: 'a', qop: true });
      const auth = deviceAnswer(digest.challengeHeader(NOW, { subject: deviceId }));
      const other = `${deviceId.slice(0, -1)}${deviceId.endsWith('9') ? '8' : '9'}`;
      assert.deepEqual(decide(digest, auth, other), { kind: 'challenge', stale: false, reason: 'digest nonce' });
      assert.deepEqual(decide(new DigestServer({ realm, secret: 'b', qop: true }), auth), { kind: 'challenge', stale: false, reason: 'digest nonce' });
      assert.deepEqual(decide(digest, auth), { kind: 'accept', username: deviceId }, 'the refusals used nothing up');
    });

    if (captured.qop !== undefined) {
      it('qop=auth: a later request on the same nonce needs a higher nc', () => {
        const digest = new DigestServer({ realm, secret: 'test', qop: true });
        const header = digest.challengeHeader(NOW, { subject: deviceId });
        assert.equal(decide(digest, deviceAnswer(header, { nc: '00000002' })).kind, 'accept');
        assert.deepEqual(decide(digest, deviceAnswer(header, { nc: '00000001' })), { kind: 'challenge', stale: true, reason: 'nonce already used' });
        assert.equal(decide(digest, deviceAnswer(header, { nc: '00000003' })).kind, 'accept');
      });
    }
  });
}
