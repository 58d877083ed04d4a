// RFC 3261 §17.1 client transactions under a FakeClock. Expected send times are computed by hand
// from the timer rules (T1 = 500, T2 = 4000, T4 = 5000 unless stated), never by running the code.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InviteClientTransaction } from '../src/transaction/client-invite.ts';
import { NonInviteClientTransaction } from '../src/transaction/client-non-invite.ts';
import { describeSent, makeRequest, makeResponse, recordingEnv, recordingTu, times } from './support/transaction-fixtures.ts';

describe('non-INVITE client transaction (§17.1.2)', () => {
  it('retransmits over UDP with Timer E doubling up to T2, then times out on Timer F = 64*T1', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const tx = new NonInviteClientTransaction(makeRequest('MESSAGE'), env, tu);
    tx.start();
    clock.advance(31_999);
    // E: 500, 1000, 2000, 4000 (=T2), then 4000 flat: 0+500=500, +1000=1500, +2000=3500, +4000=7500 ... 31500
    assert.deepEqual(times(sent), [0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
    assert.deepEqual(events, []);
    clock.advance(1);
    assert.deepEqual(events, ['terminated', 'timeout']);
    assert.equal(tx.currentState, 'terminated');
    assert.equal(clock.pending, 0);
  });

  it('uses the configured T1/T2 (T1=100, T2=400 → F=6400)', () => {
    const { clock, env, sent } = recordingEnv({ timers: { T1: 100, T2: 400 } });
    const { tu, events } = recordingTu();
    new NonInviteClientTransaction(makeRequest('MESSAGE'), env, tu).start();
    clock.advance(6_399);
    assert.deepEqual(times(sent), [0, 100, 300, 700, 1100, 1500, 1900, 2300, 2700, 3100, 3500, 3900, 4300, 4700, 5100, 5500, 5900, 6300]);
    clock.advance(1);
    assert.deepEqual(events, ['terminated', 'timeout']);
  });

  it('switches Timer E to T2 once Proceeding', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('MESSAGE');
    const tx = new NonInviteClientTransaction(req, env, tu);
    tx.start();
    clock.advance(600);
    tx.receiveResponse(makeResponse(req, 100));
    assert.equal(tx.currentState, 'proceeding');
    clock.advance(31_399); // to t = 31999
    // Trying: sends at 0 and 500 (next interval 1000 → 1500); at 1500 in Proceeding → T2 steps.
    assert.deepEqual(times(sent), [0, 500, 1500, 5500, 9500, 13500, 17500, 21500, 25500, 29500]);
    assert.deepEqual(events, ['response:100']);
  });

  it('absorbs final-response retransmissions during Timer K = T4, then terminates', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('MESSAGE');
    const tx = new NonInviteClientTransaction(req, env, tu);
    tx.start();
    clock.advance(2000);
    tx.receiveResponse(makeResponse(req, 200));
    assert.equal(tx.currentState, 'completed');
    clock.advance(1000);
    tx.receiveResponse(makeResponse(req, 200)); // retransmission: not passed up
    clock.advance(3999); // t = 6999
    assert.equal(tx.currentState, 'completed');
    clock.advance(1); // t = 7000 = 2000 + T4
    assert.equal(tx.currentState, 'terminated');
    assert.deepEqual(events, ['response:200', 'terminated']);
    assert.deepEqual(times(sent), [0, 500, 1500]); // retransmissions stopped at the final response
  });

  it('never retransmits over TCP and terminates at once after the final (Timer K = 0)', () => {
    const { clock, env, sent } = recordingEnv({ reliable: true });
    const { tu, events } = recordingTu();
    const req = makeRequest('MESSAGE');
    const tx = new NonInviteClientTransaction(req, env, tu);
    tx.start();
    clock.advance(10_000);
    assert.deepEqual(times(sent), [0]);
    tx.receiveResponse(makeResponse(req, 200));
    assert.deepEqual(events, ['response:200', 'terminated']);
    assert.equal(clock.pending, 0);
  });

  it('still times out on Timer F over TCP', () => {
    const { clock, env, sent } = recordingEnv({ reliable: true });
    const { tu, events } = recordingTu();
    new NonInviteClientTransaction(makeRequest('MESSAGE'), env, tu).start();
    clock.advance(32_000);
    assert.deepEqual(times(sent), [0]);
    assert.deepEqual(events, ['terminated', 'timeout']);
  });

  it('reports a transport error and terminates', () => {
    const { env } = recordingEnv();
    const { tu, events } = recordingTu();
    const tx = new NonInviteClientTransaction(makeRequest('MESSAGE'), env, tu);
    tx.start();
    tx.transportError(new Error('ECONNREFUSED'));
    tx.transportError(new Error('again'));
    assert.deepEqual(events, ['terminated', 'transport-error:ECONNREFUSED']);
  });
});

describe('INVITE client transaction (§17.1.1)', () => {
  it('retransmits with Timer A doubling without cap, times out on Timer B = 64*T1', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    new InviteClientTransaction(makeRequest('INVITE'), env, tu).start();
    clock.advance(31_999);
    // A: 500, 1000, 2000, 4000, 8000, 16000 → 500, 1500, 3500, 7500, 15500, 31500
    assert.deepEqual(times(sent), [0, 500, 1500, 3500, 7500, 15500, 31500]);
    clock.advance(1);
    assert.deepEqual(events, ['terminated', 'timeout']);
    assert.equal(clock.pending, 0);
  });

  it('stops retransmitting and disarms Timer B on a provisional', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE');
    const tx = new InviteClientTransaction(req, env, tu);
    tx.start();
    clock.advance(700);
    tx.receiveResponse(makeResponse(req, 100));
    tx.receiveResponse(makeResponse(req, 180));
    clock.advance(100_000);
    assert.deepEqual(times(sent), [0, 500]);
    assert.deepEqual(events, ['response:100', 'response:180']);
    assert.equal(tx.currentState, 'proceeding');
  });

  it('ACKs a non-2xx on the same branch, re-ACKs retransmissions, holds Timer D = 32 s', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE', 'z9hG4bKinv1', 7);
    const tx = new InviteClientTransaction(req, env, tu);
    tx.start();
    clock.advance(5000); // INVITE at 0, 500, 1500, 3500
    tx.receiveResponse(makeResponse(req, 486, 'uas9'));
    clock.advance(1000);
    tx.receiveResponse(makeResponse(req, 486, 'uas9'));
    assert.deepEqual(sent.map(describeSent), ['INVITE', 'INVITE', 'INVITE', 'INVITE', 'ACK', 'ACK']);
    assert.deepEqual(times(sent).slice(4), [5000, 6000]);
    assert.deepEqual(events, ['response:486']);

    const ack = sent[4]!.msg;
    assert.equal(ack.type, 'request');
    if (ack.type !== 'request') return;
    assert.equal(ack.rawUri, req.rawUri);
    assert.deepEqual(ack.headers.getLines('Via'), ['SIP/2.0/UDP 127.0.0.1:5060;rport;branch=z9hG4bKinv1']);
    assert.equal(ack.headers.get('CSeq'), '7 ACK');
    assert.equal(ack.headers.get('To'), '<sip:34020000001320000001@3402000000>;tag=uas9');
    assert.equal(ack.headers.get('From'), req.headers.get('From'));
    assert.equal(ack.headers.get('Call-ID'), req.headers.get('Call-ID'));
    assert.deepEqual(ack.headers.getLines('Route'), ['<sip:10.0.0.1;lr>']);

    clock.advance(30_999); // t = 36999 = 5000 + 32000 - 1
    assert.equal(tx.currentState, 'completed');
    clock.advance(1);
    assert.equal(tx.currentState, 'terminated');
    assert.deepEqual(events, ['response:486', 'terminated']);
  });

  it('over TCP: single send, ACK for non-2xx, then terminates at once (Timer D = 0)', () => {
    const { clock, env, sent } = recordingEnv({ reliable: true });
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE');
    const tx = new InviteClientTransaction(req, env, tu);
    tx.start();
    clock.advance(20_000);
    tx.receiveResponse(makeResponse(req, 404));
    assert.deepEqual(sent.map(describeSent), ['INVITE', 'ACK']);
    assert.deepEqual(events, ['response:404', 'terminated']);
    assert.equal(clock.pending, 0);
  });

  it('passes 2xx and its retransmissions to the TU (RFC 6026 Accepted), never ACKs a 2xx itself', () => {
    const { clock, env, sent } = recordingEnv();
    const { tu, events } = recordingTu();
    const req = makeRequest('INVITE');
    const tx = new InviteClientTransaction(req, env, tu);
    tx.start();
    clock.advance(100);
    tx.receiveResponse(makeResponse(req, 200));
    clock.advance(500);
    tx.receiveResponse(makeResponse(req, 200));
    assert.equal(tx.currentState, 'accepted');
    assert.deepEqual(sent.map(describeSent), ['INVITE']);
    clock.advance(31_499); // t = 32099 = 100 + 64*T1 - 1
    assert.equal(tx.currentState, 'accepted');
    clock.advance(1);
    assert.deepEqual(events, ['response:200', 'response:200', 'terminated']);
  });
});
