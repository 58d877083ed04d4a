// RFC 3261 §12 dialog state, from hand-written wire messages; expectations written by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptInDialogRequest, createInDialogRequest, createUacDialogState, createUasDialogState } from '../src/dialog/dialog-state.ts';
import { parseSipMessage } from '../src/message/parse.ts';
import type { SipRequest, SipResponse } from '../src/message/types.ts';

const wire = (lines: string[]): Buffer => Buffer.from([...lines, 'Content-Length: 0', '', ''].join('\r\n'), 'latin1');
const req = (lines: string[]): SipRequest => parseSipMessage(wire(lines)) as SipRequest;
const res = (lines: string[]): SipResponse => parseSipMessage(wire(lines)) as SipResponse;

const INVITE = req([
  'INVITE sip:34020000001320000001@192.168.1.64:5060 SIP/2.0',
  'Via: SIP/2.0/UDP 10.0.0.1:5060;rport;branch=z9hG4bKinv',
  'From: <sip:34020000002000000001@3402000000>;tag=local1',
  'To: <sip:34020000001320000001@3402000000>',
  'Call-ID: c1@10.0.0.1',
  'CSeq: 20 INVITE',
  'Contact: <sip:34020000002000000001@10.0.0.1:5060>',
]);

describe('UAC dialog state (§12.1.2)', () => {
  const ok = res([
    'SIP/2.0 200 OK',
    'Via: SIP/2.0/UDP 10.0.0.1:5060;rport=5060;branch=z9hG4bKinv',
    'Record-Route: <sip:p1.example;lr>, <sip:p2.example;lr>',
    'From: <sip:34020000002000000001@3402000000>;tag=local1',
    'To: <sip:34020000001320000001@3402000000>;tag=remote1',
    'Call-ID: c1@10.0.0.1',
    'CSeq: 20 INVITE',
    'Contact: <sip:34020000001320000001@192.168.1.64:5060;transport=udp>',
  ]);

  it('takes tags, CSeq, reversed Record-Route and the Contact as remote target', () => {
    const s = createUacDialogState(INVITE, ok, 'invite');
    assert.equal(s.callId, 'c1@10.0.0.1');
    assert.equal(s.localTag, 'local1');
    assert.equal(s.remoteTag, 'remote1');
    assert.equal(s.localSeq, 20);
    assert.equal(s.remoteSeq, null);
    assert.deepEqual(s.routeSet.map((r) => r.uri.host), ['p2.example', 'p1.example']);
    assert.equal(s.remoteTarget.host, '192.168.1.64');
    assert.equal(s.secure, false);
  });

  it('BYE: CSeq + 1, Request-URI = remote target, Route = route set, tags in From/To', () => {
    const s = createUacDialogState(INVITE, ok, 'invite');
    const bye = createInDialogRequest(s, 'BYE');
    assert.equal(bye.rawUri, 'sip:34020000001320000001@192.168.1.64:5060;transport=udp');
    assert.equal(bye.headers.get('CSeq'), '21 BYE');
    assert.deepEqual(bye.headers.getLines('Route'), ['<sip:p2.example;lr>', '<sip:p1.example;lr>']);
    assert.equal(bye.headers.get('From'), '<sip:34020000002000000001@3402000000>;tag=local1');
    assert.equal(bye.headers.get('To'), '<sip:34020000001320000001@3402000000>;tag=remote1');
    assert.equal(bye.headers.get('Call-ID'), 'c1@10.0.0.1');
    assert.equal(bye.headers.has('Via'), false, 'the sender pushes its Via');
    const info = createInDialogRequest(s, 'INFO', { body: 'PLAY RTSP/1.0' });
    assert.equal(info.headers.get('CSeq'), '22 INFO');
    assert.equal(s.localSeq, 22);
  });

  it('2xx ACK reuses the INVITE CSeq number (§13.2.2.4) and does not consume one', () => {
    const s = createUacDialogState(INVITE, ok, 'invite');
    const ack = createInDialogRequest(s, 'ACK', {}, 20);
    assert.equal(ack.headers.get('CSeq'), '20 ACK');
    assert.equal(s.localSeq, 20);
  });

  it('GB28181 device answering without To-tag: empty remote tag, To written without tag', () => {
    const untagged = res([
      'SIP/2.0 200 OK',
      'Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKinv',
      'From: <sip:34020000002000000001@3402000000>;tag=local1',
      'To: <sip:34020000001320000001@3402000000>',
      'Call-ID: c1@10.0.0.1',
      'CSeq: 20 INVITE',
    ]);
    const s = createUacDialogState(INVITE, untagged, 'invite');
    assert.equal(s.remoteTag, '');
    assert.equal(s.remoteTarget.host, '192.168.1.64', 'no Contact: keep the Request-URI');
    assert.equal(createInDialogRequest(s, 'BYE').headers.get('To'), '<sip:34020000001320000001@3402000000>');
  });

  it('strict routing (§12.2.1.1): first route becomes the Request-URI, remote target goes last', () => {
    const strict = res([
      'SIP/2.0 200 OK',
      'Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKinv',
      'Record-Route: <sip:strict.example;transport=udp>',
      'From: <sip:34020000002000000001@3402000000>;tag=local1',
      'To: <sip:34020000001320000001@3402000000>;tag=r',
      'Call-ID: c1@10.0.0.1',
      'CSeq: 20 INVITE',
      'Contact: <sip:dev@192.168.1.64>',
    ]);
    const bye = createInDialogRequest(createUacDialogState(INVITE, strict, 'invite'), 'BYE');
    assert.equal(bye.rawUri, 'sip:strict.example');
    assert.deepEqual(bye.headers.getLines('Route'), ['<sip:dev@192.168.1.64>']);
  });
});

describe('UAS dialog state (§12.1.1) and incoming requests (§12.2.2)', () => {
  it('takes Record-Route in order, remote CSeq, and starts its own CSeq at 1', () => {
    const sub = req([
      'SUBSCRIBE sip:34020000002000000001@10.0.0.1:5060 SIP/2.0',
      'Via: SIP/2.0/UDP 10.0.0.9:5060;branch=z9hG4bKsub',
      'Record-Route: <sip:p1.example;lr>, <sip:p2.example;lr>',
      'From: <sip:upper@3402000000>;tag=up1',
      'To: <sip:34020000002000000001@3402000000>',
      'Call-ID: sub-1',
      'CSeq: 7 SUBSCRIBE',
      'Event: Catalog',
      'Contact: <sip:upper@10.0.0.9:5060>',
    ]);
    const s = createUasDialogState(sub, 'mine', 'subscribe');
    assert.equal(s.localTag, 'mine');
    assert.equal(s.remoteTag, 'up1');
    assert.equal(s.remoteSeq, 7);
    assert.equal(s.localSeq, null);
    assert.deepEqual(s.routeSet.map((r) => r.uri.host), ['p1.example', 'p2.example']);
    const notify = createInDialogRequest(s, 'NOTIFY');
    assert.equal(notify.headers.get('CSeq'), '1 NOTIFY');
    assert.equal(notify.headers.get('From'), '<sip:34020000002000000001@3402000000>;tag=mine');
    assert.equal(notify.headers.get('To'), '<sip:upper@3402000000>;tag=up1');
    assert.equal(notify.rawUri, 'sip:upper@10.0.0.9:5060');
  });

  it('rejects a lower CSeq as out of order, accepts higher, refreshes the target on NOTIFY', () => {
    const s = createUacDialogState(
      INVITE,
      res([
        'SIP/2.0 200 OK',
        'Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKinv',
        'From: <sip:34020000002000000001@3402000000>;tag=local1',
        'To: <sip:34020000001320000001@3402000000>;tag=remote1',
        'Call-ID: c1@10.0.0.1',
        'CSeq: 20 INVITE',
        'Contact: <sip:dev@192.168.1.64>',
      ]),
      'subscribe',
    );
    const inDialog = (method: string, seq: number, contact?: string): SipRequest =>
      req([
        `${method} sip:34020000002000000001@10.0.0.1 SIP/2.0`,
        'Via: SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK' + seq,
        'From: <sip:34020000001320000001@3402000000>;tag=remote1',
        'To: <sip:34020000002000000001@3402000000>;tag=local1',
        'Call-ID: c1@10.0.0.1',
        `CSeq: ${seq} ${method}`,
        ...(contact === undefined ? [] : [`Contact: ${contact}`]),
      ]);
    assert.equal(acceptInDialogRequest(s, inDialog('NOTIFY', 5, '<sip:dev@192.168.1.99:5080>')), 'ok');
    assert.equal(s.remoteSeq, 5);
    assert.equal(s.remoteTarget.host, '192.168.1.99');
    assert.equal(acceptInDialogRequest(s, inDialog('INFO', 4)), 'out-of-order');
    assert.equal(acceptInDialogRequest(s, inDialog('INFO', 6, '<sip:x@1.1.1.1>')), 'ok');
    assert.equal(s.remoteTarget.host, '192.168.1.99', 'INFO is not a target refresh');
  });
});
