// Interop (Foundation 1 §4): our UAC (@vms/sip `request()` with digest auto-retry) registering against
// SIPp as the registrar: REGISTER → 401 (challenge with and without qop) → REGISTER with
// Authorization, which SIPp checks with <verifyauth> → 200 only when valid; over UDP and TCP.
// The Authorization SIPp received is also checked here, from SIPp's message trace, with our own
// checkDigestResponse (nonce echoed, digest right). SIPp is a required test dependency.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkDigestResponse, createSipStack, parseDigestCredentials, type SipResponse, type TransportName } from '@vms/sip';
import { freePort, runSipp, sleep, type SippResult, type SippTransport } from '@vms/harness';

const SCENARIO = join(dirname(fileURLToPath(import.meta.url)), '..', 'sipp', 'interop', 'register-uas.xml');
const DEVICE_ID = '34020000001320000001';
const SERVER_ID = '34020000002000000001';
const REALM = '3402000000';
const PASSWORD = '12345678';
const OPAQUE = '5ccc069c403ebaf9f0171e9517f40e41';

interface Run {
  response: SipResponse;
  sipp: SippResult;
  nonce: string;
}

/** SIPp listens as the registrar; our stack registers with `password`; both finish before returning. */
async function registerAgainstSipp(transport: TransportName, qop: boolean, password: string): Promise<Run> {
  const port = await freePort({ udp: true });
  const nonce = randomBytes(16).toString('hex');
  const sipp = runSipp({
    scenario: SCENARIO,
    localPort: port,
    transport: (transport === 'udp' ? 'u1' : 't1') satisfies SippTransport,
    calls: 1,
    keys: {
      realm: REALM,
      nonce,
      // no qop: a bare RFC 2069 challenge (no algorithm) with an opaque to echo
      challenge_params: qop ? ', algorithm=MD5, qop="auth"' : `, opaque="${OPAQUE}"`,
      username: DEVICE_ID,
      password: PASSWORD,
    },
    timeoutMs: 20_000,
  });
  const stack = await createSipStack({ host: '127.0.0.1', port: 0, transports: [transport] });
  try {
    const request = () =>
      stack.request(
        {
          method: 'REGISTER',
          uri: `sip:${SERVER_ID}@${REALM}`,
          headers: { From: `<sip:${DEVICE_ID}@${REALM}>`, To: `<sip:${DEVICE_ID}@${REALM}>`, Expires: 3600 },
          target: { host: '127.0.0.1', port, transport },
        },
        { auth: { username: DEVICE_ID, password } },
      );
    // SIPp binds its socket a moment after spawning: a TCP connect refused then is retried.
    let response: SipResponse | undefined;
    for (let attempt = 0; response === undefined; attempt++) {
      try {
        response = await request();
      } catch (err) {
        if (attempt >= 40 || (err as { code?: string }).code !== 'SIP_ERR_TRANSPORT') throw err;
        await sleep(50);
      }
    }
    return { response, sipp: await sipp.done, nonce };
  } finally {
    await stack.close();
    await sipp.stop();
  }
}

/** The Authorization header of the second REGISTER SIPp received, from its message trace. */
function receivedAuthorization(trace: string): string {
  const m = /^Authorization:\s*(Digest .*)$/m.exec(trace);
  assert.ok(m !== null, `no Authorization in the SIPp trace:\n${trace}`);
  return (m[1] as string).trim();
}

describe('@vms/sip UAC → SIPp UAS: REGISTER with digest', () => {
  for (const transport of ['udp', 'tcp'] as const) {
    for (const qop of [false, true]) {
      it(`${transport.toUpperCase()}, ${qop ? 'qop=auth' : 'no qop'}: 401 answered, SIPp verifies, 200`, async () => {
        const { response, sipp, nonce } = await registerAgainstSipp(transport, qop, PASSWORD);
        assert.equal(response.status, 200, `final response ${response.status}\n${sipp.errors}\n${sipp.messages}`);
        assert.equal(sipp.exitCode, 0, `sipp failed:\n${sipp.errors}\n${sipp.messages}`);
        assert.deepEqual(sipp.stats, { created: 1, successful: 1, failed: 0 });

        const cred = parseDigestCredentials(receivedAuthorization(sipp.messages));
        assert.equal(cred.username, DEVICE_ID);
        assert.equal(cred.realm, REALM);
        assert.equal(cred.nonce, nonce, 'nonce echoed');
        assert.equal(cred.uri, `sip:${SERVER_ID}@${REALM}`, 'digest uri = Request-URI');
        assert.equal(cred.qop, qop ? 'auth' : undefined);
        if (qop) assert.equal(cred.nc, '00000001');
        else assert.equal(cred.opaque, OPAQUE, 'opaque echoed (RFC 2617 §3.2.2)');
        assert.equal(checkDigestResponse(cred, 'REGISTER', PASSWORD), true);
        assert.match(sipp.messages, new RegExp(`SIP/2\\.0/${transport.toUpperCase()} `), `REGISTER over ${transport}`);
      });
    }
  }

  it('a wrong password: SIPp verifyauth fails, answers 403, its call fails', async () => {
    const { response, sipp } = await registerAgainstSipp('udp', true, 'wrong-password');
    assert.equal(response.status, 403);
    assert.equal(sipp.exitCode, 1, sipp.output);
    assert.equal(sipp.stats?.failed, 1);
  });
});
