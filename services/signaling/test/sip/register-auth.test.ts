import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildAuthorization, DigestServer } from '@vms/sip';
import { decideRegisterAuth } from '../../src/sip/register-auth.ts';

const NOW = Date.UTC(2025, 5, 1);
const PASSWORD = '12345678';
const DEV = '34020000001320000001';
const URI = 'sip:34020000002000000001@3402000000';

const digest = new DigestServer({ realm: '3402000000', secret: 'test-secret' });

const answer = (opts: { username?: string; password?: string; server?: DigestServer; issuedAt?: number; realm?: string; subject?: string; uri?: string } = {}): string => {
  let challenge = (opts.server ?? digest).challengeHeader(opts.issuedAt ?? NOW, { subject: opts.subject ?? DEV });
  if (opts.realm !== undefined) challenge = challenge.replace('realm="3402000000"', `realm="${opts.realm}"`);
  return buildAuthorization(challenge, { username: opts.username ?? DEV, password: opts.password ?? PASSWORD, method: 'REGISTER', uri: opts.uri ?? URI });
};

const decide = (authorization: string | undefined, password: string | null = PASSWORD, o: { deviceId?: string; usernameRule?: 'device-id' | 'any' } = {}) =>
  decideRegisterAuth({ authorization, password, deviceId: o.deviceId ?? DEV, requestUri: URI, usernameRule: o.usernameRule ?? 'device-id', digest, now: NOW });

describe('REGISTER digest decision', () => {
  it('no password configured: accepted without a challenge', () => {
    assert.deepEqual(decide(undefined, null), { kind: 'accept', username: null });
  });

  it('no credentials: 401 challenge', () => {
    assert.deepEqual(decide(undefined), { kind: 'challenge', stale: false, reason: 'no credentials' });
    assert.equal(decide('  ').kind, 'challenge');
  });

  it('right password and the device id as username: accepted', () => {
    assert.deepEqual(decide(answer()), { kind: 'accept', username: DEV });
  });

  it('SEC-1: another username is refused (403) unless digest-username is any (Hikvision sends "admin", sample 03)', () => {
    assert.deepEqual(decide(answer({ username: 'admin' })), { kind: 'forbidden', reason: 'digest username is not the device id' });
    assert.deepEqual(decide(answer({ username: 'admin' }), PASSWORD, { usernameRule: 'any' }), { kind: 'accept', username: 'admin' });
  });

  it('SEC-1: an answer is accepted once; the replay gets 401 stale=true', () => {
    const auth = answer();
    assert.equal(decide(auth).kind, 'accept');
    assert.deepEqual(decide(auth), { kind: 'challenge', stale: true, reason: 'nonce already used' });
  });

  it('SEC-1: an answer to a nonce issued for another device id: a fresh 401', () => {
    assert.deepEqual(decide(answer({ subject: '34020000001320000002' })), { kind: 'challenge', stale: false, reason: 'digest nonce' });
    assert.deepEqual(decide(answer(), PASSWORD, { deviceId: '34020000001320000002', usernameRule: 'any' }), { kind: 'challenge', stale: false, reason: 'digest nonce' });
  });

  it('SEC-1: a digest uri that is not the Request-URI: 403', () => {
    assert.deepEqual(decide(answer({ uri: 'sip:34020000002000000001@10.0.0.1:5060' })), { kind: 'forbidden', reason: 'digest uri is not the Request-URI' });
  });

  it('wrong password: 403', () => {
    assert.deepEqual(decide(answer({ password: 'wrong' })), { kind: 'forbidden', reason: 'wrong password' });
  });

  it('an answer computed for another realm: 403 (a misconfigured domain does not fix itself)', () => {
    assert.deepEqual(decide(answer({ realm: 'hik' })), { kind: 'forbidden', reason: 'credentials for another realm' });
  });

  it('a nonce we did not issue (another process) or a malformed header: a fresh 401', () => {
    const other = new DigestServer({ realm: '3402000000', secret: 'previous-process' });
    assert.deepEqual(decide(answer({ server: other })), { kind: 'challenge', stale: false, reason: 'digest nonce' });
    assert.deepEqual(decide('Basic YWRtaW46MTIz'), { kind: 'challenge', stale: false, reason: 'digest malformed' });
  });

  it('an expired nonce with the right password: 401 with stale=true', () => {
    assert.deepEqual(decide(answer({ issuedAt: NOW - 10 * 60_000 })), { kind: 'challenge', stale: true, reason: 'nonce expired' });
  });
});
