// RFC 4475-style torture cases, written by hand with the expected outcome of each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  getCallId, getContacts, getContentType, getCSeq, getExpires, getFrom, getMaxForwards, getRouteSet, getTo, getTopVia,
  getVias, isWildcardContact, parseSipMessage, serializeSipMessage, SipParseError, type SipErrorCode, type SipMessage,
} from '../src/index.ts';

const crlf = (...lines: string[]): Buffer => Buffer.from(lines.join('\r\n'), 'latin1');
const BASE = [
  'Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKtorture',
  'From: <sip:alice@example.com>;tag=a1',
  'To: <sip:bob@example.com>',
  'Call-ID: torture@192.0.2.1',
  'CSeq: 1 MESSAGE',
];
const request = (extra: string[], body = '', start = 'MESSAGE sip:bob@example.com SIP/2.0'): Buffer =>
  crlf(start, ...BASE, ...extra, '', body);

function rejects(buf: Buffer, code: SipErrorCode, answerable: boolean): SipParseError {
  let caught: unknown;
  try {
    parseSipMessage(buf);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof SipParseError, `expected SipParseError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code);
  assert.equal(caught.answerable, answerable);
  return caught;
}

describe('whitespace, folding, case (RFC 4475 wsinv style)', () => {
  const wsinv = crlf(
    'INVITE sip:vivekg@chair-dnrc.example.com;unknownparam SIP/2.0',
    'TO :',
    ' sip:vivekg@chair-dnrc.example.com ;   tag    = 1918181833n',
    'from   : "J Rosenberg \\\\\\""       <sip:jdrosen@example.com>',
    '  ;',
    '  tag = 98asjd8',
    'MaX-fOrWaRdS: 0068',
    'Call-ID: wsinv.ndaksdj@192.0.2.1',
    'Content-Length   : 5',
    'cseq: 0009',
    '  INVITE',
    'Via  : SIP  /   2.0',
    ' /UDP',
    '    192.0.2.2;branch=390skdjuw',
    's :',
    'NewFangledHeader:   newfangled value',
    '\tcontinued newfangled value',
    'UnknownHeaderWithUnusualValue: ;;,,;;,;',
    'Content-Type: application/sdp',
    'Route:',
    ' <sip:services.example.com;lr;unknownwith=value;unknown-no-value>',
    'v:  SIP  / 2.0  / TCP     spindle.example.com   ;',
    '  branch  =   z9hG4bK9ikj8  ,',
    ' SIP  /    2.0   / UDP  192.168.255.111   ; branch=',
    ' z9hG4bK30239',
    'm:"Quoted string \\"\\"" <sip:jdrosen@example.com> ; newparam =',
    '      newvalue ;',
    '  secondparam ; q = 0.33',
    '',
    'v=0\r\n',
  );

  it('parses every folded, oddly spaced, mixed-case header', () => {
    const m = parseSipMessage(wsinv);
    assert.ok(m.type === 'request');
    assert.deepEqual([...m.uri.params], [['unknownparam', null]]);
    const to = getTo(m);
    assert.deepEqual([to.uri.user, to.params.get('tag')], ['vivekg', '1918181833n']);
    const from = getFrom(m);
    assert.deepEqual([from.displayName, from.params.get('tag')], ['J Rosenberg \\"', '98asjd8']);
    assert.equal(getMaxForwards(m), 68);
    assert.deepEqual(getCSeq(m), { seq: 9, method: 'INVITE' });
    assert.equal(m.headers.get('Subject'), '');
    assert.equal(m.headers.get('NewFangledHeader'), 'newfangled value continued newfangled value');
    assert.equal(m.headers.get('UnknownHeaderWithUnusualValue'), ';;,,;;,;');
    assert.deepEqual([...(getRouteSet(m, 'Route')[0]?.uri.params ?? [])], [['lr', null], ['unknownwith', 'value'], ['unknown-no-value', null]]);
    const vias = getVias(m);
    assert.deepEqual(
      vias.map((v) => [v.protocol, v.transport, v.host, v.port, v.params.get('branch')]),
      [
        ['SIP/2.0', 'UDP', '192.0.2.2', null, '390skdjuw'],
        ['SIP/2.0', 'TCP', 'spindle.example.com', null, 'z9hG4bK9ikj8'],
        ['SIP/2.0', 'UDP', '192.168.255.111', null, 'z9hG4bK30239'],
      ],
    );
    const [contact] = getContacts(m);
    assert.equal(contact?.displayName, 'Quoted string ""');
    assert.deepEqual([...(contact?.params ?? [])], [['newparam', 'newvalue'], ['secondparam', null], ['q', '0.33']]);
    assert.equal(m.body.toString('latin1'), 'v=0\r\n');
  });

  it('canonical names on output, values kept, unknown header spelling kept', () => {
    const out = serializeSipMessage(parseSipMessage(wsinv)).toString('latin1');
    assert.match(out, /\r\nTo: sip:vivekg@chair-dnrc\.example\.com ; {3}tag {4}= 1918181833n\r\n/);
    assert.match(out, /\r\nMax-Forwards: 0068\r\n/);
    assert.match(out, /\r\nSubject: \r\n/);
    assert.match(out, /\r\nNewFangledHeader: newfangled value continued newfangled value\r\n/);
    assert.match(out, /\r\nContact: "Quoted string \\"\\"" <sip:jdrosen@example\.com> ; newparam = newvalue ; secondparam ; q = 0\.33\r\n/);
  });

  it('tabs around the colon, leading CRLFs before the start line (RFC 3261 §7.5)', () => {
    const m = parseSipMessage(Buffer.concat([Buffer.from('\r\n\r\n'), request(['Expires\t:\t60', 'Content-Length: 0'])]));
    assert.equal(m.headers.get('expires'), '60');
  });

  it('LF-only line endings are accepted (body still counted in bytes)', () => {
    const m = parseSipMessage(Buffer.from(['MESSAGE sip:bob@example.com SIP/2.0', ...BASE, 'Content-Length: 4', '', 'a\nb\n'].join('\n')));
    assert.equal(getCallId(m), 'torture@192.0.2.1');
    assert.equal(m.body.toString(), 'a\nb\n');
  });
});

describe('compact forms, multi-value headers (RFC 3261 §7.3)', () => {
  it('expands i m l c f t v s k o u', () => {
    const m = parseSipMessage(
      crlf(
        'SUBSCRIBE sip:34020000001320000001@192.0.2.9 SIP/2.0',
        'v: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bKc1',
        'f: <sip:p@example.com>;tag=1',
        't: <sip:d@example.com>',
        'i: compact@x',
        'CSeq: 3 SUBSCRIBE',
        'm: <sip:p@192.0.2.1>',
        's: Catalog',
        'k: timer',
        'o: Catalog;id=1',
        'u: presence',
        'c: Application/MANSCDP+xml',
        'l: 2',
        '',
        'ok',
      ),
    );
    assert.deepEqual(
      m.headers.entries().map(([n]) => n),
      ['Via', 'From', 'To', 'Call-ID', 'CSeq', 'Contact', 'Subject', 'Supported', 'Event', 'Allow-Events', 'Content-Type', 'Content-Length'],
    );
    assert.equal(getContentType(m)?.mediaType, 'application/manscdp+xml');
    assert.equal(m.body.toString(), 'ok');
  });

  it('Route values split inside one line and across lines, order kept', () => {
    const m = parseSipMessage(request(['Route: <sip:a.example.com;lr>, <sip:b.example.com;lr>', 'Route: <sip:c.example.com;lr>', 'Content-Length: 0']));
    assert.deepEqual(getRouteSet(m, 'Route').map((r) => r.uri.host), ['a.example.com', 'b.example.com', 'c.example.com']);
  });

  it('commas inside quoted display names and <…> do not split', () => {
    const m = parseSipMessage(request(['Contact: "Doe, John" <sip:j@x.example.com;p=a,b>, <sip:k@y.example.com>;expires=0', 'Content-Length: 0']));
    const contacts = getContacts(m);
    assert.deepEqual(contacts.map((c) => [c.displayName, c.uri.host, c.params.get('expires')]), [
      ['Doe, John', 'x.example.com', undefined],
      [null, 'y.example.com', '0'],
    ]);
    assert.equal(contacts[0]?.uri.params.get('p'), 'a,b');
  });

  it('Via: two hops in one line, one in the next; top hop is the first', () => {
    const m = parseSipMessage(
      crlf('SIP/2.0 200 OK', 'Via: SIP/2.0/UDP h1.example.com;branch=z9hG4bK1, SIP/2.0/TCP h2.example.com:5070;branch=z9hG4bK2', 'Via: SIP/2.0/UDP [2001:db8::9:1]:5062;branch=z9hG4bK3;received=[2001:db8::9:255]', ...BASE.slice(1), '', ''),
    );
    assert.deepEqual(getVias(m).map((v) => [v.host, v.port, v.params.get('branch')]), [
      ['h1.example.com', null, 'z9hG4bK1'],
      ['h2.example.com', 5070, 'z9hG4bK2'],
      ['[2001:db8::9:1]', 5062, 'z9hG4bK3'],
    ]);
    assert.equal(getVias(m)[2]?.params.get('received'), '[2001:db8::9:255]');
    assert.equal(getTopVia(m).host, 'h1.example.com');
  });

  it('Contact: * is a wildcard entry', () => {
    const m = parseSipMessage(request(['Contact: *', 'Expires: 0', 'Content-Length: 0'], '', 'REGISTER sip:example.com SIP/2.0'));
    const contacts = getContacts(m);
    assert.equal(contacts.length, 1);
    assert.ok(contacts[0] !== undefined && isWildcardContact(contacts[0]));
  });
});

describe('URIs (RFC 4475 esc01, escnull, semiuri, unkscm, lwsruri, ltgtruri)', () => {
  it('keeps %-escapes raw in the user part and on the wire', () => {
    const buf = request(['Contact: <sip:sips%3Auser%40example.com@example.net>', 'Content-Length: 0'], '', 'MESSAGE sip:%61lice@example.com SIP/2.0');
    const m = parseSipMessage(buf);
    assert.ok(m.type === 'request');
    assert.equal(m.uri.user, '%61lice');
    assert.equal(getContacts(m)[0]?.uri.user, 'sips%3Auser%40example.com');
    assert.deepEqual(serializeSipMessage(m), buf);
    assert.equal(parseSipMessage(request(['Content-Length: 0'], '', 'MESSAGE sip:null-%00-null@example.com SIP/2.0')).type, 'request');
  });

  it('tel:, http: and urn: URIs are opaque; params after an addr-spec belong to the header', () => {
    const m = parseSipMessage(
      request(['Contact: tel:+86-10-1234;expires=60', 'Contact: <http://example.com/cam?id=1>', 'Reply-To: <urn:uuid:f81d4fae>', 'Content-Length: 0'], '', 'MESSAGE tel:+1-201-555-0123 SIP/2.0'),
    );
    assert.ok(m.type === 'request');
    assert.deepEqual([m.uri.scheme, m.uri.opaque], ['tel', '+1-201-555-0123']);
    const [tel, http] = getContacts(m);
    assert.deepEqual([tel?.uri.scheme, tel?.uri.opaque, tel?.params.get('expires')], ['tel', '+86-10-1234', '60']);
    assert.deepEqual([http?.uri.scheme, http?.uri.opaque], ['http', '//example.com/cam?id=1']);
  });

  it('IPv6 Request-URI host keeps its brackets', () => {
    const m = parseSipMessage(request(['Content-Length: 0'], '', 'OPTIONS sip:[2001:db8::10]:5070 SIP/2.0'));
    assert.ok(m.type === 'request');
    assert.deepEqual([m.uri.host, m.uri.port], ['[2001:db8::10]', 5070]);
  });

  it('LWS or <> inside the Request-URI is a 400 (RFC 4475 lwsruri, ltgtruri)', () => {
    rejects(request(['Content-Length: 0'], '', 'INVITE sip:user@example.com; lr SIP/2.0'), 'SIP_ERR_URI', true);
    rejects(request(['Content-Length: 0'], '', 'INVITE <sip:user@example.com> SIP/2.0'), 'SIP_ERR_URI', true);
    rejects(request(['Content-Length: 0'], '', 'INVITE sip:user@example.com:70000 SIP/2.0'), 'SIP_ERR_URI', true);
  });

  it('extra SP between the Request-Line parts is tolerated (RFC 4475 lwsstart allows leniency)', () => {
    const m = parseSipMessage(request(['Content-Length: 0'], '', 'OPTIONS  sip:user@example.com   SIP/2.0'));
    assert.equal(m.type === 'request' && m.rawUri, 'sip:user@example.com');
  });
});

describe('more RFC 4475 valid messages', () => {
  it('intmeth: a method made of unusual token characters', () => {
    const method = "!interesting-Method0123456789_*+`.%indeed'~";
    const lines = BASE.map((l) => (l.startsWith('CSeq:') ? `CSeq: 139122385 ${method}` : l));
    const m = parseSipMessage(crlf(`${method} sip:1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*:&it+has=1,weird!*pas$wo~d_too.(doesn't-it)@example.com SIP/2.0`, ...lines, '', ''));
    assert.equal(m.type === 'request' && m.method, method);
    assert.equal(getCSeq(m).method, method);
  });

  it('lwsdisp: no LWS between display name and <', () => {
    const lines = BASE.map((l) => (l.startsWith('From:') ? 'From: caller<sip:caller@example.com>;tag=323' : l));
    const from = getFrom(parseSipMessage(crlf('OPTIONS sip:user@example.com SIP/2.0', ...lines, '', '')));
    assert.deepEqual([from.displayName, from.uri.user, from.params.get('tag')], ['caller', 'caller', '323']);
  });

  it('dblreq: octets after Content-Length in a datagram are ignored', () => {
    const second = crlf('INVITE sip:joe@example.com SIP/2.0', ...BASE, 'Content-Length: 0', '', '');
    const m = parseSipMessage(Buffer.concat([request(['Content-Length: 0'], '', 'REGISTER sip:example.com SIP/2.0'), second]));
    assert.deepEqual([m.type === 'request' && m.method, m.body.length], ['REGISTER', 0]);
  });

  it('semiuri: ; and escaped @ in the user part', () => {
    const m = parseSipMessage(request(['Content-Length: 0'], '', 'OPTIONS sip:user;par=u%40example.net@example.com SIP/2.0'));
    assert.ok(m.type === 'request');
    assert.deepEqual([m.uri.user, m.uri.host, m.uri.params.size], ['user;par=u%40example.net', 'example.com', 0]);
  });

  it('transports: unknown Via transports are kept upper-cased', () => {
    const m = parseSipMessage(
      crlf('SIP/2.0 200 OK', 'Via: SIP/2.0/SCTP t1.example.com;branch=z9hG4bKa, SIP/2.0/tls-sctp t2.example.com;branch=z9hG4bKb', 'Via: SIP/2.0/UNKNOWN t3.example.com;branch=z9hG4bKc', ...BASE.slice(1), '', ''),
    );
    assert.deepEqual(getVias(m).map((v) => v.transport), ['SCTP', 'TLS-SCTP', 'UNKNOWN']);
  });

  it('noreason: empty reason phrase, with or without the SP', () => {
    for (const line of ['SIP/2.0 100 ', 'SIP/2.0 100']) {
      const m = parseSipMessage(crlf(line, ...BASE, '', ''));
      assert.deepEqual(m.type === 'response' && [m.status, m.reason], [100, '']);
    }
  });
});

describe('overlarge scalars (RFC 4475 scalar02, scalarlg, bigcode)', () => {
  it('status code of more than three digits is a bad start line', () => {
    rejects(crlf('SIP/2.0 4294967301 better not break the receiver', ...BASE, '', ''), 'SIP_ERR_START_LINE', false);
  });

  it('CSeq, Max-Forwards, Expires beyond their ranges throw from the accessors', () => {
    const m = parseSipMessage(request(['Max-Forwards: 300', 'Expires: 10000000000000000000', 'Content-Length: 0']));
    const lines = BASE.map((l) => (l.startsWith('CSeq:') ? 'CSeq: 36893488147419103232 MESSAGE' : l));
    const big = parseSipMessage(crlf('MESSAGE sip:bob@example.com SIP/2.0', ...lines, '', ''));
    for (const read of [() => getMaxForwards(m), () => getExpires(m), () => getCSeq(big)]) {
      assert.throws(read, (err: unknown) => err instanceof SipParseError && err.code === 'SIP_ERR_HEADER_VALUE');
    }
  });
});

describe('Content-Length (RFC 3261 §18.3, §20.14)', () => {
  it('absent on a datagram: the body is the rest of it', () => {
    assert.equal(parseSipMessage(request([], 'hello')).body.toString(), 'hello');
  });

  it('smaller than the datagram: extra bytes discarded', () => {
    assert.equal(parseSipMessage(request(['Content-Length: 3'], 'hello')).body.toString(), 'hel');
  });

  it('counts bytes, not characters (GB2312 body)', () => {
    const gb = Buffer.from([0xc9, 0xe3, 0xcf, 0xf1, 0xbb, 0xfa]); // 摄像机 in GB2312
    const m = parseSipMessage(Buffer.concat([request(['Content-Length: 6'], ''), gb]));
    assert.deepEqual(m.body, gb);
    assert.match(serializeSipMessage(m).toString('latin1'), /\r\nContent-Length: 6\r\n\r\n/);
  });

  it('larger than the datagram: 400 for a request, drop for a response', () => {
    const err = rejects(request(['Content-Length: 10'], 'hello'), 'SIP_ERR_BODY_TRUNCATED', true);
    assert.equal(err.sipStatus, 400);
    assert.equal(err.request?.method, 'MESSAGE');
    rejects(crlf('SIP/2.0 200 OK', ...BASE, 'Content-Length: 10', '', 'hello'), 'SIP_ERR_BODY_TRUNCATED', false);
  });

  for (const bad of ['-5', 'abc', '99999999999999999999', '2147483648', '12 34', '', '0x10']) {
    it(`rejects Content-Length "${bad}"`, () => {
      rejects(request([`Content-Length: ${bad}`], 'hello'), 'SIP_ERR_CONTENT_LENGTH', true);
    });
  }

  it('two different lengths are rejected, equal duplicates accepted', () => {
    rejects(request(['Content-Length: 5', 'l: 4'], 'hello'), 'SIP_ERR_CONTENT_LENGTH', true);
    assert.equal(parseSipMessage(request(['Content-Length: 5', 'l: 5'], 'hello')).body.length, 5);
  });
});

describe('broken messages', () => {
  it('garbage or empty start line: not a request, never answerable', () => {
    rejects(crlf('This is not SIP at all', ...BASE, '', ''), 'SIP_ERR_START_LINE', false);
    rejects(Buffer.from('\r\n\r\n'), 'SIP_ERR_START_LINE', false);
    rejects(crlf('SIP/2.0 abc OK', ...BASE, '', ''), 'SIP_ERR_START_LINE', false);
    rejects(crlf('SIP/2.0 99 Low', ...BASE, '', ''), 'SIP_ERR_START_LINE', false);
    rejects(crlf('INVITE sip:bob@example.com SIP/2.0 trailing', ...BASE, '', ''), 'SIP_ERR_START_LINE', false);
    rejects(crlf('IN VITE', ...BASE, '', ''), 'SIP_ERR_START_LINE', false);
  });

  it('SIP/7.0 request: 505, answerable (RFC 4475 badvers)', () => {
    const err = rejects(request(['Content-Length: 0'], '', 'OPTIONS sip:t.watson@example.org SIP/7.0'), 'SIP_ERR_VERSION', true);
    assert.equal(err.sipStatus, 505);
  });

  for (const missing of ['Via', 'From', 'To', 'Call-ID', 'CSeq']) {
    it(`missing ${missing}: cannot be answered`, () => {
      const lines = BASE.filter((l) => !l.startsWith(`${missing}:`));
      const err = rejects(crlf('MESSAGE sip:bob@example.com SIP/2.0', ...lines, 'Content-Length: 0', '', ''), 'SIP_ERR_MISSING_HEADER', false);
      assert.equal(err.header, missing);
    });
  }

  it('missing Max-Forwards is accepted (GB28181 platforms omit it)', () => {
    assert.equal(getMaxForwards(parseSipMessage(request(['Content-Length: 0']))), null);
  });

  it('header line without colon, bad header name, leading continuation: 400-answerable', () => {
    rejects(request(['NoColonHere', 'Content-Length: 0']), 'SIP_ERR_HEADER', true);
    rejects(request(['Bad Name: x', 'Content-Length: 0']), 'SIP_ERR_HEADER', true);
    rejects(crlf('MESSAGE sip:bob@example.com SIP/2.0', ' folded-first', ...BASE, '', ''), 'SIP_ERR_HEADER', true);
  });

  it('a request whose From cannot be read is not answerable', () => {
    const lines = BASE.map((l) => (l.startsWith('From:') ? 'From: "unterminated <sip:alice@example.com>;tag=a1' : l));
    rejects(crlf('MESSAGE sip:bob@example.com SIP/2.0', ...lines, 'Content-Length: x', '', ''), 'SIP_ERR_CONTENT_LENGTH', false);
  });

  it('malformed structured values surface from the accessors as SIP_ERR_HEADER_VALUE', () => {
    const bad = (header: string, read: (m: SipMessage) => unknown): void => {
      const lines = BASE.filter((l) => !l.startsWith(`${header.split(':')[0]}:`));
      const m = parseSipMessage(crlf('MESSAGE sip:bob@example.com SIP/2.0', ...lines, header, 'Content-Length: 0', '', ''));
      assert.throws(() => read(m), (err: unknown) => err instanceof SipParseError && err.code === 'SIP_ERR_HEADER_VALUE');
    };
    bad('CSeq: 2147483648 MESSAGE', getCSeq); // RFC 3261 §8.1.1.5: < 2**31
    bad('CSeq: MESSAGE', getCSeq);
    bad('CSeq: 1 MESSAGE extra', getCSeq);
    bad('Via: SIP/2.0/UDP', getTopVia);
    bad('Via: SIP/2.0 192.0.2.1', getTopVia);
    bad('Via: SIP/2.0/UDP 192.0.2.1:99999', getTopVia);
    bad('From: <sip:alice@example.com', getFrom);
    bad('To: <sip:bob@example.com>garbage', getTo);
    bad('Call-ID: two words', getCallId);
    bad('Max-Forwards: 256', getMaxForwards);
    bad('Content-Type: text', getContentType);
  });

  it('CSeq method differing from the request method is reported as received (RFC 4475 mismatch01: the UA answers 400)', () => {
    const lines = BASE.map((l) => (l.startsWith('CSeq:') ? 'CSeq: 1 BYE' : l));
    const m = parseSipMessage(crlf('INVITE sip:bob@example.com SIP/2.0', ...lines, 'Content-Length: 0', '', ''));
    assert.equal(getCSeq(m).method, 'BYE');
  });
});

describe('byte fidelity', () => {
  it('raw GB2312/UTF-8 bytes in header values and reason phrases survive a round trip', () => {
    const gbName = Buffer.from([0xd5, 0xc5, 0xc8, 0xfd]).toString('latin1'); // 张三 in GB2312
    const buf = crlf('SIP/2.0 200 \xe6\x88\x90\xe5\x8a\x9f', 'Via: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bKx', `From: "${gbName}" <sip:a@example.com>;tag=1`, 'To: <sip:b@example.com>;tag=2', 'Call-ID: x', 'CSeq: 1 MESSAGE', 'Content-Length: 0', '', '');
    const m = parseSipMessage(buf);
    assert.equal(getFrom(m).displayName, gbName);
    assert.deepEqual(serializeSipMessage(m), buf);
  });

  it('values typed with characters above U+00FF are written UTF-8; others stay byte-exact', () => {
    const m = parseSipMessage(request(['Content-Length: 0']));
    m.headers.append('Subject', '摄像机');
    m.headers.append('X-Raw', '\xe9');
    const out = serializeSipMessage(m);
    assert.ok(out.includes(Buffer.from('Subject: 摄像机\r\n', 'utf8')));
    assert.ok(out.includes(Buffer.from('X-Raw: \xe9\r\n', 'latin1')));
  });
});
