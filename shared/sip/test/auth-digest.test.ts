// Digest (RFC 2617 MD5 as GB28181 uses it): captured exchanges reproduced, server challenge/verify.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildAuthorization, checkDigestResponse, computeDigestResponse, DigestServer, formatDigestChallenge,
  gbRealmFromServerId, parseDigestChallenge, parseDigestCredentials, parseSipMessage, SipError, SipParseError,
} from '../src/index.ts';
import { loadSampleFile, sampleFiles } from './message-fixtures/samples.ts';

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

  it('round trip without qop', () => {
    const s = server();
    assert.deepEqual(verify(s, answer(s, NOW), NOW + 2_000), { ok: true, username: device.username });
  });

  it('round trip with qop=auth; an answer without qop is then refused', () => {
    const s = server(true);
    assert.deepEqual(parseDigestChallenge(s.challengeHeader(NOW)).qop, ['auth']);
    assert.deepEqual(verify(s, answer(s, NOW), NOW + 2_000), { ok: true, username: device.username });
    const nonce = parseDigestChallenge(s.challengeHeader(NOW)).nonce;
    const noQop = buildAuthorization(`Digest realm="3402000000", nonce="${nonce}"`, device);
    assert.deepEqual(verify(s, noQop, NOW), { ok: false, reason: 'qop', stale: false });
  });

  it('any other instance holding the same secret accepts the nonce', () => {
    const other = server();
    assert.equal(verify(other, answer(server(), NOW), NOW).ok, true);
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
    const truncated = answer(s, NOW).replace(/response="([0-9a-f]{31})[0-9a-f]"/, 'response="$1"');
    assert.deepEqual(verify(s, truncated, NOW), { ok: false, reason: 'response', stale: false });
  });

  it('Hikvision-style username "admin" is verified against the device password the caller looked up', () => {
    const s = server();
    assert.deepEqual(verify(s, answer(s, NOW, { username: 'admin' }), NOW), { ok: true, username: 'admin' });
  });
});
