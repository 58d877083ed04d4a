// The registration driver on a FakeClock against a scripted upstream (no sockets).
import assert from 'node:assert/strict';
import { setImmediate as flush } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { decodeKeepalive, parseManscdp } from '@vms/gb28181';
import { FakeClock, SipHeaders, SipTimeoutError, type OutgoingRequestSpec, type RequestOptions, type SipResponse } from '@vms/sip';
import { upstreamPlatform } from '../platform/platform.validate.ts';
import type { RegistrationEvent } from './registration-machine.ts';
import { UpstreamRegistration, grantedExpires } from './upstream-registration.ts';

const platform = upstreamPlatform({
  serverId: '34010000002000000001',
  host: '10.1.2.3',
  port: 5060,
  localId: '34020000002000000001',
  password: 'secret',
  registerExpiresS: 3600,
  keepaliveIntervalS: 60,
  maxKeepaliveFailures: 3,
});

type Answer = number | 'timeout' | { status: number; headers: Record<string, string> };
interface Sent {
  spec: OutgoingRequestSpec;
  opts: RequestOptions | undefined;
  headers: Record<string, string | number>;
}

/** A scripted upstream: `answer` decides each reply; with credentials it behaves like the stack after a 401 (CSeq + 1). */
class ScriptedUpstream {
  readonly sent: Sent[] = [];
  answer: (s: Sent) => Answer = () => 200;
  async request(spec: OutgoingRequestSpec, opts?: RequestOptions): Promise<SipResponse> {
    const s: Sent = { spec, opts, headers: spec.headers as Record<string, string | number> };
    this.sent.push(s);
    const a = this.answer(s);
    if (a === 'timeout') throw new SipTimeoutError(spec.method, 'udp:10.1.2.3:5060');
    const status = typeof a === 'number' ? a : a.status;
    const [seq = '1', method = spec.method] = String(s.headers['CSeq'] ?? `1 ${spec.method}`).split(' ');
    const headers = new SipHeaders([['CSeq', `${Number(seq) + (opts?.auth !== undefined && spec.method === 'REGISTER' ? 1 : 0)} ${method}`]]);
    if (spec.method === 'REGISTER' && status === 200) headers.append('Expires', String(s.headers['Expires']));
    if (typeof a === 'object') for (const [k, v] of Object.entries(a.headers)) headers.set(k, v);
    return { type: 'response', status, reason: '', headers, body: Buffer.alloc(0) };
  }
  methods(): string[] {
    return this.sent.map((s) => s.spec.method);
  }
}

function setup(p = platform) {
  const clock = new FakeClock(1_000_000);
  const upstream = new ScriptedUpstream();
  const events: RegistrationEvent[] = [];
  const reg = new UpstreamRegistration({ platform: p, sip: upstream, clock, onEvent: (e) => events.push(e) });
  const advance = async (ms: number): Promise<void> => {
    clock.advance(ms);
    for (let i = 0; i < 5; i++) await flush();
  };
  return { clock, upstream, events, reg, advance };
}

describe('UpstreamRegistration (FakeClock, scripted upstream)', () => {
  it('start() registers at once with digest credentials, our id in From/To, then keepalives every interval with rising SN', async () => {
    const { upstream, reg, events, advance } = setup();
    reg.start();
    await advance(0);
    assert.deepEqual(upstream.methods(), ['REGISTER']);
    const r = upstream.sent[0] as Sent;
    assert.deepEqual(r.opts, { auth: { username: '34020000002000000001', password: 'secret' } });
    assert.equal(r.spec.uri, 'sip:34010000002000000001@10.1.2.3:5060');
    assert.deepEqual(r.spec.target, { host: '10.1.2.3', port: 5060, transport: 'udp' });
    assert.match(String(r.headers['From']), /^<sip:34020000002000000001@3402000000>;tag=\w+$/);
    assert.equal(r.headers['To'], '<sip:34020000002000000001@3402000000>');
    assert.deepEqual([r.headers['CSeq'], r.headers['Expires']], ['1 REGISTER', 3600]);
    assert.deepEqual(events, [{ type: 'registered', expiresS: 3600, refresh: false }]);
    assert.equal(reg.state.online, true);

    await advance(59_999);
    assert.equal(upstream.sent.length, 1, 'nothing before the interval');
    await advance(1);
    await advance(60_000);
    const keepalives = upstream.sent.slice(1);
    assert.deepEqual(keepalives.map((s) => s.spec.method), ['MESSAGE', 'MESSAGE']);
    const bodies = keepalives.map((s) => decodeKeepalive(parseManscdp(s.spec.body as Buffer)));
    assert.deepEqual(bodies, [
      { sn: '1', deviceId: '34020000002000000001', status: 'OK' },
      { sn: '2', deviceId: '34020000002000000001', status: 'OK' },
    ]);
    assert.equal(keepalives[0]?.headers['To'], '<sip:34010000002000000001@3401000000>');
    reg.stop();
  });

  it('refreshes at 80 % of the expiry on the same Call-ID and From tag, CSeq above the digest retry', async () => {
    const { upstream, reg, events, advance } = setup();
    upstream.answer = (s) => (s.spec.method === 'MESSAGE' ? 200 : { status: 200, headers: { Expires: '600' } });
    reg.start();
    await advance(0);
    assert.deepEqual(events[0], { type: 'registered', expiresS: 600, refresh: false }, 'the granted expiry wins');
    await advance(480_000);
    const registers = upstream.sent.filter((s) => s.spec.method === 'REGISTER');
    assert.equal(registers.length, 2);
    const [first, refresh] = registers as [Sent, Sent];
    assert.equal(refresh.headers['Call-ID'], first.headers['Call-ID']);
    assert.equal(refresh.headers['From'], first.headers['From']);
    assert.equal(refresh.headers['CSeq'], '3 REGISTER', 'first went out as 1, was retried with credentials as 2');
    assert.deepEqual(events.at(-1), { type: 'registered', expiresS: 600, refresh: true });
    reg.stop();
  });

  it('3 failed keepalives: offline, REGISTER at once, then back-off 2 s, 4 s, 8 s … until the upstream is back', async () => {
    const { upstream, reg, events, advance, clock } = setup();
    reg.start();
    await advance(0);
    let upstreamDown = false;
    upstream.answer = () => (upstreamDown ? 'timeout' : 200);
    upstreamDown = true;
    for (let i = 0; i < 3; i++) await advance(60_000);
    assert.deepEqual(
      events.slice(1).map((e) => e.type),
      ['keepalive-failed', 'keepalive-failed', 'keepalive-failed', 'offline', 'register-failed'],
    );
    assert.equal(reg.state.online, false);
    const offlineAt = clock.now();
    assert.equal(upstream.sent.at(-1)?.spec.method, 'REGISTER', 're-registered at once');
    const retryTimes: number[] = [];
    const before = upstream.sent.length;
    for (let t = 0; t < 30_000; t += 500) await advance(500);
    for (const s of upstream.sent.slice(before)) assert.equal(s.spec.method, 'REGISTER', 'no keepalive while offline');
    retryTimes.push(...events.filter((e) => e.type === 'register-failed').map((e) => (e as { retryInMs: number }).retryInMs));
    assert.deepEqual(retryTimes, [2000, 4000, 8000, 16_000, 32_000], "attempts at +0, +2, +6, +14, +30 s");
    upstreamDown = false;
    await advance(32_000);
    assert.deepEqual(events.at(-1), { type: 'registered', expiresS: 3600, refresh: false });
    assert.equal(reg.state.online, true);
    assert.ok(clock.now() - offlineAt < 64_000);
    reg.stop();
  });

  it('stop(): no more traffic, never an unregister, and a late answer does not revive it', async () => {
    const { upstream, reg, events, advance, clock } = setup();
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => (release = r));
    reg.start();
    await advance(0);
    // the next keepalive hangs until after stop()
    upstream.request = (async (spec: OutgoingRequestSpec, opts?: RequestOptions) => {
      upstream.sent.push({ spec, opts, headers: spec.headers as Record<string, string | number> });
      await gate;
      throw new SipTimeoutError('MESSAGE', 'x');
    }) as ScriptedUpstream['request'];
    await advance(60_000);
    const count = upstream.sent.length;
    reg.stop();
    release?.();
    await advance(0);
    await advance(86_400_000);
    assert.equal(upstream.sent.length, count, 'nothing sent after stop');
    assert.ok(upstream.sent.every((s) => s.headers['Expires'] !== 0 && s.headers['Expires'] !== '0'), 'no Expires: 0');
    assert.equal(events.filter((e) => e.type === 'keepalive-failed').length, 0, 'the late failure is ignored');
    assert.deepEqual([reg.state.phase, reg.state.online, clock.pending], ['stopped', false, 0]);
  });

  it('start() after stop() registers again with a new Call-ID', async () => {
    const { upstream, reg, advance } = setup();
    reg.start();
    await advance(0);
    reg.stop();
    reg.start();
    await advance(0);
    const [a, b] = upstream.sent.filter((s) => s.spec.method === 'REGISTER') as [Sent, Sent];
    assert.notEqual(a.headers['Call-ID'], b.headers['Call-ID']);
    assert.equal(b.headers['CSeq'], '1 REGISTER');
    reg.stop();
  });

  it('no password: no credentials offered; a 401 is a failed registration', async () => {
    const { upstream, reg, events, advance } = setup(upstreamPlatform({ ...platform, password: '' }));
    upstream.answer = () => 401;
    reg.start();
    await advance(0);
    assert.deepEqual(upstream.sent[0]?.opts, {});
    assert.deepEqual(events, [{ type: 'register-failed', status: 401, attempt: 1, retryInMs: 2000 }]);
    reg.stop();
  });

  it('grantedExpires: our Contact expires param, else Expires, else requested', () => {
    const res = (lines: Array<[string, string]>): SipResponse => ({ type: 'response', status: 200, reason: 'OK', headers: new SipHeaders(lines), body: Buffer.alloc(0) });
    const id = '34020000002000000001';
    assert.equal(grantedExpires(res([['Contact', `<sip:other@1.2.3.4>;expires=10, <sip:${id}@5.6.7.8:5060>;expires=1800`], ['Expires', '3600']]), id, 3600), 1800);
    assert.equal(grantedExpires(res([['Expires', '900']]), id, 3600), 900);
    assert.equal(grantedExpires(res([]), id, 3600), 3600);
    assert.equal(grantedExpires(res([['Contact', '<<<bad']]), id, 3600), 3600);
  });
});
