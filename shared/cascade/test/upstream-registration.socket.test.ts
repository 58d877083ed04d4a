// UpstreamRegistration over real sockets: our SIP stack as the lower platform, a tiny upstream
// registrar built on @vms/sip that challenges with digest (401), checks the answer with DigestServer
// and takes keepalives. Short expiry and interval so refresh and offline detection happen in ~2 s.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeKeepalive, parseManscdp } from '@vms/gb28181';
import { createSipStack, DigestServer, type SipRequest, type SipStack, type TransportName } from '@vms/sip';
import { UpstreamRegistration, upstreamPlatform, type RegistrationEvent, type UpstreamPlatform } from '../src/index.ts';

const UPSTREAM_ID = '34010000002000000001';
const LOCAL_ID = '34020000002000000001';
const PASSWORD = 'upper-pass';
const FAST_TIMERS = { T1: 50, T2: 400, T4: 500 };

interface Registrar {
  stack: SipStack;
  registers: Array<{ req: SipRequest; ok: boolean | undefined }>;
  keepalives: SipRequest[];
  /** Status answered to MESSAGEs. */
  messageStatus: number;
}

async function startRegistrar(): Promise<Registrar> {
  const stack = await createSipStack({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS });
  const digest = new DigestServer({ realm: '3401000000', secret: randomBytes(16) });
  const r: Registrar = { stack, registers: [], keepalives: [], messageStatus: 200 };
  stack.onRequest('REGISTER', (req, ctx) => {
    const auth = req.headers.get('Authorization');
    const verdict = auth === undefined ? undefined : digest.verify(auth, { method: 'REGISTER', password: PASSWORD, now: Date.now(), requestUri: req.rawUri });
    r.registers.push({ req, ok: verdict?.ok });
    if (verdict?.ok !== true) return ctx.reply(401, { headers: { 'WWW-Authenticate': digest.challengeHeader(Date.now()) } });
    return ctx.reply(200, { headers: { Expires: req.headers.get('Expires') ?? '3600' } });
  });
  stack.onRequest('MESSAGE', (req, ctx) => {
    r.keepalives.push(req);
    ctx.reply(r.messageStatus);
  });
  return r;
}

function platformFor(registrar: Registrar, transport: TransportName, overrides: Partial<UpstreamPlatform>): UpstreamPlatform {
  // below the validated minimums on purpose (seconds instead of minutes): the driver does not re-validate
  return {
    ...upstreamPlatform({ serverId: UPSTREAM_ID, host: '127.0.0.1', port: registrar.stack.port, transport, localId: LOCAL_ID, password: PASSWORD }),
    ...overrides,
  };
}

async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('UpstreamRegistration against a registrar on real sockets', () => {
  it('UDP: 401 → digest → 200, keepalives every interval, refresh on the same Call-ID', async () => {
    const registrar = await startRegistrar();
    const lower = await createSipStack({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS, transports: ['udp'] });
    const events: RegistrationEvent[] = [];
    const reg = new UpstreamRegistration({
      platform: platformFor(registrar, 'udp', { registerExpiresS: 2, keepaliveIntervalS: 1 }),
      sip: lower,
      onEvent: (e) => events.push(e),
    });
    try {
      reg.start();
      // the registrar sees the 4th REGISTER before the client has read its 200: wait for both sides
      const registeredEvents = (): number => events.filter((e) => e.type === 'registered').length;
      await until(
        () => registrar.registers.length >= 4 && registrar.keepalives.length >= 1 && registeredEvents() >= 2,
        5000,
        'a refresh and a keepalive',
      );
      const [challenged, accepted, refreshChallenged, refreshed] = registrar.registers as [Registrar['registers'][0], Registrar['registers'][0], Registrar['registers'][0], Registrar['registers'][0]];
      assert.deepEqual([challenged.ok, accepted.ok, refreshChallenged.ok, refreshed.ok], [undefined, true, undefined, true]);
      assert.equal(accepted.req.rawUri, `sip:${UPSTREAM_ID}@127.0.0.1:${registrar.stack.port}`);
      assert.match(accepted.req.headers.get('Authorization') ?? '', new RegExp(`^Digest username="${LOCAL_ID}", realm="3401000000"`));
      assert.match(accepted.req.headers.get('From') ?? '', new RegExp(`^<sip:${LOCAL_ID}@3402000000>;tag=`));
      assert.match(accepted.req.headers.get('Contact') ?? '', new RegExp(`^<sip:${LOCAL_ID}@127\\.0\\.0\\.1:${lower.port}>`));
      assert.equal(refreshed.req.headers.get('Call-ID'), challenged.req.headers.get('Call-ID'), 'refresh keeps the Call-ID');
      assert.deepEqual(
        registrar.registers.map((r) => r.req.headers.get('CSeq')),
        ['1 REGISTER', '2 REGISTER', '3 REGISTER', '4 REGISTER'],
      );
      const ka = registrar.keepalives[0] as SipRequest;
      assert.equal(ka.headers.get('Content-Type'), 'Application/MANSCDP+xml');
      assert.deepEqual(decodeKeepalive(parseManscdp(ka.body)), { sn: '1', deviceId: LOCAL_ID, status: 'OK' });
      assert.deepEqual(events.filter((e) => e.type === 'registered').map((e) => (e as { refresh: boolean }).refresh).slice(0, 2), [false, true]);
      assert.equal(reg.state.online, true);
    } finally {
      reg.stop();
      await lower.close();
      await registrar.stack.close();
    }
  });

  it('TCP: keepalives refused twice → offline → registers again; stop() sends nothing more and no unregister', async () => {
    const registrar = await startRegistrar();
    const lower = await createSipStack({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS, transports: ['tcp'] });
    const events: RegistrationEvent[] = [];
    const reg = new UpstreamRegistration({
      platform: platformFor(registrar, 'tcp', { keepaliveIntervalS: 1, maxKeepaliveFailures: 2 }),
      sip: lower,
      onEvent: (e) => events.push(e),
    });
    try {
      reg.start();
      await until(() => reg.state.online, 3000, 'registration');
      registrar.messageStatus = 404; // the upstream forgot us (restarted)
      await until(() => events.some((e) => e.type === 'offline'), 4000, 'offline');
      registrar.messageStatus = 200;
      await until(() => events.filter((e) => e.type === 'registered').length >= 2, 3000, 're-registration');
      assert.deepEqual(
        events.map((e) => e.type),
        ['registered', 'keepalive-failed', 'keepalive-failed', 'offline', 'registered'],
      );
      assert.ok(registrar.registers.every((r) => r.req.headers.get('Expires') === '3600'));
      reg.stop();
      const counts = [registrar.registers.length, registrar.keepalives.length];
      await new Promise((r) => setTimeout(r, 1300));
      assert.deepEqual([registrar.registers.length, registrar.keepalives.length], counts, 'silent after stop()');
    } finally {
      reg.stop();
      await lower.close();
      await registrar.stack.close();
    }
  });
});
