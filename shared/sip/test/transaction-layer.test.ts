// RFC 3261 §17.1.3 / §17.2.3 / §9.2 matching, with hand-built messages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../src/clock.ts';
import { clientKey, serverKey, TransactionLayer } from '../src/transaction/layer.ts';
import { resolveTimers } from '../src/transaction/timers.ts';
import { makeRequest, makeResponse, recordingTu } from './support/transaction-fixtures.ts';

const sink = { reliable: false, send: () => {} };
const serverTu = { onTimeout: () => {}, onTransportError: () => {}, onTerminated: () => {} };

describe('transaction matching', () => {
  it('§17.1.3: response matches by top-Via branch and CSeq method', () => {
    const inv = makeRequest('INVITE', 'z9hG4bKaaa');
    const cancel = makeRequest('CANCEL', 'z9hG4bKaaa');
    assert.equal(clientKey(makeResponse(inv, 200)), 'z9hG4bKaaa|INVITE');
    assert.equal(clientKey(makeResponse(cancel, 200)), 'z9hG4bKaaa|CANCEL');
  });

  it('§17.2.3: branch + sent-by + method; ACK maps to the INVITE transaction', () => {
    assert.equal(serverKey(makeRequest('INVITE', 'z9hG4bKb1')), 'z9hG4bKb1|127.0.0.1:5060|INVITE');
    assert.equal(serverKey(makeRequest('ACK', 'z9hG4bKb1')), 'z9hG4bKb1|127.0.0.1:5060|INVITE');
  });

  it('a branch without the magic cookie (RFC 2543 peer) still gets a stable key', () => {
    const req = makeRequest('MESSAGE', '1234');
    assert.equal(serverKey(req), serverKey(makeRequest('MESSAGE', '1234')));
    assert.match(serverKey(req), /^2543\|call-1@127\.0\.0\.1\|1\|from1\|127\.0\.0\.1:5060\|1234\|MESSAGE$/);
  });

  it('routes responses and retransmissions to the right transaction, and forgets terminated ones', () => {
    const clock = new FakeClock();
    const layer = new TransactionLayer(clock, resolveTimers({}));
    const { tu, events } = recordingTu();
    const msg = makeRequest('MESSAGE', 'z9hG4bKc1');
    layer.startClient(msg, { reliable: true, send: () => {} }, tu);
    assert.equal(layer.matchResponse(makeResponse(makeRequest('MESSAGE', 'z9hG4bKother'), 200)), undefined);
    layer.matchResponse(makeResponse(msg, 200))?.receiveResponse(makeResponse(msg, 200));
    assert.deepEqual(events, ['response:200', 'terminated']);
    assert.deepEqual(layer.size, { clients: 0, servers: 0 });

    const inv = makeRequest('INVITE', 'z9hG4bKs1');
    const stx = layer.startServer(inv, sink, serverTu);
    assert.equal(layer.matchRequest(makeRequest('INVITE', 'z9hG4bKs1')), stx);
    assert.equal(layer.matchRequest(makeRequest('ACK', 'z9hG4bKs1')), stx);
    assert.equal(layer.matchCancelTarget(makeRequest('CANCEL', 'z9hG4bKs1')), stx, '§9.2');
    assert.equal(layer.matchRequest(makeRequest('CANCEL', 'z9hG4bKs1')), undefined, 'CANCEL is its own transaction');
    layer.close();
    assert.equal(clock.pending, 0);
  });

  it('a different sent-by with the same branch is a different transaction', () => {
    const layer = new TransactionLayer(new FakeClock(), resolveTimers({}));
    const a = makeRequest('MESSAGE', 'z9hG4bKsame');
    const b = makeRequest('MESSAGE', 'z9hG4bKsame');
    b.headers.set('Via', 'SIP/2.0/UDP 10.9.9.9:5060;branch=z9hG4bKsame');
    layer.startServer(a, sink, serverTu);
    assert.equal(layer.matchRequest(b), undefined);
  });
});
