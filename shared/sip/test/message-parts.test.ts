// URI, name-addr, Via and parameter parsers/formatters, checked against hand-written structures.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatNameAddr, formatParams, formatUri, formatVia, parseNameAddr, parseParams, parseUri, parseVia,
  SipParseError, splitHeaderValues,
} from '../src/index.ts';

const isParseError = (err: unknown): boolean => err instanceof SipParseError;

describe('parseUri / formatUri (RFC 3261 §19.1)', () => {
  it('splits user, password, host, port, params and headers', () => {
    const u = parseUri('sips:alice:secret@Example.COM:5061;transport=TCP;lr;maddr=239.255.255.1?subject=project%20x&priority=urgent');
    assert.deepEqual(
      { ...u, params: [...u.params], headers: [...u.headers] },
      {
        scheme: 'sips',
        user: 'alice',
        password: 'secret',
        host: 'Example.COM',
        port: 5061,
        params: [['transport', 'TCP'], ['lr', null], ['maddr', '239.255.255.1']],
        headers: [['subject', 'project%20x'], ['priority', 'urgent']],
      },
    );
  });

  it('GB28181 forms: 20-digit user at a 10-digit domain, bare domain, IPv6', () => {
    assert.deepEqual(
      [parseUri('sip:34020000001320000001@3402000000')].map((u) => [u.user, u.host, u.port]),
      [['34020000001320000001', '3402000000', null]],
    );
    assert.deepEqual([parseUri('sip:3402000000')].map((u) => [u.user, u.host]), [[null, '3402000000']]);
    assert.deepEqual([parseUri('sip:[::1]:5060')].map((u) => [u.host, u.port]), [['[::1]', 5060]]);
  });

  it('upper-case scheme is lower-cased; other schemes are opaque', () => {
    assert.equal(parseUri('SIP:a@b').scheme, 'sip');
    const tel = parseUri('tel:+86-10-12345678;phone-context=example.com');
    assert.deepEqual([tel.scheme, tel.opaque, tel.host], ['tel', '+86-10-12345678;phone-context=example.com', '']);
  });

  for (const text of [
    'sip:34020000001320000001@192.168.1.10:5060;transport=udp',
    'sip:%61lice@example.com;lr',
    'sips:[2001:db8::1]:5061;maddr=[2001:db8::2]?h=v&x',
    'tel:+1-201-555-0123',
    'urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6',
  ]) {
    it(`round-trips ${text}`, () => assert.equal(formatUri(parseUri(text)), text));
  }

  for (const bad of ['', 'nocolon', ':x', '1sip:a@b', 'sip:', 'sip:@host', 'sip:a@', 'sip:a@host:', 'sip:a@host:65536', 'sip:a@host:123456', 'sip:a b@host', 'sip:a@[::1', 'sip:a@host;', 'sip:a@ho st', 'sip:a@host junk', 'sip:a@<host>']) {
    it(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => parseUri(bad), isParseError));
  }
});

describe('parseNameAddr / formatNameAddr (RFC 3261 §20.10)', () => {
  it('quoted display name with escapes, header params after >', () => {
    const n = parseNameAddr('"Cam \\"1\\"" <sip:34020000001320000001@3402000000;transport=udp>;tag=abc;expires=60');
    assert.deepEqual([n.displayName, n.uri.user, [...n.uri.params], [...n.params]], [
      'Cam "1"', '34020000001320000001', [['transport', 'udp']], [['tag', 'abc'], ['expires', '60']],
    ]);
  });

  it('token display name of several words; empty display name', () => {
    assert.equal(parseNameAddr('Bob Smith <sip:bob@example.com>').displayName, 'Bob Smith');
    assert.equal(parseNameAddr('<sip:bob@example.com>').displayName, null);
  });

  it('addr-spec without <>: parameters belong to the header, not the URI', () => {
    const n = parseNameAddr('sip:bob@example.com;tag=xyz;transport=tcp');
    assert.deepEqual([n.uri.params.size, [...n.params]], [0, [['tag', 'xyz'], ['transport', 'tcp']]]);
  });

  it('formats with brackets, quoting only display names that are not tokens', () => {
    assert.equal(formatNameAddr(parseNameAddr('sip:bob@example.com;tag=1')), '<sip:bob@example.com>;tag=1');
    assert.equal(formatNameAddr(parseNameAddr('Bob <sip:b@x>')), 'Bob <sip:b@x>');
    assert.equal(formatNameAddr(parseNameAddr('"Doe, \\"J\\"" <sip:b@x>')), '"Doe, \\"J\\"" <sip:b@x>');
  });

  for (const bad of ['', '"unterminated <sip:a@b>', '"name" sip:a@b', '<sip:a@b', '<sip:a@b> tag=1', '<sip:a@b>;', 'name "q" <sip:a@b>', '<sip:a@b>;=1']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      if (bad === '<sip:a@b>;') assert.equal(parseNameAddr(bad).params.size, 0); // trailing ; tolerated
      else assert.throws(() => parseNameAddr(bad), isParseError);
    });
  }
});

describe('parseVia / formatVia (RFC 3261 §20.42)', () => {
  it('LWS around / : ; = and several hops per line', () => {
    const hops = parseVia('SIP / 2.0 / udp 10.0.0.1 : 5060 ; rport ; branch = z9hG4bK1 , SIP/2.0/TCP gw.example.com;received=10.0.0.9');
    assert.deepEqual(hops.map((h) => [h.protocol, h.transport, h.host, h.port, [...h.params]]), [
      ['SIP/2.0', 'UDP', '10.0.0.1', 5060, [['rport', null], ['branch', 'z9hG4bK1']]],
      ['SIP/2.0', 'TCP', 'gw.example.com', null, [['received', '10.0.0.9']]],
    ]);
  });

  it('formats a stamped hop (rport/received filled in, RFC 3581 §4)', () => {
    const [hop] = parseVia('SIP/2.0/UDP 192.168.1.64:5060;rport;branch=z9hG4bK42');
    assert.ok(hop);
    hop.params.set('rport', '40000');
    hop.params.set('received', '203.0.113.7');
    assert.equal(formatVia(hop), 'SIP/2.0/UDP 192.168.1.64:5060;rport=40000;branch=z9hG4bK42;received=203.0.113.7');
  });

  for (const bad of ['', 'SIP/2.0/UDP', 'SIP/2.0 host', 'SIP/2.0/UDP :5060', 'SIP/2.0/UDP host:', 'SIP/2.0/UDP host;branch', 'SIP/2.0/UDP [::1', 'SIP/2.0/UDPhost']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      if (bad === 'SIP/2.0/UDP host;branch') assert.equal(parseVia(bad)[0]?.params.get('branch'), null); // flag param is legal syntax
      else assert.throws(() => parseVia(bad), isParseError);
    });
  }
});

describe('splitHeaderValues / parseParams', () => {
  it('splits on commas outside quotes and <>', () => {
    assert.deepEqual(splitHeaderValues('<sip:a@b;x=1,2>, "c, d" <sip:c@d> ,, <sip:e@f>'), ['<sip:a@b;x=1,2>', '"c, d" <sip:c@d>', '<sip:e@f>']);
    assert.deepEqual(splitHeaderValues('"a\\", b" <sip:x@y>, <sip:z@w>'), ['"a\\", b" <sip:x@y>', '<sip:z@w>']);
    assert.deepEqual(splitHeaderValues('  '), []);
  });

  it('parses params with or without a leading semicolon, keeps quotes, first duplicate wins', () => {
    assert.deepEqual([...parseParams(';Tag=A; lr ;q="0.5;x";tag=B')], [['tag', 'A'], ['lr', null], ['q', '"0.5;x"']]);
    assert.deepEqual([...parseParams('expires=60')], [['expires', '60']]);
    assert.equal(formatParams(parseParams(';a=1;b;c="x y"')), ';a=1;b;c="x y"');
    assert.throws(() => parseParams(';a="unterminated'), isParseError);
    assert.throws(() => parseParams(';a b'), isParseError);
  });
});
