// Conformance on every SIP message captured in the repository's captures (@vms/fixtures). Expected values are
// copied by hand from the sample text; the parser never produces its own expectations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  getCallId, getContacts, getContentType, getCSeq, getExpires, getFrom, getMaxForwards, getRouteSet, getTo,
  getTopVia, getVias, parseDigestChallenge, parseDigestCredentials, parseSipMessage, serializeSipMessage,
  SipParseError, BODY_LENGTH_MISCOUNTED, type SipMessage,
} from '../src/index.ts';
import { loadAllSamples, loadSampleFile, sampleFiles, type SampleMessage } from './message-fixtures/samples.ts';

const all = loadAllSamples();
const sample = (file: string, index: number): SampleMessage => {
  const s = all.find((m) => m.file.startsWith(file) && m.index === index);
  assert.ok(s, `sample ${file}#${index}`);
  return s;
};
const parse = (file: string, index: number): SipMessage => parseSipMessage(sample(file, index).wire);
const toTag = (m: SipMessage): string | null | undefined => getTo(m).params.get('tag');
const fromTag = (m: SipMessage): string | null | undefined => getFrom(m).params.get('tag');

/**
 * Captures whose Content-Length does not describe the body text, and what RFC 3261 §18.3 makes of
 * them (body truncated to Content-Length; a longer Content-Length is an error, a 400 for requests).
 */
const LENGTH_QUIRKS = new Set(['03#4', '03#5', '06#0', '08#1', '12#3']);
const key = (s: SampleMessage): string => `${s.file.slice(0, 2)}#${s.index}`;

describe('sample loader', () => {
  it('finds the hand-counted number of SIP messages per file (template files hold bodies only)', () => {
    const counts = Object.fromEntries(sampleFiles().map((f) => [f.slice(0, 2), loadSampleFile(f).length]));
    assert.deepEqual(counts, {
      '01': 4, '02': 4, '03': 6, '04': 2, '05': 3, '06': 1, '07': 4, '08': 2, '09': 2,
      '10': 2, '11': 2, '12': 4, '13': 3, '14': 0, '15': 0, '16': 16, '17': 23, '18': 18,
    });
  });

  it('rebuilds datagrams of the recorded size, and flags exactly the captures with a wrong Content-Length', () => {
    for (const s of all) {
      if (s.annotatedBytes !== null && key(s) !== '12#3') assert.equal(s.wire.length, s.annotatedBytes, key(s));
    }
    assert.deepEqual(all.filter((s) => s.bodyVariant === 'mismatch').map(key), [...LENGTH_QUIRKS]);
    // 12#3: three bytes per SDP line end on the wire (576 bytes); the LF-only file cannot show which.
    assert.equal(sample('12', 3).annotatedBytes, 576);
  });
});

describe('every captured message', () => {
  for (const s of all.filter((m) => !LENGTH_QUIRKS.has(key(m)))) {
    it(`${key(s)} ${s.startLine.slice(0, 48)}`, () => {
      const msg = parseSipMessage(s.wire);
      // Header values as written in the capture (name/value split by the loader, not the parser).
      const expected = s.headerLines.filter(([n]) => n.toLowerCase() !== 'content-length').map(([, v]) => v);
      const got = msg.headers.entries().filter(([n]) => n !== 'Content-Length').map(([, v]) => v);
      assert.deepEqual(got, expected);
      assert.equal(msg.body.length, s.declaredLength ?? 0);
      // The transaction layer's needs: all of these must read on every real message.
      getVias(msg);
      getFrom(msg);
      getTo(msg);
      getCallId(msg);
      const cseq = getCSeq(msg);
      if (msg.type === 'request') assert.equal(cseq.method, msg.method);
      getContacts(msg);
      getRouteSet(msg, 'Route');
      getExpires(msg);
      getMaxForwards(msg);
      getContentType(msg);
      // Round trip: same header values and body, Content-Length rewritten from the body.
      const again = parseSipMessage(serializeSipMessage(msg));
      assert.deepEqual(again.headers.entries(), msg.headers.entries());
      assert.deepEqual(again.body, msg.body);
    });
  }
});

describe('hand-checked fields', () => {
  it('01 Ellean REGISTER: no To-tag, rport flag, Expires 3600', () => {
    const m = parse('01', 0);
    assert.equal(m.type === 'request' && m.method, 'REGISTER');
    assert.equal(m.type === 'request' && m.rawUri, 'sip:127.0.0.1:5060');
    assert.equal(getCallId(m), '9AYg0YVCn3xnoAhenTAV86kIglxU7kp5');
    assert.deepEqual(getCSeq(m), { seq: 2, method: 'REGISTER' });
    assert.equal(fromTag(m), '8OheCdgNir');
    assert.equal(toTag(m), undefined);
    const via = getTopVia(m);
    assert.deepEqual([via.transport, via.host, via.port], ['UDP', '127.0.0.1', 5061]);
    assert.deepEqual([...via.params], [['rport', null], ['branch', 'z9hG4bKGCOCco1Y4s2FSxggFwdM']]);
    const [contact] = getContacts(m);
    assert.deepEqual([contact?.uri.user, contact?.uri.host, contact?.uri.port], ['34020000001320000001', '127.0.0.1', 5061]);
    assert.equal(getExpires(m), 3600);
    assert.equal(getMaxForwards(m), 70);
  });

  it('01 401: To-tag added by the platform, MD5 challenge without qop', () => {
    const m = parse('01', 1);
    assert.deepEqual(m.type === 'response' && [m.status, m.reason], [401, 'Unauthorized']);
    assert.equal(toTag(m), 'plat7058');
    const c = parseDigestChallenge(m.headers.get('WWW-Authenticate') ?? '');
    assert.deepEqual([c.realm, c.nonce, c.algorithm, c.qop], ['3402000000', '99a7481d6aa8bd44c3e4e13f8dc70757', 'MD5', undefined]);
  });

  it('02 sbgb28181 REGISTER: Request-URI without user, Call-ID = device id, +sip.instance header param', () => {
    const m = parse('02', 0);
    assert.ok(m.type === 'request');
    assert.deepEqual([m.uri.user, m.uri.host, m.uri.port], [null, '3402000000', null]);
    assert.equal(getCallId(m), '34020000001320000009');
    assert.equal(fromTag(m), 'reg');
    assert.equal(getTopVia(m).params.has('rport'), false);
    const [contact] = getContacts(m);
    assert.equal(contact?.params.get('+sip.instance'), '"<urn:uuid:34020000001320000009>"');
    const cred = parseDigestCredentials(parse('02', 2).headers.get('Authorization') ?? '');
    assert.deepEqual([cred.qop, cred.nc, cred.cnonce, cred.uri], ['auth', '00000001', '5e7ce6', 'sip:3402000000']);
  });

  it('03 Hikvision: rport=7100 filled in by the 401, opaque, username "admin", Date without ms', () => {
    const reg = parse('03', 0);
    assert.ok(reg.type === 'request');
    assert.deepEqual([reg.uri.user, reg.uri.host, reg.uri.port], ['130909115229300920', '10.64.49.44', 7100]);
    assert.equal(getCallId(reg), '143225205');
    assert.equal(getExpires(reg), 7200);
    const challenge = parse('03', 1);
    assert.equal(getTopVia(challenge).params.get('rport'), '7100');
    assert.equal(toTag(challenge), '916944766');
    assert.equal(parseDigestChallenge(challenge.headers.get('WWW-Authenticate') ?? '').opaque, 'a853e4f25298413f9bf3a9aa6767857d');
    assert.equal(parseDigestCredentials(parse('03', 2).headers.get('Authorization') ?? '').username, 'admin');
    assert.equal(parse('03', 3).headers.get('Date'), '2013-09-10T16:01:51');
  });

  it('04 keepalives: LF-joined body counted exactly, mixed-case Content-Type', () => {
    const ellean = parse('04', 0);
    assert.equal(ellean.body.length, 166);
    assert.ok(ellean.body.toString('latin1').startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<Notify>'));
    assert.equal(getContentType(ellean)?.mediaType, 'application/manscdp+xml');
    assert.deepEqual(getCSeq(ellean), { seq: 4, method: 'MESSAGE' });
    const sbgb = parse('04', 1);
    assert.equal(getCallId(sbgb), '34020000001320000009keep');
    assert.equal(sbgb.body.length, 154);
    assert.ok(sbgb.body.toString('latin1').endsWith('<Status>OK</Status></Notify>'));
  });

  it('05 device 200 OK to a MESSAGE carries no To-tag', () => {
    const m = parse('05', 1);
    assert.deepEqual(m.type === 'response' && [m.status, m.reason], [200, 'OK']);
    assert.equal(toTag(m), undefined);
    assert.equal(fromTag(m), 'p114289107');
    assert.equal(getCallId(m), 'ff60f2e83d555e6e@127.0.0.1');
    assert.equal(parse('05', 2).body.length, 914);
  });

  it('10 RecordInfo: 7736-byte datagram with a 7382-byte body', () => {
    const s = sample('10', 1);
    assert.equal(s.wire.length, 7736);
    const m = parseSipMessage(s.wire);
    assert.equal(m.body.length, 7382);
    assert.ok(m.body.toString('latin1').endsWith('</RecordList></Response>'));
  });

  it('12 INVITE: Subject keeps its comma, upper-case APPLICATION/SDP, answers with and without To-tag', () => {
    const invite = parse('12', 0);
    assert.equal(invite.headers.get('Subject'), '34020000001310000001:0100000001,34020000002000000001:0');
    assert.equal(getContentType(invite)?.mediaType, 'application/sdp');
    assert.equal(invite.body.length, 214);
    assert.equal(toTag(parse('12', 1)), undefined); // Ellean: no To-tag on a 200 to INVITE
    const sbgb = parse('12', 2); // "Via:SIP/2.0/UDP …": no space after the colons
    assert.equal(getTopVia(sbgb).params.get('branch'), 'z9hG4bKb74bf86e5e');
    assert.equal(toTag(sbgb), 'ok');
    assert.equal(getCallId(sbgb), 'f0b4e64db4131122@127.0.0.1');
    assert.deepEqual(getCSeq(sbgb), { seq: 8, method: 'INVITE' });
  });

  it('13 SUBSCRIBE answers: Event with id param, and the wrong "presence" package', () => {
    assert.equal(parse('13', 0).headers.get('Event'), 'Catalog;id=1');
    assert.equal(getExpires(parse('13', 1)), 600);
    assert.equal(parse('13', 2).headers.get('Event'), 'presence');
  });

  it('16 VAG.Node: reason "Authentication Required.", double space after colon, Via last, no Max-Forwards', () => {
    const challenge = parse('16', 1);
    assert.deepEqual(challenge.type === 'response' && [challenge.status, challenge.reason], [401, 'Authentication Required.']);
    assert.equal(challenge.headers.get('To'), '<sip:34020000001180000001@3402000000>');
    const via = getTopVia(challenge);
    assert.deepEqual([via.params.get('rport'), via.params.get('received')], ['15070', '127.0.0.1']);
    assert.equal(parseDigestChallenge(challenge.headers.get('WWW-Authenticate') ?? '').algorithm, undefined);
    const query = parse('16', 4);
    assert.equal(query.headers.entries().at(-2)?.[0], 'Via');
    assert.deepEqual([...getTopVia(query).params], [['branch', 'z9hG4bK229390'], ['rport', null]]);
    assert.equal(getMaxForwards(query), null);
    assert.deepEqual(getCSeq(query), { seq: 91678, method: 'MESSAGE' });
    assert.equal(fromTag(query), '3Tg3SnB9');
    const ok = parse('16', 6);
    assert.equal(ok.type === 'response' && ok.reason, 'Ok');
  });

  it('17 SPVMN lower platform: Route with lr, long tags, ACK and BYE in the dialog', () => {
    const reg = parse('17', 0);
    const [route] = getRouteSet(reg, 'Route');
    assert.deepEqual([route?.uri.user, route?.uri.host, route?.uri.port], ['34010000001310000001', '127.0.0.2', 5060]);
    assert.deepEqual([...(route?.uri.params ?? [])], [['lr', null]]);
    assert.equal(fromTag(reg), '76018100_53173353_0a98899a-ef4d-4cd2-8d34-58f91887a9c2');
    assert.equal(getTopVia(reg).params.get('branch'), 'z9hG4bK0a98899a-ef4d-4cd2-8d34-58f91887a9c2_53173353_1187102670602');
    const cred = parseDigestCredentials(parse('17', 2).headers.get('Authorization') ?? '');
    assert.deepEqual([cred.username, cred.uri], ['34020000002000000001', 'sip:34010000001310000001@127.0.0.2:5060']);
    assert.equal(getContacts(parse('17', 17))[0]?.uri.user, null); // Contact: <sip:127.0.0.1:5060>
    assert.equal(parse('17', 19).body.length, 202);
    const ack = parse('17', 20);
    assert.deepEqual(getCSeq(ack), { seq: 8, method: 'ACK' });
    assert.equal(toTag(ack), '78581382_53173353_44a147a7-d8ae-4498-9054-6fb3836df8f6');
    assert.deepEqual(getCSeq(parse('17', 21)), { seq: 9, method: 'BYE' });
  });

  it('18 SPVMN platform: received/rport in a REQUEST Via, quoted display name, INVITE without Subject', () => {
    const reg = parse('18', 0);
    assert.deepEqual([...getTopVia(reg).params], [['rport', '15070'], ['branch', 'z9hG4bK47339b9517'], ['received', '127.0.0.1']]);
    const challenge = parseDigestChallenge(parse('18', 1).headers.get('WWW-Authenticate') ?? '');
    assert.deepEqual([challenge.realm, challenge.nonce, challenge.algorithm], ['3402000000', 'ecbd62595ced375b', undefined]);
    const invite = parse('18', 17);
    assert.equal(invite.type === 'request' && invite.method, 'INVITE');
    const [contact] = getContacts(invite);
    assert.deepEqual([contact?.displayName, contact?.uri.host, contact?.uri.port], ['34020000002000000001', '127.0.0.1', 5060]);
    assert.equal(invite.headers.has('Subject'), false);
    assert.equal(invite.body.length, 217);
  });
});

describe('captures whose Content-Length is wrong (RFC 3261 §18.3 applied as written)', () => {
  it('03#4/#5 Hikvision excerpt: Content-Length one byte above the body text -> 400-answerable error', () => {
    for (const index of [4, 5]) {
      const s = sample('03', index);
      assert.deepEqual([s.declaredLength, s.wire.length - s.wire.indexOf('\r\n\r\n') - 4], [index === 4 ? 150 : 124, index === 4 ? 149 : 123]);
      assert.throws(() => parseSipMessage(s.wire), (err: unknown) => {
        assert.ok(err instanceof SipParseError);
        assert.equal(err.code, 'SIP_ERR_BODY_TRUNCATED');
        assert.equal(err.answerable, true);
        assert.equal(err.request?.method, 'MESSAGE');
        return true;
      });
      // With the byte the markdown excerpt lost, the message is whole again.
      const repaired = parseSipMessage(Buffer.concat([s.wire, Buffer.from('\n')]));
      assert.equal(repaired.body.length, s.declaredLength);
    }
  });

  it('06 445990772: length counted over GB2312 (1350) while UTF-8 was sent (1369) -> XML cut short', () => {
    const m = parse('06', 0);
    assert.equal(m.body.length, 1350);
    assert.ok(m.body.toString('latin1').endsWith('</Item></Devi'));
  });

  it('08#1 445990772: extra CRLF before the body, not counted -> body starts with CRLF, loses its last 2 bytes', () => {
    const m = parse('08', 1);
    assert.equal(m.body.length, 266);
    assert.ok(m.body.toString('latin1').startsWith('\r\n<Response>'));
    assert.ok(m.body.toString('latin1').endsWith('</Respons'));
  });

  it('12#3 445990772: SDP with doubled line ends, Content-Length 155 -> SDP truncated', () => {
    const m = parse('12', 3);
    assert.equal(m.body.length, 155);
    assert.ok(m.body.toString('latin1').startsWith('v=0\r\n\r\no=34020000001320000001 0 0 IN IP4 127.0.0.1'));
  });

  it('datagram leniency keeps the whole miscounted body (06, 08#1) and leaves honest ones alone', () => {
    const six = sample('06', 0);
    const lenient = parseSipMessage(six.wire, { trustDatagramEnd: true });
    assert.equal(lenient.body.length, 1369);
    assert.ok(lenient.body.toString('latin1').trimEnd().endsWith('</Response>'));
    assert.equal((lenient as unknown as Record<symbol, unknown>)[BODY_LENGTH_MISCOUNTED], true);
    const eight = sample('08', 1);
    assert.ok(parseSipMessage(eight.wire, { trustDatagramEnd: true }).body.toString('latin1').trimEnd().endsWith('</Response>'));
    // Only padding after the counted body: RFC 3261 §18.3 truncation still applies.
    const padded = Buffer.concat([
      Buffer.from('MESSAGE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:x@y>;tag=1\r\nTo: <sip:a@b>\r\nCall-ID: c\r\nCSeq: 1 MESSAGE\r\nContent-Length: 3\r\n\r\nabc', 'latin1'),
      Buffer.from('\r\n\r\n\0', 'latin1'),
    ]);
    const m = parseSipMessage(padded, { trustDatagramEnd: true });
    assert.equal(m.body.toString('latin1'), 'abc');
    assert.equal((m as unknown as Record<symbol, unknown>)[BODY_LENGTH_MISCOUNTED], undefined);
  });
});
