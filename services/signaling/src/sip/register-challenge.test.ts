// The stateless first leg (register-challenge.ts) and its place in the admission (register-admission.ts):
// which REGISTERs get the 401 without a transaction, which go on to the ordinary handler, and that
// shedding still comes first. Pure: a StatelessRequest view, a fixed clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildAuthorization, DigestServer, type Flow, type StatelessAnswer, type StatelessRequest } from '@vms/sip';
import { pino } from 'pino';
import { FakeClock } from '../core/clock.ts';
import { createDeviceFlows } from './device-flows.ts';
import { answersChallenge, createRegisterAdmission } from './register-admission.ts';
import { decideRegisterAuth } from './register-auth.ts';
import { createStatelessChallenge, deltaSeconds } from './register-challenge.ts';
import { CALM_ARRIVALS } from '@vms/sip';

const DEV = '34020000001320000001';
const PASSWORD = '12345678';
const URI = 'sip:34020000002000000001@3402000000';
const NOW = Date.UTC(2025, 5, 1);

/** A REGISTER as a stateless handler sees it; `headers` are the ones header()/hasHeader() find. */
function view(o: { from?: string; headers?: Record<string, string> } = {}): StatelessRequest {
  const headers = new Map(Object.entries(o.headers ?? { Expires: '3600' }).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    method: 'REGISTER',
    body: Buffer.alloc(0),
    callId: 'c1@dev',
    from: o.from ?? `<sip:${DEV}@3402000000>;tag=t1`,
    contentType: undefined,
    topVia: 'SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1',
    text: '',
    bodyStart: 0,
    hasHeader: (name) => headers.has(name.toLowerCase()),
    header: (name) => headers.get(name.toLowerCase()),
  };
}

const digest = new DigestServer({ realm: '3402000000', secret: 'test-secret' });
const clock = new FakeClock(NOW);
const challenge = createStatelessChallenge({ password: PASSWORD, registerExpiresMin: 60, digest, clock });

const wwwAuthenticate = (answer: StatelessAnswer | undefined): string => {
  assert.equal(answer?.status, 401);
  const h = answer.headers.find(([name]) => name === 'WWW-Authenticate');
  assert.ok(h !== undefined, 'a WWW-Authenticate header');
  return h[1];
};

describe('stateless REGISTER challenge (issue 11)', () => {
  it('a first leg gets 401 with a nonce issued for the From device: its answer is accepted for that device only', () => {
    const header = wwwAuthenticate(challenge(view()));
    const auth = buildAuthorization(header, { username: DEV, password: PASSWORD, method: 'REGISTER', uri: URI });
    const decide = (deviceId: string) =>
      decideRegisterAuth({ authorization: auth, password: PASSWORD, deviceId, requestUri: URI, usernameRule: 'any', digest, now: NOW });
    assert.deepEqual(decide('34020000001320000002'), { kind: 'challenge', stale: false, reason: 'digest nonce' });
    assert.deepEqual(decide(DEV), { kind: 'accept', username: DEV });
  });

  it('the second leg, a blank Authorization aside, goes on to the ordinary handler', () => {
    assert.equal(challenge(view({ headers: { Expires: '3600', Authorization: 'Digest username="x"' } })), undefined);
    wwwAuthenticate(challenge(view({ headers: { Expires: '3600', Authorization: '' } })));
  });

  it('unregister without credentials (Expires: 0) is challenged too, as by the ordinary handler', () => {
    wwwAuthenticate(challenge(view({ headers: { Expires: '0' } })));
  });

  it('what the ordinary handler answers otherwise goes on to it: 423, 400, a lifetime in Contact', () => {
    assert.equal(challenge(view({ headers: { Expires: '59' } })), undefined, 'under register-expires-min: 423 there, before any challenge');
    for (const bad of ['', 'abc', '-1', '1 2', '4294967296', '12345678901']) {
      assert.equal(challenge(view({ headers: { Expires: bad } })), undefined, `Expires: ${bad}`);
    }
    assert.equal(challenge(view({ headers: {} })), undefined, 'no Expires: the lifetime may be a Contact parameter');
    assert.equal(challenge(view({ from: '<sip:admin@3402000000>;tag=1' })), undefined, 'not a GB id: 400 there');
    assert.equal(challenge(view({ from: `<sip:${DEV}@3402000000;tag=1` })), undefined, 'a From that does not parse: 400 there');
    assert.equal(challenge(view({ from: `"sip:${DEV}@x" <sip:admin@3402000000>;tag=1` })), undefined, 'the From URI decides, not its display name');
  });

  it('no platform password: nothing is answered here (a device password needs a store read)', () => {
    const open = createStatelessChallenge({ password: null, registerExpiresMin: 60, digest, clock });
    assert.equal(open(view()), undefined);
  });

  it('deltaSeconds reads what getExpires accepts', () => {
    assert.deepEqual(['0', '3600', '0003600', '4294967295', '4294967296', '', 'x1', '1.5'].map(deltaSeconds), [0, 3600, 3600, 4294967295, null, null, null, null]);
  });
});

describe('REGISTER admission: shedding before the challenge', () => {
  it('while shedding a new device gets 503 + Retry-After; a registered device and the answer to a challenge are not shed', () => {
    const flows = createDeviceFlows();
    const admission = createRegisterAdmission({ flows, log: pino({ level: 'silent' }), sipPort: 0, random: () => 0, challenge });
    try {
      const flow: Flow = { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 5070, localAddress: '127.0.0.1', localPort: 5060 };
      wwwAuthenticate(admission.stateless(view(), flow) as StatelessAnswer);
      admission.shedder.observe({ queueBytes: 1 << 30, utilization: 1, pending: 0, arrivals: 1 });
      assert.ok(admission.shedder.fraction > 0);
      const shed = admission.stateless(view(), flow) as StatelessAnswer;
      assert.equal(shed.status, 503);
      assert.deepEqual(shed.headers, [['Retry-After', '5']]);
      assert.equal(admission.stateless(view({ headers: { Expires: '3600', Authorization: 'Digest username="x"' } }), flow), undefined);
      flows.register({ deviceId: DEV, flow, charset: 'GB2312', gbVersion: '2016', registeredAt: NOW, expiresAt: NOW + 3_600_000 });
      wwwAuthenticate(admission.stateless(view(), flow) as StatelessAnswer); // its refresh keeps it online: challenged, not shed
    } finally {
      admission.close();
    }
  });
});

describe('REGISTER admission: the receive-queue read is cost-bounded (QUEUE_READ_BUDGET)', () => {
  it('a slow read is not repeated every window while registrations arrive: its share of the loop stays near the budget', async () => {
    let reads = 0;
    const slowRead = (): number => {
      reads++;
      const until = performance.now() + 20; // a 20 ms read of a crowded /proc/net/udp
      while (performance.now() < until);
      return 0;
    };
    const admission = createRegisterAdmission({ flows: createDeviceFlows(), log: pino({ level: 'silent' }), sipPort: 5060, readReceiveQueue: slowRead });
    const started = performance.now();
    const flow: Flow = { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 5070, localAddress: '127.0.0.1', localPort: 5060 };
    while (performance.now() - started < 1600) {
      for (let i = 0; i < CALM_ARRIVALS + 1; i++) admission.stateless(view(), flow); // not a calm window: the queue is wanted
      await new Promise((r) => setTimeout(r, 25));
    }
    admission.close();
    // 16 windows of 100 ms; at 20 ms a read, the budget allows one a second: 1-2 reads, not 16
    assert.ok(reads >= 1 && reads <= 3, `${reads} reads in 1.6 s`);
    assert.equal(admission.queueReads, reads);
  });
});

describe('the second leg on the ordinary path unpeeked (StatelessOptions.ordinary, issue 11)', () => {
  const datagram = (head: string[], body = ''): Buffer =>
    Buffer.from([`REGISTER ${URI} SIP/2.0`, 'Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1', ...head, `Content-Length: ${body.length}`, '', body].join('\r\n'), 'latin1');

  it('an Authorization line in the header section: the ordinary handler takes it', () => {
    assert.equal(answersChallenge(datagram([`From: <sip:${DEV}@3402000000>;tag=t1`, 'Authorization: Digest username="x"', 'Expires: 3600'])), true);
  });

  it('none, one only in the body, or spelled otherwise: peeked as before (the shortcut reads it there)', () => {
    assert.equal(answersChallenge(datagram([`From: <sip:${DEV}@3402000000>;tag=t1`, 'Expires: 3600'])), false);
    assert.equal(answersChallenge(datagram(['Expires: 3600'], '\r\nAuthorization: Digest username="x"')), false);
    assert.equal(answersChallenge(datagram(['authorization: Digest username="x"'])), false);
  });

  it('what the ordinary handler is spared: the admission would pass it on too, shedding or not', () => {
    const flows = createDeviceFlows();
    const admission = createRegisterAdmission({ flows, log: pino({ level: 'silent' }), sipPort: 0, challenge, readReceiveQueue: () => null });
    try {
      for (let i = 0; i < 40; i++) admission.shedder.observe({ queueBytes: 10 * 1024 * 1024, utilization: 1, pending: 0, arrivals: 100 });
      assert.ok(admission.shedder.fraction > 0.9, 'shedding');
      const answered = view({ headers: { Expires: '3600', Authorization: 'Digest username="x"' } });
      for (let i = 0; i < 20; i++) assert.equal(admission.stateless(answered, {} as Flow), undefined);
      assert.equal(admission.ordinary, answersChallenge);
    } finally {
      admission.close();
    }
  });
});
