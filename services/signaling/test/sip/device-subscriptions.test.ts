// DeviceSubscriptions' decisions with a fake clock and a scripted SIP side (the e2e with real stacks is
// test/integration/device-subscriptions-e2e.test.ts): the in-flight bound, a 2xx arriving after we gave
// up, a refresh REGISTER on the same flow, a failed refresh, offline.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { SipHeaders, type Dialog, type Flow, type SipResponse } from '@vms/sip';
import { FakeClock } from '../../src/core/clock.ts';
import { createDeviceFlows } from '../../src/sip/device-flows.ts';
import { createMemoryReportStore } from '../../src/reports/report-store.memory.ts';
import { DeviceSubscriptions } from '../../src/sip/device-subscriptions.ts';

const log = pino({ level: 'silent' });
const flow = (port: number): Flow => ({ transport: 'udp', localAddress: '127.0.0.1', localPort: 5060, remoteAddress: '127.0.0.1', remotePort: port }) as Flow;
const ok = (expires: number): SipResponse => ({ status: 200, reason: 'OK', headers: new SipHeaders([['Expires', String(expires)]]), body: Buffer.alloc(0) }) as unknown as SipResponse;

class FakeDialog extends EventEmitter {
  terminated = false;
  destroyed = false;
  readonly requests: string[] = [];
  answer: (() => Promise<SipResponse>) | null = null;
  request(method: string, opts: { headers?: Record<string, string> }): Promise<SipResponse> {
    this.requests.push(`${method} ${opts.headers?.['Expires'] ?? ''}`);
    return this.answer?.() ?? Promise.resolve(ok(60));
  }
  async destroy(): Promise<void> {
    this.destroyed = true;
    this.terminated = true;
  }
}

function setup(o: { maxInFlight?: number } = {}) {
  const clock = new FakeClock(1_000_000);
  const flows = createDeviceFlows();
  const store = createMemoryReportStore();
  const calls: { deviceId: string; resolve: (r: { dialog: Dialog; response: SipResponse }) => void; dialog: FakeDialog }[] = [];
  const stack = {
    createUAC(spec: { uri: unknown }) {
      const deviceId = /sip:(\d{20})@/.exec(String(spec.uri))?.[1] ?? '';
      const dialog = new FakeDialog();
      return new Promise<{ dialog: Dialog; response: SipResponse }>((resolve) => calls.push({ deviceId, resolve, dialog }));
    },
  };
  const subs = new DeviceSubscriptions({
    stack: stack as never,
    sip: { serverId: '34020000002000000001', realm: '3402000000' },
    flows,
    clock,
    log,
    store,
    onNotify: () => {},
    timing: { expiresS: 60, answerMs: 1000, retryMs: 10_000, ...(o.maxInFlight === undefined ? {} : { maxInFlight: o.maxInFlight }) },
  });
  const register = (deviceId: string, port: number): void => {
    flows.register({ deviceId, flow: flow(port), charset: 'GB2312', gbVersion: '2016', registeredAt: clock.now(), expiresAt: clock.now() + 3_600_000 });
  };
  const answer = (i: number, expires = 60): FakeDialog => {
    const c = calls[i];
    assert.ok(c !== undefined, `call ${i}`);
    c.resolve({ dialog: c.dialog as unknown as Dialog, response: ok(expires) });
    return c.dialog;
  };
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { clock, flows, store, subs, calls, register, answer, settle };
}

const dev = (n: number): string => `340200000013200${String(n).padStart(5, '0')}`;
const on = { catalog: true, alarm: false, mobileposition: false, intervalS: 5 };

describe('DeviceSubscriptions', () => {
  it('holds at most maxInFlight SUBSCRIBEs unanswered; the rest go out as answers come', async () => {
    const t = setup({ maxInFlight: 2 });
    for (let i = 1; i <= 5; i++) {
      t.register(dev(i), 6000 + i);
      await t.store.saveSubscriptionSettings(dev(i), on);
      await t.subs.registered(dev(i));
    }
    await t.settle();
    assert.equal(t.calls.length, 2, 'two in flight');
    t.answer(0);
    t.answer(1);
    await t.settle();
    t.clock.advance(1000); // the postponed ones are due again
    await t.settle();
    assert.equal(t.calls.length, 4);
    t.answer(2);
    t.answer(3);
    await t.settle();
    t.clock.advance(1000);
    await t.settle();
    assert.equal(t.calls.length, 5);
  });

  it('a 2xx after the answer wait is torn down locally; the subscription reads unanswered and is retried', async () => {
    const t = setup();
    t.register(dev(1), 6001);
    const view = t.subs.set(dev(1), 'catalog', true);
    await t.settle();
    t.clock.advance(1000);
    assert.equal((await view).subscriptions[0]?.state, 'unanswered');
    const late = t.answer(0);
    await t.settle();
    assert.equal(late.destroyed, true, 'the late dialog is not kept');
    t.clock.advance(10_000);
    await t.settle();
    assert.equal(t.calls.length, 2, 'retried after retryMs');
    t.answer(1);
    await t.settle();
    assert.equal((await t.subs.view(dev(1))).subscriptions[0]?.state, 'active');
  });

  it('refreshes in the dialog before the grant ends; a refresh REGISTER on the same flow opens nothing new; a failed refresh subscribes anew', async () => {
    const t = setup();
    t.register(dev(1), 6001);
    const pending = t.subs.set(dev(1), 'catalog', true);
    await t.settle();
    const d = t.answer(0, 40); // the device grants 40 s: refresh 10 s before
    assert.equal((await pending).subscriptions[0]?.state, 'active');
    await t.subs.registered(dev(1));
    assert.equal(t.calls.length, 1, 'same flow: nothing new');
    t.clock.advance(29_999);
    await t.settle();
    assert.deepEqual(d.requests, []);
    t.clock.advance(1);
    await t.settle();
    assert.deepEqual(d.requests, ['SUBSCRIBE 60']);
    d.answer = () => Promise.resolve({ ...ok(0), status: 481, reason: 'Call/Transaction Does Not Exist' } as SipResponse);
    t.clock.advance(60_000);
    await t.settle();
    assert.equal(d.destroyed, true);
    assert.equal(t.calls.length, 2, 'a new SUBSCRIBE after the failed refresh');
  });

  it('going offline forgets without a word; turning off sends Expires 0', async () => {
    const t = setup();
    t.register(dev(1), 6001);
    t.register(dev(2), 6002);
    const a = t.subs.set(dev(1), 'catalog', true);
    const b = t.subs.set(dev(2), 'catalog', true);
    await t.settle();
    const d1 = t.answer(0);
    const d2 = t.answer(1);
    await Promise.all([a, b]);
    t.subs.forget(dev(1));
    assert.deepEqual(d1.requests, []);
    assert.equal(d1.destroyed, true);
    await t.subs.set(dev(2), 'catalog', false);
    await t.settle();
    assert.deepEqual(d2.requests, ['SUBSCRIBE 0']);
    assert.equal(t.subs.size, 0);
    t.clock.advance(3_600_000);
    await t.settle();
    assert.equal(t.calls.length, 2, 'nothing scheduled for forgotten subscriptions');
  });
});
