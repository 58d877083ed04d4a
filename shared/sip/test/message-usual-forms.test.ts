// The usual forms read by one regex or one pass (parsePlainSipUri, parseUsualNameAddr, parseCanonicalViaHop,
// the usual REGISTER header lines)
// give exactly what the general scanners give, and take nothing those refuse: on the usual values and on
// every single-character mutation of them (deleted, doubled, replaced by a character of a set that covers
// the delimiters, LWS, case and the classes' edges).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNameAddrFully, parseUsualNameAddr } from '../src/message/name-addr.ts';
import { headerLineReadings } from '../src/message/parse.ts';
import { parsePlainSipUri, parseUriFully } from '../src/message/uri.ts';
import { parseCanonicalViaHop, parseViaHopFully } from '../src/message/via.ts';
import { parseNameAddr, parseUri, parseViaHop, SipParseError } from '../src/index.ts';

const CHARS = ['', ' ', '\t', '<', '>', '"', '@', ':', ';', '?', '=', ',', '/', '[', ']', '\\', '\x7f', '\x00', '\xe9', '-', '.', '_', '0', '9', 'a', 'A', 'z', 'Z', 'T', 't', 's', 'S', '%', '+', '!', '~', '\r', '\n'];

function mutations(seed: string): string[] {
  const out = new Set<string>([seed]);
  for (let i = 0; i <= seed.length; i++) {
    out.add(seed.slice(0, i) + seed.slice(i + 1));
    out.add(seed.slice(0, i) + seed.slice(i, i + 1) + seed.slice(i));
    for (const c of CHARS) {
      out.add(seed.slice(0, i) + c + seed.slice(i + 1));
      out.add(seed.slice(0, i) + c + seed.slice(i));
    }
  }
  return [...out];
}

/** The fast reading, when it answers, equals the full one; where the full one throws, the fast one declines. */
function holdsEqual<T>(name: string, seeds: string[], fast: (s: string) => T | undefined, full: (s: string) => T, viaEntry: (s: string) => T, taken: string[]): void {
  let answered = 0;
  for (const seed of seeds) {
    for (const s of mutations(seed)) {
      let expected: T | SipParseError;
      try {
        expected = full(s);
      } catch (err) {
        if (!(err instanceof SipParseError)) throw err;
        expected = err;
      }
      const got = fast(s);
      if (expected instanceof SipParseError) {
        assert.equal(got, undefined, `${name} took ${JSON.stringify(s)}, which the scanner refuses`);
        assert.throws(() => viaEntry(s), SipParseError, `${name}: the entry point still refuses ${JSON.stringify(s)}`);
        continue;
      }
      if (got !== undefined) {
        answered++;
        assert.deepEqual(got, expected, `${name} of ${JSON.stringify(s)}`);
      }
      assert.deepEqual(viaEntry(s), expected, `${name}: the entry point of ${JSON.stringify(s)}`);
    }
  }
  for (const s of taken) assert.notEqual(fast(s), undefined, `${name} takes ${JSON.stringify(s)}`);
  assert.ok(answered > seeds.length, `${name} answered ${answered} mutations`);
}

describe('usual forms = general scanners', () => {
  it('parsePlainSipUri = parseUriFully (a Request-URI, a From or To URI)', () => {
    const seeds = ['sip:34020000002000000001@3402000000', 'sip:34020000001320000001@192.168.1.10:5060', 'sip:a@b:65535', 'sip:a@b:65536'];
    holdsEqual('parsePlainSipUri', seeds, parsePlainSipUri, parseUriFully, parseUri, seeds.slice(0, 3));
  });

  it('parseUsualNameAddr = parseNameAddrFully (From and To as devices write them)', () => {
    const seeds = ['<sip:34020000001320000001@3402000000>;tag=rc12', '<sip:34020000002000000001@3402000000>', '<sip:34020000001320000001@10.0.0.9:5061>;tag=8OheCdgNir'];
    holdsEqual('parseUsualNameAddr', seeds, parseUsualNameAddr, parseNameAddrFully, parseNameAddr, seeds);
  });

  it('parseCanonicalViaHop = parseViaHopFully (the top Via as devices write it)', () => {
    const seeds = ['SIP/2.0/UDP 127.0.0.1:40000;rport;branch=z9hG4bK-rc-1-2', 'SIP/2.0/TCP host.example:5060;branch=z9hG4bK776;received=10.0.0.1;rport=5061', 'SIP/2.0/UDP 10.0.0.9;x;x=1'];
    holdsEqual('parseCanonicalViaHop', seeds, parseCanonicalViaHop, parseViaHopFully, parseViaHop, seeds);
  });

  it('the usual REGISTER header lines = the line scanner (both legs, with and without User-Agent)', () => {
    const first = [
      'Via: SIP/2.0/UDP 127.0.0.1:40000;rport;branch=z9hG4bK-rc-1-1',
      'From: <sip:34020000001320000001@3402000000>;tag=rc1',
      'To: <sip:34020000001320000001@3402000000>',
      'Call-ID: rc-1@bench',
      'CSeq: 1 REGISTER',
      'Contact: <sip:34020000001320000001@127.0.0.1:40000>',
    ];
    const authorization = 'Authorization: Digest username="34020000001320000001", realm="3402000000", nonce="a1b2", uri="sip:34020000002000000001@3402000000", response="0123456789abcdef0123456789abcdef", algorithm=MD5';
    const tail = ['Max-Forwards: 70', 'User-Agent: IP Camera', 'Expires: 3600', 'Content-Length: 0'];
    const seeds = [
      [...first, authorization, ...tail],
      [...first, ...tail],
      [...first, authorization, ...tail.filter((l) => !l.startsWith('User-Agent'))],
    ].map((lines) => lines.join('\r\n'));
    let answered = 0;
    for (const seed of seeds) {
      assert.notEqual(headerLineReadings.usual(seed, 0), undefined, `the usual lines take ${JSON.stringify(seed)}`);
      for (const s of mutations(seed)) {
        const got = headerLineReadings.usual(s, 0);
        if (got === undefined) continue;
        answered++;
        const scanned = headerLineReadings.scanned(s, 0);
        assert.equal(scanned.error, undefined, `the usual lines took ${JSON.stringify(s)}, where the scanner finds ${scanned.error?.message}`);
        assert.deepEqual(got.entries(), scanned.headers.entries(), `the usual lines of ${JSON.stringify(s)}`);
        for (const [name] of got.entries()) assert.equal(got.get(name), scanned.headers.get(name), `${name} of ${JSON.stringify(s)}`);
      }
    }
    assert.ok(answered > 100 * seeds.length, `the usual lines answered ${answered} mutations`);
    // read from where the request line ends, as parseSipMessage calls it
    const line = 'REGISTER sip:34020000002000000001@3402000000 SIP/2.0\r\n';
    assert.deepEqual(headerLineReadings.usual(line + seeds[0], line.length)?.entries(), headerLineReadings.scanned(seeds[0] as string, 0).headers.entries());
    assert.equal(headerLineReadings.usual(`${seeds[0]}\r\n`, 0), undefined, 'a head that does not end at its last value');
  });
});
