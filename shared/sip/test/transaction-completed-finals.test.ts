// RFC 3261 §17.2.2 Completed state of non-INVITE server transactions over UDP, kept as data by the
// transaction layer (completed-finals.ts, issue 11): a retransmission before the final is absorbed by the
// live transaction, one during Timer J gets the very same final again, one after it is a new request;
// the table is bounded (the oldest goes first) and has one timer whatever its size.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../src/clock.ts';
import type { SipResponse } from '../src/message/types.ts';
import { CompletedFinals, SWEEP_SLACK_MS } from '../src/transaction/completed-finals.ts';
import { TransactionLayer, type FinalSender, type TransactionSink } from '../src/transaction/layer.ts';
import { resolveTimers } from '../src/transaction/timers.ts';
import type { Flow } from '../src/transport/flow.ts';
import { startStack, rawUdp } from './support/stack-fixtures.ts';
import { makeRequest, makeResponse } from './support/transaction-fixtures.ts';

const J = 32_000; // 64·T1 at RFC 3261's T1

describe('CompletedFinals', () => {
  it('keeps an entry for Timer J and at most SWEEP_SLACK_MS more, with one timer for all', () => {
    const clock = new FakeClock();
    const table = new CompletedFinals<string>(clock, J);
    table.add('a', 'A');
    clock.advance(400);
    table.add('b', 'B');
    assert.equal(clock.pending, 1, 'one sweep timer for the table');
    assert.deepEqual([table.get('a'), table.get('b'), table.size], ['A', 'B', 2]);
    clock.advance(J - 400 - 1); // t = J - 1
    assert.equal(table.get('a'), 'A', 'within Timer J');
    clock.advance(1 + SWEEP_SLACK_MS); // t = J + slack: a's sweep (b expires 400 ms later, within the slack: the same sweep)
    assert.equal(table.get('a'), undefined, 'gone after Timer J + the slack');
    assert.equal(table.size, 0, "b expired within the sweep's slack: taken by the same sweep");
    assert.equal(clock.pending, 0, 'no timer for an empty table');
  });

  it('an entry expiring past the slack stays for the next sweep', () => {
    const clock = new FakeClock();
    const table = new CompletedFinals<string>(clock, J);
    table.add('a', 'A');
    clock.advance(5_000);
    table.add('b', 'B');
    clock.advance(J - 5_000 + SWEEP_SLACK_MS); // t = J + slack
    assert.deepEqual([table.get('a'), table.get('b')], [undefined, 'B']);
    assert.equal(clock.pending, 1);
    clock.advance(5_000);
    assert.deepEqual([table.get('b'), table.size, clock.pending], [undefined, 0, 0]);
  });

  it('is bounded: past max the oldest goes first, counted', () => {
    const clock = new FakeClock();
    const table = new CompletedFinals<number>(clock, J, 3);
    for (let i = 0; i < 5; i++) table.add(`k${i}`, i);
    assert.deepEqual([table.size, table.evicted], [3, 2]);
    assert.deepEqual(['k0', 'k1', 'k2', 'k3', 'k4'].map((k) => table.get(k)), [undefined, undefined, 2, 3, 4]);
    clock.advance(J + SWEEP_SLACK_MS);
    assert.deepEqual([table.size, clock.pending], [0, 0], 'the expiry queue stayed in step with the evictions');
  });

  it('stays in step over many entries (the expiry queue compacts)', () => {
    const clock = new FakeClock();
    const table = new CompletedFinals<number>(clock, J, 1000);
    for (let i = 0; i < 50_000; i++) {
      table.add(`k${i}`, i);
      if (i % 100 === 99) clock.advance(100); // 1,000 a second: 32,000 within Timer J, bounded to 1,000
    }
    assert.equal(table.size, 1000);
    assert.equal(table.get('k49999'), 49_999);
    assert.equal(table.get('k48999'), undefined);
    clock.advance(J + SWEEP_SLACK_MS);
    assert.deepEqual([table.size, clock.pending], [0, 0]);
  });

  it('clear() forgets everything and its timer', () => {
    const clock = new FakeClock();
    const table = new CompletedFinals<number>(clock, J);
    table.add('a', 1);
    table.clear();
    assert.deepEqual([table.size, clock.pending, table.get('a')], [0, 0, undefined]);
  });
});

/** A FinalSender recording what it sent and resent; `refuse` makes send() decline. */
function recordingSender(refuse = false): FinalSender<{ status: number }> & { sent: number[]; resent: number[] } {
  const sent: number[] = [];
  const resent: number[] = [];
  return {
    sent,
    resent,
    send: (final: SipResponse) => {
      if (refuse) return undefined;
      sent.push(final.status);
      return { status: final.status };
    },
    resend: (kept: { status: number }) => void resent.push(kept.status),
  };
}

const FLOW: Flow = { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 5060, localAddress: '127.0.0.1', localPort: 5061 };
const tu = { onTimeout: () => {}, onTransportError: () => {}, onTerminated: () => {} };

describe('TransactionLayer with completed finals (RFC 3261 §17.2.2)', () => {
  const setup = (refuse = false, max?: number) => {
    const clock = new FakeClock();
    const sender = recordingSender(refuse);
    const layer = new TransactionLayer(clock, resolveTimers({}), { sender, ...(max === undefined ? {} : { max }) });
    const direct: number[] = [];
    const sink = (reliable = false): TransactionSink => ({ reliable, flow: FLOW, send: (m) => void direct.push((m as SipResponse).status) });
    return { clock, sender, layer, direct, sink };
  };

  it('absorbs a retransmission before the final, resends the final to one within Timer J, and takes one after as new', () => {
    const { clock, sender, layer, sink, direct } = setup();
    const req = makeRequest('REGISTER', 'z9hG4bKreg1');
    const tx = layer.startServer(req, sink(), tu);
    assert.equal(layer.receiveRequest(makeRequest('REGISTER', 'z9hG4bKreg1')), 'absorbed', 'Trying: absorbed');
    assert.deepEqual([sender.sent, sender.resent, direct], [[], [], []], 'nothing sent before the final');
    tx.respond(makeResponse(req, 200));
    assert.equal(tx.finalSent, true);
    assert.equal(tx.currentState, 'terminated', 'the transaction object ends: Completed is the table entry');
    assert.deepEqual(sender.sent, [200]);
    assert.deepEqual(layer.size, { clients: 0, servers: 1 }, 'still counted as a server transaction (Completed)');
    assert.equal(layer.matchRequest(req), undefined);
    clock.advance(10_000);
    assert.equal(layer.receiveRequest(makeRequest('REGISTER', 'z9hG4bKreg1')), 'absorbed');
    assert.deepEqual(sender.resent, [200], 'the same final again');
    assert.equal(layer.receiveRequest(makeRequest('REGISTER', 'z9hG4bKother')), undefined, 'another branch is a new request');
    clock.advance(J + SWEEP_SLACK_MS);
    assert.equal(layer.receiveRequest(makeRequest('REGISTER', 'z9hG4bKreg1')), undefined, 'after Timer J: a new request');
    assert.deepEqual(layer.size, { clients: 0, servers: 0 });
    assert.equal(clock.pending, 0, 'no timer left');
    assert.deepEqual(direct, [], 'nothing went through the per-transaction sink');
  });

  it('a provisional goes through the transaction and is resent to a retransmission; the final then goes to the table', () => {
    const { sender, layer, sink, direct } = setup();
    const req = makeRequest('MESSAGE', 'z9hG4bKm1');
    const tx = layer.startServer(req, sink(), tu);
    tx.respond(makeResponse(req, 100));
    assert.equal(layer.receiveRequest(req), 'absorbed');
    assert.deepEqual(direct, [100, 100]);
    tx.respond(makeResponse(req, 202));
    assert.deepEqual(sender.sent, [202]);
    assert.equal(tx.respond(makeResponse(req, 500)), false, 'a second final is refused');
  });

  it('TCP, INVITE, and a sender that declines keep the transaction as before', () => {
    const { clock, sender, layer, sink, direct } = setup(false);
    const overTcp = makeRequest('MESSAGE', 'z9hG4bKt1');
    layer.startServer(overTcp, sink(true), tu).respond(makeResponse(overTcp, 200));
    assert.deepEqual([sender.sent, direct], [[], [200]], 'TCP: sent by the transaction, Timer J = 0');
    assert.deepEqual(layer.size, { clients: 0, servers: 0 });
    const invite = makeRequest('INVITE', 'z9hG4bKi1');
    const itx = layer.startServer(invite, sink(), tu);
    itx.respond(makeResponse(invite, 486));
    assert.deepEqual(sender.sent, [], 'INVITE finals are the INVITE transaction\'s (Timer G/H)');
    itx.terminate();

    const declined = setup(true);
    const req = makeRequest('REGISTER', 'z9hG4bKd1');
    const tx = declined.layer.startServer(req, declined.sink(), tu);
    tx.respond(makeResponse(req, 200));
    assert.equal(tx.currentState, 'completed', 'kept by the transaction, Timer J armed');
    assert.deepEqual(declined.direct, [200]);
    declined.clock.advance(J);
    assert.equal(tx.currentState, 'terminated');
    clock.advance(J + SWEEP_SLACK_MS);
  });

  it('is bounded by max: the oldest completed request, retransmitted, is new again', () => {
    const { layer, sink } = setup(false, 2);
    for (const b of ['z9hG4bKb1', 'z9hG4bKb2', 'z9hG4bKb3']) {
      const r = makeRequest('REGISTER', b);
      layer.startServer(r, sink(), tu).respond(makeResponse(r, 200));
    }
    assert.equal(layer.completedEvicted, 1);
    assert.equal(layer.receiveRequest(makeRequest('REGISTER', 'z9hG4bKb1')), undefined);
    assert.equal(layer.receiveRequest(makeRequest('REGISTER', 'z9hG4bKb3')), 'absorbed');
  });

  it('close() forgets the completed finals and their timer', () => {
    const { clock, layer, sink } = setup();
    const r = makeRequest('REGISTER', 'z9hG4bKc1');
    layer.startServer(r, sink(), tu).respond(makeResponse(r, 200));
    layer.close();
    assert.deepEqual([layer.size.servers, clock.pending], [0, 0]);
  });
});

describe('completed finals through the UA over UDP', () => {
  const register = (port: number, branch: string): string =>
    [
      'REGISTER sip:34020000002000000001@3402000000 SIP/2.0',
      `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=${branch}`,
      'From: <sip:34020000001320000001@3402000000>;tag=f1',
      'To: <sip:34020000001320000001@3402000000>',
      `Call-ID: ${branch}@127.0.0.1`,
      'CSeq: 2 REGISTER',
      `Contact: <sip:34020000001320000001@127.0.0.1:${port}>`,
      'Max-Forwards: 70',
      'Expires: 3600',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');

  it('a retransmission gets the same bytes without the handler; past maxCompletedFinals the oldest is handled again', async () => {
    const stack = await startStack({ limits: { maxCompletedFinals: 2 } });
    const device = await rawUdp();
    try {
      let runs = 0;
      stack.onRequest('REGISTER', (_req, ctx) => {
        runs++;
        ctx.reply(200, { headers: { Expires: '3600' } });
      });
      await device.send(register(device.port, 'z9hG4bK-cf-1'), stack.port);
      const first = await device.nextMatching(/^SIP\/2\.0 200/);
      await device.send(register(device.port, 'z9hG4bK-cf-1'), stack.port);
      assert.equal(await device.nextMatching(/^SIP\/2\.0 200/), first, 'the very same response');
      assert.equal(runs, 1, 'the retransmission did not reach the handler');
      assert.equal(stack.stats().serverTransactions, 1);
      for (const b of ['z9hG4bK-cf-2', 'z9hG4bK-cf-3']) {
        await device.send(register(device.port, b), stack.port);
        await device.nextMatching(/^SIP\/2\.0 200/);
      }
      assert.deepEqual([runs, stack.stats().serverTransactions, stack.stats().completedFinalsEvicted], [3, 2, 1]);
      await device.send(register(device.port, 'z9hG4bK-cf-1'), stack.port);
      const again = await device.nextMatching(/^SIP\/2\.0 200/);
      assert.equal(runs, 4, 'evicted before Timer J: handled as a new request');
      assert.notEqual(again, first, 'a new answer (another To-tag)');
    } finally {
      device.close();
      await stack.close();
    }
  });
});
