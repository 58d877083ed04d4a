// Interop (Foundation 1 §4): SIPp as a GB28181 device (UAC) against a tiny registrar built on
// @vms/sip: REGISTER → 401 digest (with and without qop) → REGISTER with credentials → 200, then a
// MANSCDP Keepalive MESSAGE → 200; over UDP (-t u1) and TCP (-t t1). SIPp is a required test
// dependency (scripts/setup.sh installs Debian's sip-tester): a missing binary fails these tests.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeKeepalive, parseManscdp } from '@vms/gb28181';
import { createSipStack, DigestServer, parseDigestCredentials, type Flow, type SipRequest, type SipStack } from '@vms/sip';
import { freePort, runSipp, writeInjectionCsv, type SippTransport } from '@vms/harness';

const SCENARIO = join(dirname(fileURLToPath(import.meta.url)), '..', 'sipp', 'interop', 'register-message-uac.xml');
const DEVICE_ID = '34020000001320000001';
const SERVER_ID = '34020000002000000001';
const REALM = '3402000000';
const PASSWORD = '12345678';

/** The body the scenario sends, written out by hand: SIPp trims each line and ends lines with CRLF. */
const keepaliveBody = (sn: number): string =>
  [
    '<?xml version="1.0" encoding="GB2312"?>',
    '<Notify>',
    '<CmdType>Keepalive</CmdType>',
    `<SN>${sn}</SN>`,
    `<DeviceID>${DEVICE_ID}</DeviceID>`,
    '<Status>OK</Status>',
    '</Notify>',
  ].join('\r\n');

interface Seen {
  registers: Array<{ req: SipRequest; flow: Flow; verdict: ReturnType<DigestServer['verify']> | undefined }>;
  messages: Array<{ req: SipRequest; flow: Flow }>;
}

/** The whole test UAS: a registrar that challenges, verifies with DigestServer, and takes MESSAGEs. */
async function startRegistrar(qop: boolean): Promise<{ stack: SipStack; seen: Seen }> {
  const stack = await createSipStack({ host: '127.0.0.1', port: 0 });
  const digest = new DigestServer({ realm: REALM, secret: randomBytes(16), qop });
  const seen: Seen = { registers: [], messages: [] };
  stack.onRequest('REGISTER', (req, ctx) => {
    const auth = req.headers.get('Authorization');
    const verdict = auth === undefined ? undefined : digest.verify(auth, { method: 'REGISTER', password: PASSWORD, now: Date.now(), requestUri: req.rawUri });
    seen.registers.push({ req, flow: ctx.flow, verdict });
    if (verdict?.ok !== true) return ctx.reply(401, { headers: { 'WWW-Authenticate': digest.challengeHeader(Date.now()) } });
    return ctx.reply(200, { headers: { Expires: req.headers.get('Expires') ?? '3600' } });
  });
  stack.onRequest('MESSAGE', (req, ctx) => {
    seen.messages.push({ req, flow: ctx.flow });
    ctx.reply(200);
  });
  return { stack, seen };
}

describe('SIPp UAC → @vms/sip UAS: REGISTER with digest, then MESSAGE', () => {
  for (const transport of ['u1', 't1'] as const satisfies readonly SippTransport[]) {
    for (const qop of [false, true]) {
      it(`${transport === 'u1' ? 'UDP' : 'TCP'}, ${qop ? 'qop=auth' : 'no qop'}`, async () => {
        const { stack, seen } = await startRegistrar(qop);
        try {
          const inf = writeInjectionCsv([[DEVICE_ID, SERVER_ID, REALM]]);
          const res = await runSipp({
            scenario: SCENARIO,
            remote: `127.0.0.1:${stack.port}`,
            localPort: await freePort({ udp: true }),
            transport,
            calls: 1,
            injectionFiles: [inf],
            recvTimeoutMs: 5000,
            timeoutMs: 20_000,
            // SIPp's digest uri defaults to sip:<remote_ip>:<remote_port>; -auth_uri makes it the Request-URI
            // (RFC 3261 §22.4), which the registrar below checks byte for byte.
            extraArgs: ['-au', DEVICE_ID, '-ap', PASSWORD, '-auth_uri', `${SERVER_ID}@${REALM}`],
          }).done;
          assert.equal(res.exitCode, 0, `sipp failed:\n${res.errors}\n${res.messages}`);
          assert.deepEqual(res.stats, { created: 1, successful: 1, failed: 0 });

          const wantTransport = transport === 'u1' ? 'udp' : 'tcp';
          assert.equal(seen.registers.length, 2);
          const [first, second] = seen.registers as [Seen['registers'][0], Seen['registers'][0]];
          assert.equal(first.req.headers.has('Authorization'), false);
          assert.equal(first.flow.transport, wantTransport);
          assert.deepEqual(second.verdict, { ok: true, username: DEVICE_ID }, 'SIPp digest accepted by DigestServer (uri = Request-URI)');
          const cred = parseDigestCredentials(second.req.headers.get('Authorization') ?? '');
          assert.equal(cred.username, DEVICE_ID);
          assert.equal(cred.realm, REALM);
          assert.equal(cred.qop, qop ? 'auth' : undefined);
          if (qop) assert.match(cred.nc ?? '', /^[0-9a-f]{8}$/i);

          assert.equal(seen.messages.length, 1);
          const msg = seen.messages[0] as Seen['messages'][0];
          assert.equal(msg.flow.transport, wantTransport);
          assert.equal(msg.req.headers.get('Content-Type'), 'Application/MANSCDP+xml');
          const sn = Number(/<SN>(\d+)<\/SN>/.exec(msg.req.body.toString('latin1'))?.[1]);
          assert.equal(msg.req.body.toString('latin1').trimEnd(), keepaliveBody(sn), 'body bytes as sent');
          assert.deepEqual(decodeKeepalive(parseManscdp(msg.req.body)), { sn: String(sn), deviceId: DEVICE_ID, status: 'OK' });
        } finally {
          await stack.close();
        }
      });
    }
  }
});

describe('SIPp UAC → @vms/sip UAS: a wrong password', () => {
  it('is challenged again and the call fails (UDP)', async () => {
    const { stack, seen } = await startRegistrar(true);
    try {
      const res = await runSipp({
        scenario: SCENARIO,
        remote: `127.0.0.1:${stack.port}`,
        localPort: await freePort({ udp: true }),
        transport: 'u1',
        calls: 1,
        injectionFiles: [writeInjectionCsv([[DEVICE_ID, SERVER_ID, REALM]])],
        recvTimeoutMs: 5000,
        timeoutMs: 20_000,
        extraArgs: ['-au', DEVICE_ID, '-ap', 'wrong-password', '-auth_uri', `${SERVER_ID}@${REALM}`],
      }).done;
      assert.equal(res.exitCode, 1, res.output);
      assert.match(res.errors, /while expecting '200'.*received 'SIP\/2\.0 401/s);
      assert.equal(seen.registers.length, 2);
      assert.deepEqual(seen.registers[1]?.verdict, { ok: false, reason: 'response', stale: false });
      assert.equal(seen.messages.length, 0);
    } finally {
      await stack.close();
    }
  });
});

describe('SIPp UAC → @vms/sip UAS: a burst', () => {
  for (const transport of ['u1', 't1'] as const satisfies readonly SippTransport[]) {
    it(`100 devices register and send a keepalive, 100 calls/s, 50 at once (${transport === 'u1' ? 'UDP' : 'TCP: one connection'})`, async () => {
      const { stack, seen } = await startRegistrar(true);
      try {
        const ids = Array.from({ length: 100 }, (_, i) => `340200000013200${String(i + 1).padStart(5, '0')}`);
        const res = await runSipp({
          scenario: SCENARIO,
          remote: `127.0.0.1:${stack.port}`,
          localPort: await freePort({ udp: true }),
          transport,
          calls: ids.length,
          rate: 100,
          limit: 50,
          injectionFiles: [writeInjectionCsv(ids.map((id) => [id, SERVER_ID, REALM]))],
          recvTimeoutMs: 5000,
          timeoutMs: 30_000,
          traceMessages: false,
          // one digest identity for all: SIPp's -au is global; the registrar checks the password
          extraArgs: ['-au', DEVICE_ID, '-ap', PASSWORD, '-auth_uri', `${SERVER_ID}@${REALM}`],
        }).done;
        assert.equal(res.exitCode, 0, res.errors);
        assert.deepEqual(res.stats, { created: 100, successful: 100, failed: 0 });
        assert.equal(seen.registers.filter((r) => r.verdict?.ok === true).length, 100);
        const keepaliveIds = seen.messages.map((m) => decodeKeepalive(parseManscdp(m.req.body)).deviceId);
        assert.deepEqual([...keepaliveIds].sort(), ids);
        if (transport === 't1') assert.equal(stack.stats().tcpAccepted, 1, 'SIPp -t t1: every call over one connection');
      } finally {
        await stack.close();
      }
    });
  }
});
