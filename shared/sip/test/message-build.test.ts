// createRequest / createResponse (RFC 3261 §8.1.1, §8.2.6) and the id generators.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BRANCH_MAGIC_COOKIE, createRequest, createResponse, generateBranch, generateCallId, generateTag, getFrom, getTo, getTopVia,
  parseSipMessage, parseUri, parseViaHop, serializeSipMessage, SipStatus, splitHeaderValues, type SipRequest,
} from '../src/index.ts';
import { rewriteTopVia } from '../src/transport/inbound.ts';

const INVITE = [
  'INVITE sip:34020000001310000001@192.168.1.64:5060 SIP/2.0',
  'Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKproxy',
  'Via: SIP/2.0/UDP 10.0.0.2:5060;rport=5060;received=10.0.0.2;branch=z9hG4bKplat',
  'Record-Route: <sip:10.0.0.1;lr>',
  'From: <sip:34020000002000000001@3402000000>;tag=p1',
  'To: <sip:34020000001310000001@3402000000>',
  'Call-ID: play-1@10.0.0.2',
  'CSeq: 20 INVITE',
  'Timestamp: 54',
  'Content-Length: 0',
  '',
  '',
].join('\r\n');
const invite = (): SipRequest => {
  const m = parseSipMessage(Buffer.from(INVITE));
  assert.ok(m.type === 'request');
  return m;
};

describe('createResponse (RFC 3261 §8.2.6)', () => {
  it('copies Via lines in order, From, Call-ID, CSeq; adds the given To-tag; copies Record-Route on 2xx INVITE', () => {
    const res = createResponse(invite(), SipStatus.OK, undefined, { toTag: 'dev1', contact: '<sip:34020000001310000001@192.168.1.64:5060>' });
    assert.equal(res.reason, 'OK');
    assert.deepEqual(res.headers.entries(), [
      ['Via', 'SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKproxy'],
      ['Via', 'SIP/2.0/UDP 10.0.0.2:5060;rport=5060;received=10.0.0.2;branch=z9hG4bKplat'],
      ['From', '<sip:34020000002000000001@3402000000>;tag=p1'],
      ['To', '<sip:34020000001310000001@3402000000>;tag=dev1'],
      ['Call-ID', 'play-1@10.0.0.2'],
      ['CSeq', '20 INVITE'],
      ['Record-Route', '<sip:10.0.0.1;lr>'],
      ['Contact', '<sip:34020000001310000001@192.168.1.64:5060>'],
    ]);
  });

  it('100 Trying: no generated To-tag, Timestamp copied (§8.2.6.1), no Record-Route', () => {
    const res = createResponse(invite(), SipStatus.Trying);
    assert.equal(res.headers.get('To'), '<sip:34020000001310000001@3402000000>');
    assert.equal(res.headers.get('Timestamp'), '54');
    assert.equal(res.headers.has('Record-Route'), false);
  });

  it('generates a To-tag for final responses and keeps an existing one (in-dialog requests)', () => {
    const tag = getTo(createResponse(invite(), SipStatus.BusyHere)).params.get('tag');
    assert.match(tag ?? '', /^[0-9a-f]{16}$/);
    const inDialog = invite();
    inDialog.headers.set('To', '<sip:34020000001310000001@3402000000>;tag=existing');
    assert.equal(createResponse(inDialog, SipStatus.OK, undefined, { toTag: 'other' }).headers.get('To'), '<sip:34020000001310000001@3402000000>;tag=existing');
  });

  it('addr-spec To gets the tag as a header parameter; unparsable To is handled textually', () => {
    const req = invite();
    req.headers.set('To', 'sip:bob@example.com');
    assert.equal(createResponse(req, 200, 'OK', { toTag: 't' }).headers.get('To'), 'sip:bob@example.com;tag=t');
    req.headers.set('To', '"broken <sip:bob@example.com>;TAG=x');
    assert.equal(createResponse(req, 400, 'Bad Request', { toTag: 't' }).headers.get('To'), '"broken <sip:bob@example.com>;TAG=x');
  });

  it('serializes with a byte-accurate Content-Length for a GB2312 body', () => {
    const body = Buffer.from([0x3c, 0x61, 0x3e, 0xd5, 0xc5, 0x3c, 0x2f, 0x61, 0x3e]);
    const res = createResponse(invite(), 200, 'OK', { toTag: 'x', body, contentType: 'Application/MANSCDP+xml' });
    const wire = serializeSipMessage(res);
    assert.ok(wire.includes(Buffer.from('Content-Type: Application/MANSCDP+xml\r\nContent-Length: 9\r\n\r\n')));
    assert.deepEqual(wire.subarray(wire.length - 9), body);
  });

  it('custom reason phrase and extension status codes', () => {
    assert.equal(createResponse(invite(), 486, 'Busy Now').reason, 'Busy Now');
    assert.equal(createResponse(invite(), 499).reason, 'Client Error');
  });
});

describe('createRequest (RFC 3261 §8.1.1)', () => {
  it('mandatory headers in order, generated From tag and Call-ID, Route set and Contact', () => {
    const req = createRequest({
      method: 'MESSAGE',
      uri: 'sip:34020000001320000001@3402000000',
      from: '<sip:34020000002000000001@3402000000>',
      to: '<sip:34020000001320000001@3402000000>',
      cseq: 7,
      via: { protocol: 'SIP/2.0', transport: 'UDP', host: '10.0.0.2', port: 5060, params: new Map([['rport', null], ['branch', 'z9hG4bKb1']]) },
      route: ['<sip:34020000001320000001@192.168.1.64:5060;lr>'],
      contact: '<sip:34020000002000000001@10.0.0.2:5060>',
      headers: [['User-Agent', 'vms']],
      body: '<?xml version="1.0"?><Query/>',
      contentType: 'Application/MANSCDP+xml',
    });
    assert.deepEqual(req.headers.entries().map(([n]) => n), [
      'Via', 'Max-Forwards', 'Route', 'From', 'To', 'Call-ID', 'CSeq', 'Contact', 'User-Agent', 'Content-Type',
    ]);
    assert.equal(req.headers.get('Via'), 'SIP/2.0/UDP 10.0.0.2:5060;rport;branch=z9hG4bKb1');
    assert.equal(req.headers.get('Max-Forwards'), '70');
    assert.equal(req.headers.get('CSeq'), '7 MESSAGE');
    assert.match(getFrom(req).params.get('tag') ?? '', /^[0-9a-f]{16}$/);
    assert.match(req.headers.get('Call-ID') ?? '', /^[0-9a-f]{32}$/);
    assert.equal(req.rawUri, 'sip:34020000001320000001@3402000000');
    const again = parseSipMessage(serializeSipMessage(req));
    assert.equal(again.body.toString(), '<?xml version="1.0"?><Query/>');
  });

  it('keeps an existing From tag and accepts structured addresses', () => {
    const req = createRequest({
      method: 'REGISTER',
      uri: parseUri('sip:3402000000'),
      from: { displayName: null, uri: parseUri('sip:34020000001320000001@3402000000'), params: new Map([['tag', 'keep']]) },
      to: '<sip:34020000001320000001@3402000000>',
      cseq: 1,
      callId: 'reg-1',
    });
    assert.equal(req.headers.get('From'), '<sip:34020000001320000001@3402000000>;tag=keep');
    assert.equal(req.headers.has('Via'), false); // the transport pushes its own
  });
});

describe('generators', () => {
  it('branch carries the RFC 3261 magic cookie and is unique', () => {
    const branches = new Set(Array.from({ length: 1000 }, generateBranch));
    assert.equal(branches.size, 1000);
    for (const b of branches) assert.ok(b.startsWith(BRANCH_MAGIC_COOKIE) && b.length === 27);
  });

  it('tags and Call-IDs are random hex, Call-ID optionally @host', () => {
    assert.notEqual(generateTag(), generateTag());
    assert.match(generateCallId('10.0.0.2'), /^[0-9a-f]{32}@10\.0\.0\.2$/);
  });
});

describe('parsed header views (issue 11: parsed once per header set)', () => {
  it('getTopVia, getFrom and getTo parse once while the header is unchanged, again once it changes; a response reuses the request\'s', () => {
    const req = invite();
    const via = getTopVia(req);
    assert.equal(getTopVia(req), via, 'the same parse');
    assert.equal(getFrom(req), getFrom(req));
    assert.equal(getTo(req), getTo(req));
    assert.deepEqual([via.host, via.params.get('branch')], ['10.0.0.1', 'z9hG4bKproxy']);
    const res = createResponse(req, SipStatus.OK, undefined, { toTag: 't1' });
    assert.equal(getTopVia(res), via, 'the response copies the same Via line: its parse is reused');
    assert.equal(getFrom(res), getFrom(req));
    assert.equal(getTo(res).params.get('tag'), 't1', 'To differs (the tag was added): parsed again');
    req.headers.prepend('Via', 'SIP/2.0/TCP 10.0.0.9:5061;branch=z9hG4bKnew');
    assert.deepEqual([getTopVia(req).host, getTopVia(req).transport], ['10.0.0.9', 'TCP'], 'a changed Via is parsed again');
    req.headers.set('From', '<sip:other@3402000000>;tag=p2');
    assert.equal(getFrom(req).uri.user, 'other');
    assert.equal(getTopVia(res), via, "the response's headers are its own");
    // the transport's received/rport stamp rewrites the Via line in place: From and To parses stay, and the
    // stamped hop is the new line's parse (not parsed again: it is what the line parses to)
    const from = getFrom(req);
    const top = getTopVia(req);
    top.params.set('received', '10.9.9.9');
    rewriteTopVia(req, top);
    assert.equal(getFrom(req), from);
    assert.equal(getTopVia(req), top);
    assert.equal(getTopVia(req).params.get('received'), '10.9.9.9');
    assert.deepEqual(parseViaHop(splitHeaderValues(req.headers.get('Via') ?? '')[0] ?? ''), top, 'the line parses to the hop kept');
    assert.equal(req.headers.getLines('Via').length, 3, 'the other Via lines untouched');
    req.headers.set('To', 'not a name-addr <');
    assert.throws(() => getTo(req), /missing >/, 'a bad value throws, and is not kept');
    assert.throws(() => getTo(req), /missing >/);
  });
});
