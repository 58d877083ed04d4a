// Digest (RFC 2617 MD5 as GB28181 uses it): captured exchanges reproduced, server challenge/verify.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  buildAuthorization, checkDigestResponse, computeDigestResponse, DigestServer, formatDigestChallenge,
  digestUriMatches, gbRealmFromServerId, parseDigestChallenge, parseDigestCredentials, parseSipMessage, SipError, SipParseError,
} from '../src/index.ts';
import { loadSampleFile, sampleFiles } from './message-fixtures/samples.ts';
import { sameText } from '../src/auth/digest.compute.ts';

/**
 * The captures do not state the passwords. These are the implementations' well-known defaults
 * (12345678 for the simulators, SPVMN and VAG; 12345 for the 2013 Hikvision); reproducing a 128-bit
 * `response=` exactly confirms both the password and the digest arithmetic.
 */
const CAPTURED = [
  { file: '01', register: 2, challenge: 1, password: '12345678', response: '4d53b57a7cfc616dac2ba6abcbe2b5e6' },
  { file: '02', register: 2, challenge: 1, password: '12345678', response: 'e174cfb149112e9ececfb37d7084c1a2' },
  { file: '03', register: 2, challenge: 1, password: '12345', response: '907ddb1bcc25174d7de4a96c947fb066' },
  { file: '16', register: 2, challenge: 1, password: '12345678', response: 'bf237fdb4c9ff2d750410dc2bdaade46' },
  { file: '17', register: 2, challenge: 1, password: '12345678', response: '70b3441978b7e63b1573ec6cfb9721aa' },
  { file: '18', register: 2, challenge: 1, password: '12345678', response: '044e763db6fd597525e4c02d5cf66359' },
];

/** A header of the `index`-th SIP message of the sample file whose name starts with `prefix`. */
function header(prefix: string, index: number, name: string): string {
  const file = sampleFiles().find((f) => f.startsWith(prefix));
  const s = file === undefined ? undefined : loadSampleFile(file).find((m) => m.index === index);
  assert.ok(s, `${prefix}#${index}`);
  const value = parseSipMessage(s.wire).headers.get(name);
  assert.ok(value !== undefined, `${prefix}#${index} ${name}`);
  return value;
}

describe('captured REGISTER digests', () => {
  for (const c of CAPTURED) {
    it(`${c.file}: reproduces response=${c.response}`, () => {
      const cred = parseDigestCredentials(header(c.file, c.register, 'Authorization'));
      assert.equal(cred.response, c.response);
      const computed = computeDigestResponse({ ...cred, password: c.password, method: 'REGISTER' });
      assert.equal(computed, c.response);
      assert.equal(checkDigestResponse(cred, 'REGISTER', c.password), true);
      assert.equal(checkDigestResponse(cred, 'REGISTER', `${c.password}9`), false);
    });

    it(`${c.file}: the client answers the captured 401 with the same response`, () => {
      const cred = parseDigestCredentials(header(c.file, c.register, 'Authorization'));
      const value = buildAuthorization(header(c.file, c.challenge, 'WWW-Authenticate'), {
        username: cred.username, // 03: Hikvision answers as "admin", not as its device id
        password: c.password,
        method: 'REGISTER',
        uri: cred.uri,
        cnonce: cred.cnonce,
        nc: cred.nc === undefined ? undefined : parseInt(cred.nc, 16),
      });
      const ours = parseDigestCredentials(value);
      assert.deepEqual([ours.response, ours.qop, ours.nc, ours.cnonce, ours.opaque], [c.response, cred.qop, cred.nc, cred.cnonce, cred.opaque]);
    });
  }

  it('RFC 2617 §3.5 reference vector', () => {
    const response = computeDigestResponse({
      username: 'Mufasa', realm: 'testrealm@host.com', password: 'Circle Of Life', method: 'GET', uri: '/dir/index.html',
      nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093', qop: 'auth', nc: '00000001', cnonce: '0a4f113b',
    });
    assert.equal(response, '6629fae49393a05397450978507c4ef1');
  });

  it('wire values hashed as their latin1 bytes, the password as UTF-8, whether the parts are ASCII or not', () => {
    const md5 = (...parts: Buffer[]): string => createHash('md5').update(Buffer.concat(parts)).digest('hex');
    for (const [username, password] of [['34020000001320000001', '密码12'], ['cam\u00e9ra', 'p\u00e4ss'], ['admin', '12345678']] as const) {
      const ha1 = md5(Buffer.from(`${username}:3402000000:`, 'latin1'), Buffer.from(password, 'utf8'));
      const ha2 = md5(Buffer.from('REGISTER:sip:34020000002000000001@3402000000', 'latin1'));
      const expected = md5(Buffer.from(`${ha1}:0123abcd:${ha2}`, 'latin1'));
      const response = computeDigestResponse({ username, realm: '3402000000', password, method: 'REGISTER', uri: 'sip:34020000002000000001@3402000000', nonce: '0123abcd' });
      assert.equal(response, expected, username);
    }
  });

  it('the kept HA2 (issue 11) answers for its own method and uri only: uris and methods alternating, ASCII or not', () => {
    const md5 = (text: string, encoding: BufferEncoding = 'latin1'): string => createHash('md5').update(Buffer.from(text, encoding)).digest('hex');
    for (const [method, uri] of [['REGISTER', 'sip:a@3402000000'], ['REGISTER', 'sip:b@3402000000'], ['MESSAGE', 'sip:b@3402000000'], ['REGISTER', 'sip:\u00e9@3402000000'], ['REGISTER', 'sip:a@3402000000'], ['REGISTER', 'sip:a@3402000000']] as const) {
      const ha1 = md5('u:r:pw');
      const expected = md5(`${ha1}:n1:${md5(`${method}:${uri}`)}`);
      assert.equal(computeDigestResponse({ username: 'u', realm: 'r', password: 'pw', method, uri, nonce: 'n1' }), expected, `${method} ${uri}`);
    }
  });
});

describe('Digest header syntax', () => {
  it('odd whitespace, case-insensitive names, quoted and token values', () => {
    const c = parseDigestChallenge('digest  REALM = "3402000000" ,Nonce="abc",  qop="auth,auth-int" , stale=TRUE,algorithm=md5');
    assert.deepEqual([c.realm, c.nonce, c.qop, c.stale, c.algorithm], ['3402000000', 'abc', ['auth', 'auth-int'], true, 'md5']);
  });

  it('formats challenges the way GB28181 devices parse them', () => {
    assert.equal(
      formatDigestChallenge({ realm: '3402000000', nonce: 'n1', algorithm: 'MD5', qop: ['auth'], stale: true }),
      'Digest realm="3402000000", nonce="n1", algorithm=MD5, qop="auth", stale=true',
    );
  });

  for (const bad of ['Basic realm="x"', 'Digest realm="x"', 'Digest realm="x", nonce="unterminated', 'Digest realm', 'Digest realm="x" nonce="y"', '']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      assert.throws(() => parseDigestChallenge(bad), (err: unknown) => err instanceof SipParseError && err.code === 'SIP_ERR_AUTH_HEADER');
    });
  }

  it('client refuses algorithms and qops it cannot compute', () => {
    const unsupported = (err: unknown): boolean => err instanceof SipError && err.code === 'SIP_ERR_AUTH_UNSUPPORTED';
    const o = { username: 'u', password: 'p', method: 'REGISTER', uri: 'sip:x' };
    assert.throws(() => buildAuthorization('Digest realm="r", nonce="n", algorithm=SHA-256', o), unsupported);
    assert.throws(() => buildAuthorization('Digest realm="r", nonce="n", qop="auth-int"', o), unsupported);
    assert.match(buildAuthorization('Digest realm="r", nonce="n", qop="auth-int,auth"', o), /qop=auth, nc=00000001, cnonce="[0-9a-f]{16}"/);
  });

  it('GB28181 realm is the first 10 digits of the server id', () => {
    assert.equal(gbRealmFromServerId('34020000002000000001'), '3402000000');
  });
});

describe('DigestServer (stateless nonce, time passed in)', () => {
  const NOW = Date.UTC(2026, 10, 30, 6, 35, 0);
  const TTL = 60_000;
  const device = { username: '34020000001320000001', password: '12345678', method: 'REGISTER', uri: 'sip:34020000002000000001@3402000000' };
  const server = (qop = false): DigestServer => new DigestServer({ realm: '3402000000', secret: 'cluster-secret', nonceTtlMs: TTL, qop });
  const answer = (s: DigestServer, at: number, over: Partial<typeof device> = {}): string =>
    buildAuthorization(s.challengeHeader(at), { ...device, ...over });
  const verify = (s: DigestServer, auth: string, now: number, password = device.password): ReturnType<DigestServer['verify']> =>
    s.verify(auth, { method: 'REGISTER', password, now });

  it('issues 32-hex nonces, unique per challenge, MD5 without qop by default', () => {
    const s = server();
    const a = parseDigestChallenge(s.challengeHeader(NOW));
    const b = parseDigestChallenge(s.challengeHeader(NOW));
    assert.match(a.nonce, /^[0-9a-f]{32}$/);
    assert.notEqual(a.nonce, b.nonce);
    assert.deepEqual([a.realm, a.algorithm, a.qop, a.stale], ['3402000000', 'MD5', undefined, undefined]);
  });

  it('the WWW-Authenticate value is formatDigestChallenge of createChallenge, whatever the options (built around the nonce: issue 11)', () => {
    for (const opts of [{}, { qop: true }, { opaque: 'o"p\\q' }, { qop: true, opaque: 'x' }]) {
      const s = new DigestServer({ realm: '34020"00000', secret: 'k', ...opts });
      for (const stale of [false, true]) {
        const header = s.challengeHeader(NOW, { stale, subject: '34020000001320000001' });
        const nonce = parseDigestChallenge(header).nonce;
        assert.equal(header, formatDigestChallenge({ ...s.createChallenge(NOW, { stale }), nonce }));
        assert.equal(s.checkNonce(nonce, NOW, '34020000001320000001'), 'valid');
      }
    }
  });

  it('round trip without qop', () => {
    const s = server();
    assert.deepEqual(verify(s, answer(s, NOW), NOW + 2_000), { ok: true, username: device.username });
  });

  it('round trip with qop=auth; an RFC 2069 answer (no qop, as devices that ignore qop send) verifies too', () => {
    const s = server(true);
    assert.deepEqual(parseDigestChallenge(s.challengeHeader(NOW)).qop, ['auth']);
    assert.deepEqual(verify(s, answer(s, NOW), NOW + 2_000), { ok: true, username: device.username });
    const nonce = parseDigestChallenge(s.challengeHeader(NOW)).nonce;
    const noQop = buildAuthorization(`Digest realm="3402000000", nonce="${nonce}"`, device);
    assert.deepEqual(verify(s, noQop, NOW), { ok: true, username: device.username });
  });

  it('qop=auth without cnonce, with a malformed or zero nc, or another qop: refused', () => {
    const s = server(true);
    const good = answer(s, NOW);
    assert.deepEqual(verify(s, good.replace(/, cnonce="[0-9a-f]+"/, ''), NOW), { ok: false, reason: 'qop', stale: false });
    assert.deepEqual(verify(s, answer(s, NOW).replace('nc=00000001', 'nc=1'), NOW), { ok: false, reason: 'qop', stale: false });
    assert.deepEqual(verify(s, answer(s, NOW).replace('nc=00000001', 'nc=00000000'), NOW), { ok: false, reason: 'qop', stale: false });
    assert.deepEqual(verify(s, answer(s, NOW).replace('qop=auth', 'qop=auth-int'), NOW), { ok: false, reason: 'qop', stale: false });
  });

  it('SEC-1: an answer is accepted once; a replay gets stale=true (no qop: the nonce is used up)', () => {
    const s = server();
    const auth = answer(s, NOW);
    assert.equal(verify(s, auth, NOW).ok, true);
    assert.deepEqual(verify(s, auth, NOW + 1_000), { ok: false, reason: 'replay', stale: true });
    assert.deepEqual(verify(s, auth, NOW + 1_000, 'guess'), { ok: false, reason: 'response', stale: false }, 'a wrong password is never told stale');
  });

  it('SEC-1: with qop, nc must increase per nonce; the same nonce+nc is a replay', () => {
    const s = server(true);
    const challenge = s.challengeHeader(NOW);
    const withNc = (nc: number): string => buildAuthorization(challenge, { ...device, nc });
    assert.equal(verify(s, withNc(1), NOW).ok, true);
    assert.deepEqual(verify(s, withNc(1), NOW), { ok: false, reason: 'replay', stale: true });
    assert.equal(verify(s, withNc(2), NOW).ok, true);
    assert.equal(verify(s, withNc(5), NOW).ok, true);
    assert.deepEqual(verify(s, withNc(3), NOW), { ok: false, reason: 'replay', stale: true });
    const noQop = buildAuthorization(challenge.replace(', qop="auth"', ''), device);
    assert.deepEqual(verify(s, noQop, NOW), { ok: false, reason: 'replay', stale: true }, 'a used nonce cannot be reused without qop');
  });

  it('SEC-1: a nonce issued for one device id does not verify for another', () => {
    const s = server();
    const auth = buildAuthorization(s.challengeHeader(NOW, { subject: '34020000001320000001' }), device);
    const forOther = s.verify(auth, { method: 'REGISTER', password: device.password, now: NOW, subject: '34020000001320000002' });
    assert.deepEqual(forOther, { ok: false, reason: 'nonce', stale: false });
    assert.equal(s.verify(auth, { method: 'REGISTER', password: device.password, now: NOW, subject: '34020000001320000001' }).ok, true);
    assert.equal(s.checkNonce(parseDigestChallenge(auth).nonce, NOW), 'invalid', 'nor without a subject');
  });

  it('the username can be required to be a given one', () => {
    const s = server();
    const verdict = s.verify(answer(s, NOW, { username: 'admin' }), { method: 'REGISTER', password: device.password, now: NOW, username: device.username });
    assert.deepEqual(verdict, { ok: false, reason: 'username', stale: false });
  });

  it('the used-nonce ledger is bounded and forgets nonces once they expired', () => {
    const s = new DigestServer({ realm: '3402000000', secret: 'k', nonceTtlMs: TTL, maxTrackedNonces: 2 });
    const auths = [answer(s, NOW), answer(s, NOW), answer(s, NOW)];
    for (const a of auths) assert.equal(verify(s, a, NOW).ok, true);
    const replay = { ok: false, reason: 'replay', stale: true };
    assert.deepEqual(verify(s, auths[2] ?? '', NOW), replay);
    assert.deepEqual(verify(s, auths[1] ?? '', NOW), replay);
    assert.equal(verify(s, auths[0] ?? '', NOW).ok, true, 'the oldest entry made room (the only way past the bound)');
    assert.deepEqual(verify(s, auths[1] ?? '', NOW + TTL + 2_000), { ok: false, reason: 'stale', stale: true }, 'expired: refused as stale, no entry needed');
  });

  it('expired nonce with the right password: stale=true, so the device retries silently', () => {
    const s = server();
    assert.deepEqual(verify(s, answer(s, NOW), NOW + TTL + 1_000), { ok: false, reason: 'stale', stale: true });
    assert.match(s.challengeHeader(NOW + TTL + 1_000, { stale: true }), /, stale=true$/);
  });

  it('expired nonce with a wrong password is not stale', () => {
    const s = server();
    assert.deepEqual(verify(s, answer(s, NOW), NOW + TTL + 1_000, 'wrong'), { ok: false, reason: 'response', stale: false });
  });

  it('tampered nonce (timestamp pushed forward, response recomputed) is refused', () => {
    const s = server();
    const nonce = parseDigestChallenge(s.challengeHeader(NOW)).nonce;
    const forged = (parseInt(nonce.slice(0, 8), 16) + 3600).toString(16).padStart(8, '0') + nonce.slice(8);
    const auth = buildAuthorization(`Digest realm="3402000000", nonce="${forged}"`, device);
    assert.deepEqual(verify(s, auth, NOW + TTL + 1_000), { ok: false, reason: 'nonce', stale: false });
    assert.equal(s.checkNonce(forged, NOW), 'invalid');
  });

  it('nonces from another secret, from the future, or not ours at all are refused', () => {
    const s = server();
    const foreign = new DigestServer({ realm: '3402000000', secret: 'other-secret' });
    assert.deepEqual(verify(s, answer(foreign, NOW), NOW), { ok: false, reason: 'nonce', stale: false });
    assert.equal(s.checkNonce(parseDigestChallenge(s.challengeHeader(NOW + 3_600_000)).nonce, NOW), 'invalid');
    assert.equal(s.checkNonce('99a7481d6aa8bd44c3e4e13f8dc70757', NOW), 'invalid');
    assert.equal(s.checkNonce('short', NOW), 'invalid');
  });

  it('wrong password, wrong realm, bad algorithm, malformed header, uri mismatch', () => {
    const s = server();
    assert.deepEqual(verify(s, answer(s, NOW), NOW, 'guess'), { ok: false, reason: 'response', stale: false });
    const nonce = parseDigestChallenge(s.challengeHeader(NOW)).nonce;
    assert.deepEqual(verify(s, buildAuthorization(`Digest realm="3401000000", nonce="${nonce}"`, device), NOW), { ok: false, reason: 'realm', stale: false });
    const sha = answer(s, NOW).replace('algorithm=MD5', 'algorithm=SHA-256');
    assert.deepEqual(verify(s, sha, NOW), { ok: false, reason: 'algorithm', stale: false });
    assert.deepEqual(verify(s, 'Digest username="x"', NOW), { ok: false, reason: 'malformed', stale: false });
    const uriCheck = s.verify(answer(s, NOW), { method: 'REGISTER', password: device.password, now: NOW, requestUri: 'sip:3402000000' });
    assert.deepEqual(uriCheck, { ok: false, reason: 'uri', stale: false });
    const sameResource = s.verify(answer(s, NOW), { method: 'REGISTER', password: device.password, now: NOW, requestUri: 'SIP:34020000002000000001@3402000000' });
    assert.equal(sameResource.ok, true, 'RFC 3261 §19.1.4: scheme and host compare case-insensitively');
    const truncated = answer(s, NOW).replace(/response="([0-9a-f]{31})[0-9a-f]"/, 'response="$1"');
    assert.deepEqual(verify(s, truncated, NOW), { ok: false, reason: 'response', stale: false });
  });

  it('Hikvision-style username "admin" is verified against the device password the caller looked up', () => {
    const s = server();
    assert.deepEqual(verify(s, answer(s, NOW, { username: 'admin' }), NOW), { ok: true, username: 'admin' });
  });
});

describe('digest uri against the Request-URI (RFC 2617 §3.2.2.5, RFC 3261 §19.1.4)', () => {
  const cases: [string, string, boolean][] = [
    ['sip:127.0.0.1:5060', 'sip:127.0.0.1:5060', true], // sample 01
    ['sip:3402000000', 'sip:3402000000', true], // sample 02
    ['sip:34020000002000000001@3402000000', 'sip:34020000002000000001@3402000000', true],
    ['sip:34020000002000000001@EXAMPLE.com', 'sip:34020000002000000001@example.com', true],
    ['sip:34020000002000000001@3402000000;transport=UDP', 'sip:34020000002000000001@3402000000;transport=udp', true],
    ['sip:34020000002000000001@3402000000;foo=1', 'sip:34020000002000000001@3402000000', true],
    ['sip:34020000002000000001@3402000000', 'sip:34020000002000000002@3402000000', false],
    ['sip:34020000002000000001@3402000000', 'sip:34020000002000000001@3402000000:5060', false],
    ['sip:34020000002000000001@3402000000;transport=tcp', 'sip:34020000002000000001@3402000000', false],
    ['sip:127.0.0.1:5060', 'sip:127.0.0.1:5061', false],
    ['sip:3402000000', 'sips:3402000000', false],
    ['not a uri', 'sip:3402000000', false],
  ];
  for (const [digestUri, requestUri, same] of cases) {
    it(`${digestUri} vs ${requestUri}: ${same ? 'same' : 'different'}`, () => {
      assert.equal(digestUriMatches(digestUri, requestUri), same);
    });
  }
});

describe('sameText (MAC and response comparison without Buffers: issue 11)', () => {
  it('equal only for the same units, whatever the length or where they differ', () => {
    assert.equal(sameText('', ''), true);
    assert.equal(sameText('0123456789abcdef', '0123456789abcdef'), true);
    assert.equal(sameText('0123456789abcdef', '0123456789abcdeF'), false);
    assert.equal(sameText('x123456789abcdef', '0123456789abcdef'), false);
    assert.equal(sameText('abc', 'abcd'), false);
    // a unit above 255 is not read as its low byte (as a latin1 Buffer would)
    assert.equal(sameText('\u0161', 'a'), false);
  });
});
