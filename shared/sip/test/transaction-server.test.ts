// RFC 3261 §17.2 server transactions under a FakeClock; expectations computed by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InviteServerTransaction } from '../src/transaction/server-invite.ts';
import { NonInviteServerTransaction } from '../src/transaction/server-non-invite.ts';
import { describeSent, makeRequest, makeResponse, recordingEnv, recordingTu, times } from './support/transaction-fixtures.ts';

describe('non-INVITE server transaction (§17.2.2)', () => {
  it('discards retransmissions in Trying, resends the provisional in Proceeding', () => {
    const { env, sent } = recordingEnv();
    const { tu } = recordingTu();
    const req = makeRequest('MESSAGE');
    const tx = new NonInviteServerTransaction(req, env, tu);
    assert.equal(tx.receiveRequest(req), 'absorbed');
    assert.equal(sent.length, 0);
    tx.respond(makeResponse(req, 100));
    tx.receiveRequest(req);
    assert.deepEqual(sent.map(describeSent), ['100', '100']);
  });

  it('answers retransmitted requests with the final response during Timer J = 64*T1', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('REGISTER');
    const tx = new NonInviteServerTransaction(req, env, tu);
    clock.advance(100);
    assert.equal(tx.respond(makeResponse(req, 200)), true);
    clock.advance(500);
    tx.receiveRequest(req);
    clock.advance(10_000);
    tx.receiveRequest(req);
    assert.deepEqual(times(sent), [100, 600, 10_600]);
    assert.equal(tx.respond(makeResponse(req, 500)), false, 'a second final is refused');
    clock.advance(21_499); // t = 32099
    assert.equal(tx.currentState, 'completed');
    clock.advance(1); // t = 32100 = 100 + 32000
    assert.deepEqual(events, ['terminated']);
    assert.equal(clock.pending, 0);
  });

  it('over TCP terminates as soon as the final is sent (Timer J = 0)', () => {
    const { env, clock } = recordingEnv({ reliable: true });
    const { tu, events } = recordingTu();
    const req = makeRequest('MESSAGE');
    const tx = new NonInviteServerTransaction(req, env, tu);
    tx.respond(makeResponse(req, 200));
    assert.deepEqual(events, ['terminated']);
    assert.equal(clock.pending, 0);
  });
});

describe('INVITE server transaction (§17.2.1)', () => {
  const trying = (req: ReturnType<typeof makeRequest>) => () => makeResponse(req, 100);

  it('sends 100 Trying after 200 ms when the TU has not answered', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu } = recordingTu();
    const req = makeRequest('INVITE');
    const tx = new InviteServerTransaction(req, env, tu, trying(req));
    tx.start();
    clock.advance(199);
    assert.equal(sent.length, 0);
    clock.advance(1);
    assert.deepEqual(sent.map((s) => `${s.at}:${describeSent(s)}`), ['200:100']);
    tx.receiveRequest(req); // retransmitted INVITE → latest provisional again
    assert.deepEqual(sent.map(describeSent), ['100', '100']);
  });

  it('sends no 100 when the TU answers within 200 ms', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu } = recordingTu();
    const req = makeRequest('INVITE');
    const tx = new InviteServerTransaction(req, env, tu, trying(req));
    tx.start();
    clock.advance(150);
    tx.respond(makeResponse(req, 180));
    clock.advance(1000);
    assert.deepEqual(sent.map(describeSent), ['180']);
  });

  it('retransmits a non-2xx final with Timer G doubling to T2 and times out on Timer H', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE');
    const tx = new InviteServerTransaction(req, env, tu);
    tx.start();
    clock.advance(1000);
    tx.respond(makeResponse(req, 486));
    clock.advance(31_999); // t = 32999
    // G: 500, 1000, 2000, 4000, 4000 ... from t=1000: 1500, 2500, 4500, 8500, ..., 32500
    assert.deepEqual(times(sent), [1000, 1500, 2500, 4500, 8500, 12500, 16500, 20500, 24500, 28500, 32500]);
    assert.deepEqual(events, []);
    clock.advance(1); // t = 33000 = 1000 + 64*T1
    assert.deepEqual(events, ['terminated', 'timeout']);
    assert.equal(clock.pending, 0);
  });

  it('absorbs INVITE retransmissions with the final, ACK → Confirmed, Timer I = T4 absorbs ACKs', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE');
    const ack = makeRequest('ACK');
    const tx = new InviteServerTransaction(req, env, tu);
    tx.start();
    tx.respond(makeResponse(req, 603)); // t = 0
    clock.advance(700); // G fired at 500
    assert.equal(tx.receiveRequest(req), 'absorbed'); // → resend 603 at 700
    clock.advance(300); // t = 1000: not yet G (next at 1500)
    assert.equal(tx.receiveRequest(ack), 'absorbed');
    assert.equal(tx.currentState, 'confirmed');
    clock.advance(1000);
    assert.equal(tx.receiveRequest(ack), 'absorbed');
    assert.deepEqual(times(sent), [0, 500, 700]);
    clock.advance(3999); // t = 5999
    assert.equal(tx.currentState, 'confirmed');
    clock.advance(1); // t = 6000 = 1000 + T4
    assert.deepEqual(events, ['terminated']);
  });

  it('over TCP: no Timer G, ACK terminates at once (Timer I = 0)', () => {
    const { clock, env, sent } = recordingEnv({ reliable: true });
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE');
    const tx = new InviteServerTransaction(req, env, tu);
    tx.respond(makeResponse(req, 486));
    clock.advance(10_000);
    assert.deepEqual(times(sent), [0]);
    tx.receiveRequest(makeRequest('ACK'));
    assert.deepEqual(events, ['terminated']);
    assert.equal(clock.pending, 0);
  });

  it('over TCP still times out on Timer H without an ACK', () => {
    const { clock, env } = recordingEnv({ reliable: true });
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE');
    new InviteServerTransaction(req, env, tu).respond(makeResponse(req, 486));
    clock.advance(32_000);
    assert.deepEqual(events, ['terminated', 'timeout']);
  });

  it('after a 2xx: absorbs INVITE retransmissions, passes ACK up, lets the TU resend 2xx, ends on Timer L', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE');
    const tx = new InviteServerTransaction(req, env, tu);
    const ok = makeResponse(req, 200);
    tx.respond(ok);
    assert.equal(tx.currentState, 'accepted');
    assert.equal(tx.receiveRequest(req), 'absorbed');
    assert.equal(tx.respond(ok), true); // TU-driven 2xx retransmission (§13.3.1.4)
    assert.equal(tx.receiveRequest(makeRequest('ACK')), 'pass-to-tu');
    assert.equal(tx.respond(makeResponse(req, 486)), false);
    assert.deepEqual(sent.map(describeSent), ['200', '200']);
    clock.advance(32_000);
    assert.deepEqual(events, ['terminated']);
  });
});
