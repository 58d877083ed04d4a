import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  initialRegistration,
  refreshDelayMs,
  retryDelayMs,
  stepRegistration,
  type RegistrationEffect,
  type RegistrationInput,
  type RegistrationPolicy,
  type RegistrationState,
} from './registration-machine.ts';

const policy: RegistrationPolicy = { registerExpiresS: 3600, keepaliveIntervalS: 60, maxKeepaliveFailures: 3, retryBaseMs: 2000, retryMaxMs: 60_000 };

/** Feeds inputs in order, returning the last state and every effect produced. */
function run(inputs: RegistrationInput[], from: RegistrationState = initialRegistration(policy), now = 0) {
  let state = from;
  const effects: RegistrationEffect[] = [];
  for (const input of inputs) {
    const step = stepRegistration(state, input, policy, now);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

const sends = (fx: readonly RegistrationEffect[]) => fx.filter((e) => e.type === 'send-register' || e.type === 'send-keepalive').map((e) => e.type);
const events = (fx: readonly RegistrationEffect[]) => fx.flatMap((e) => (e.type === 'emit' ? [e.event] : []));
const timers = (fx: readonly RegistrationEffect[]) => fx.flatMap((e) => (e.type === 'set-timer' ? [[e.timer, e.delayMs] as const] : []));

const registered = () => run([{ type: 'start' }, { type: 'register-ok', expiresS: 3600 }]).state;

describe('registration state machine', () => {
  it('start registers at once with the configured expiry', () => {
    const { state, effects } = run([{ type: 'start' }]);
    assert.deepEqual(effects, [{ type: 'send-register', expiresS: 3600 }]);
    assert.deepEqual([state.phase, state.registerInFlight, state.online], ['registering', true, false]);
    assert.deepEqual(run([{ type: 'start' }], state).effects, [], 'start while running is a no-op');
  });

  it('2xx: online, refresh + expiry + keepalive timers, registered event', () => {
    const { state, effects } = run([{ type: 'start' }, { type: 'register-ok', expiresS: 3600 }], undefined, 1000);
    assert.deepEqual(timers(effects), [
      ['refresh', 2_880_000], // 80 % of 3600 s
      ['expiry', 3_600_000],
      ['keepalive', 60_000],
    ]);
    assert.deepEqual(events(effects), [{ type: 'registered', expiresS: 3600, refresh: false }]);
    assert.deepEqual([state.phase, state.online, state.expiresAt, state.lastRegisterStatus], ['registered', true, 3_601_000, 200]);
  });

  it('refresh delay: 80 %, at least 30 s before expiry, never before half of it', () => {
    assert.equal(refreshDelayMs(3600), 2_880_000);
    assert.equal(refreshDelayMs(60), 30_000);
    assert.equal(refreshDelayMs(100), 70_000);
    assert.equal(refreshDelayMs(10), 5000);
    assert.equal(refreshDelayMs(2), 1000);
  });

  it('refresh timer sends REGISTER; its 2xx is a refresh (no new keepalive timer)', () => {
    const a = run([{ type: 'timer', timer: 'refresh' }], registered());
    assert.deepEqual(sends(a.effects), ['send-register']);
    const b = run([{ type: 'register-ok', expiresS: 1800 }], a.state);
    assert.deepEqual(events(b.effects), [{ type: 'registered', expiresS: 1800, refresh: true }]);
    assert.deepEqual(timers(b.effects).map(([t]) => t), ['refresh', 'expiry']);
  });

  it('keepalive every interval, one at a time; success resets the failure count', () => {
    const a = run([{ type: 'timer', timer: 'keepalive' }], registered());
    assert.deepEqual(sends(a.effects), ['send-keepalive']);
    assert.deepEqual(timers(a.effects), [['keepalive', 60_000]]);
    const b = run([{ type: 'timer', timer: 'keepalive' }], a.state);
    assert.deepEqual(sends(b.effects), [], 'previous keepalive still in flight: skip a beat');
    const c = run([{ type: 'keepalive-failed', status: 408 }, { type: 'timer', timer: 'keepalive' }, { type: 'keepalive-ok' }], b.state);
    assert.equal(c.state.keepaliveFailures, 0);
  });

  it('N consecutive keepalive failures (timeouts or non-2xx): offline, then REGISTER at once', () => {
    let s = registered();
    const all: RegistrationEffect[] = [];
    for (const status of [null, 404, 500]) {
      const r = run([{ type: 'timer', timer: 'keepalive' }, { type: 'keepalive-failed', status }], s);
      s = r.state;
      all.push(...r.effects);
    }
    assert.deepEqual(events(all), [
      { type: 'keepalive-failed', status: null, consecutive: 1 },
      { type: 'keepalive-failed', status: 404, consecutive: 2 },
      { type: 'keepalive-failed', status: 500, consecutive: 3 },
      { type: 'offline', reason: 'keepalive' },
    ]);
    assert.deepEqual(sends(all), ['send-keepalive', 'send-keepalive', 'send-keepalive', 'send-register']);
    assert.deepEqual([s.phase, s.online, s.registerInFlight], ['registering', false, true]);
    const cleared = all.filter((e) => e.type === 'clear-timer').map((e) => (e as { timer: string }).timer);
    assert.deepEqual(cleared.sort(), ['expiry', 'keepalive', 'refresh', 'retry']);
    assert.deepEqual(run([{ type: 'timer', timer: 'keepalive' }], s).effects, [], 'no keepalive while offline');
  });

  it('re-register back-off: base, doubling, capped; success resets it', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 40].map((n) => retryDelayMs(n, policy)), [2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    let s = run([{ type: 'start' }]).state;
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = run([{ type: 'register-failed', status: i % 2 === 0 ? null : 403 }], s);
      delays.push(...timers(r.effects).map(([, d]) => d));
      assert.equal(r.state.phase, 'retrying');
      s = run([{ type: 'timer', timer: 'retry' }], r.state).state;
      assert.equal(s.registerInFlight, true);
    }
    assert.deepEqual(delays, [2000, 4000, 8000, 16_000]);
    const ok = run([{ type: 'register-ok', expiresS: 3600 }], s);
    assert.deepEqual([ok.state.registerFailures, ok.state.online], [0, true]);
    assert.deepEqual(events(ok.effects).at(-1), { type: 'registered', expiresS: 3600, refresh: false });
  });

  it('a failed refresh keeps the platform online until the binding expires', () => {
    let s = run([{ type: 'timer', timer: 'refresh' }, { type: 'register-failed', status: 503 }], registered()).state;
    assert.deepEqual([s.phase, s.online], ['registered', true]);
    assert.deepEqual(sends(run([{ type: 'timer', timer: 'keepalive' }], s).effects), ['send-keepalive'], 'keepalives go on');
    s = run([{ type: 'timer', timer: 'retry' }, { type: 'register-failed', status: null }], s).state;
    const lapsed = run([{ type: 'timer', timer: 'expiry' }], s);
    assert.deepEqual(events(lapsed.effects), [{ type: 'offline', reason: 'expired' }]);
    assert.deepEqual(sends(lapsed.effects), ['send-register']);
  });

  it('423 Interval Too Brief: asks again at once with Min-Expires, once per raise', () => {
    const r = run([{ type: 'start' }, { type: 'register-failed', status: 423, minExpiresS: 7200 }]);
    assert.deepEqual(sends(r.effects), ['send-register', 'send-register']);
    assert.deepEqual(r.effects.at(-1), { type: 'send-register', expiresS: 7200 });
    assert.equal(r.state.requestExpiresS, 7200);
    const again = run([{ type: 'register-failed', status: 423, minExpiresS: 7200 }], r.state);
    assert.deepEqual(timers(again.effects), [['retry', 2000]], 'same Min-Expires again: an ordinary failure, no loop');
  });

  it('stop clears every timer and sends nothing (no unregister); later answers change nothing', () => {
    const { state, effects } = run([{ type: 'timer', timer: 'keepalive' }, { type: 'stop' }], registered());
    assert.deepEqual(
      effects.filter((e) => e.type !== 'send-keepalive' && e.type !== 'set-timer'),
      ['refresh', 'keepalive', 'retry', 'expiry'].map((timer) => ({ type: 'clear-timer', timer })),
    );
    assert.deepEqual([state.phase, state.online], ['stopped', false]);
    for (const input of [
      { type: 'register-ok', expiresS: 60 },
      { type: 'keepalive-failed', status: null },
      { type: 'timer', timer: 'refresh' },
      { type: 'timer', timer: 'retry' },
      { type: 'timer', timer: 'keepalive' },
      { type: 'timer', timer: 'expiry' },
      { type: 'stop' },
    ] as const) {
      assert.deepEqual(stepRegistration(state, input, policy, 0).effects, [], input.type);
    }
    assert.deepEqual(run([{ type: 'start' }], state).effects, [{ type: 'send-register', expiresS: 3600 }], 'can start again');
  });

  it('a 2xx without usable expiry keeps the requested one', () => {
    const r = run([{ type: 'start' }, { type: 'register-ok', expiresS: 0 }]);
    assert.deepEqual(events(r.effects), [{ type: 'registered', expiresS: 3600, refresh: false }]);
  });
});
