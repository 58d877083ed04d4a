// Interop (SPEC CASC-2): our UpstreamRegistration (lower platform, on @vms/sip) against SIPp as the
// upstream platform (test/sipp/upstream/register-keepalive-uas.xml): REGISTER → 401 → REGISTER with
// Authorization, checked by SIPp's <verifyauth> → 200, then a Keepalive MESSAGE → 200; over UDP and
// TCP. The Authorization and the keepalive SIPp received are checked again from its message trace.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { UpstreamRegistration, upstreamPlatform, type RegistrationEvent } from '@vms/cascade';
import { checkDigestResponse, createSipStack, parseDigestCredentials, type TransportName } from '@vms/sip';
import { freePort, runSipp, type SippTransport } from '@vms/harness';

const SCENARIO = join(dirname(fileURLToPath(import.meta.url)), '..', 'sipp', 'upstream', 'register-keepalive-uas.xml');
const UPSTREAM_ID = '34010000002000000001';
const UPSTREAM_REALM = '3401000000';
const LOCAL_ID = '34020000002000000001';
const PASSWORD = 'upper-pass';

describe('UpstreamRegistration → SIPp as the upstream platform', () => {
  for (const transport of ['udp', 'tcp'] as const satisfies readonly TransportName[]) {
    it(`${transport.toUpperCase()}: 401 → digest → 200 (SIPp verifies), then a Keepalive → 200`, async () => {
      const port = await freePort({ udp: true });
      const nonce = randomBytes(16).toString('hex');
      const sipp = runSipp({
        scenario: SCENARIO,
        localPort: port,
        transport: (transport === 'udp' ? 'u1' : 't1') satisfies SippTransport,
        calls: 2, // the registration, one keepalive
        keys: { realm: UPSTREAM_REALM, nonce, username: LOCAL_ID, password: PASSWORD },
        timeoutMs: 20_000,
      });
      const stack = await createSipStack({ host: '127.0.0.1', port: 0, transports: [transport], timers: { T1: 100, T2: 400, T4: 500 } });
      const events: RegistrationEvent[] = [];
      const reg = new UpstreamRegistration({
        platform: {
          ...upstreamPlatform({ serverId: UPSTREAM_ID, host: '127.0.0.1', port, transport, localId: LOCAL_ID, password: PASSWORD }),
          keepaliveIntervalS: 1, // below the validated minimum of a stored record: a test speed-up
        },
        sip: stack,
        // SIPp binds a moment after spawning: a refused TCP connect is retried soon
        retryBaseMs: 100,
        onEvent: (e) => events.push(e),
      });
      try {
        reg.start();
        const res = await sipp.done;
        assert.equal(res.exitCode, 0, `sipp failed:\n${res.errors}\n${res.output}\n${res.messages}\n${JSON.stringify(events)}`);
        assert.deepEqual(res.stats, { created: 2, successful: 2, failed: 0 });

        const auth = /^Authorization:\s*(Digest .*)$/m.exec(res.messages)?.[1]?.trim() ?? '';
        const cred = parseDigestCredentials(auth);
        assert.deepEqual([cred.username, cred.realm, cred.nonce], [LOCAL_ID, UPSTREAM_REALM, nonce]);
        assert.equal(cred.uri, `sip:${UPSTREAM_ID}@127.0.0.1:${port}`, 'digest uri = Request-URI');
        assert.equal(checkDigestResponse(cred, 'REGISTER', PASSWORD), true);
        assert.match(res.messages, new RegExp(`MESSAGE sip:${UPSTREAM_ID}@127\\.0\\.0\\.1:${port} SIP/2\\.0`));
        assert.match(res.messages, new RegExp(`<Notify>\\s*<CmdType>Keepalive</CmdType>\\s*<SN>1</SN>\\s*<DeviceID>${LOCAL_ID}</DeviceID>`));
        assert.match(res.messages, new RegExp(`SIP/2\\.0/${transport.toUpperCase()} `));
        assert.equal(events.find((e) => e.type === 'registered')?.type, 'registered');
        assert.equal(reg.state.online, true);
      } finally {
        reg.stop();
        await stack.close();
        await sipp.stop();
      }
    });
  }
});
