// The Authorization / WWW-Authenticate parameter parser's two paths (issue 11): the usual header in a
// few sticky-regex steps, everything else (quoted-pairs, odd token values, errors) by the char scan.
// Where the usual path answers, it must answer what the scan does; where the scan rejects, the usual
// path must have declined. Held on the captures, on hand-written cases and on mutations of both.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDigestCredentials, parseDigestParamsScan, parseDigestParamsUsual, plainCredentials, usualOrderCredentials, wireAscii } from '../src/auth/digest.header.ts';
import { parseDigestCredentials, SipParseError } from '../src/index.ts';
import { loadSampleFile, sampleFiles } from './message-fixtures/samples.ts';

/** Every Authorization / WWW-Authenticate / Proxy-* value in the captures. */
function capturedValues(): string[] {
  const out = new Set<string>();
  for (const file of sampleFiles()) {
    for (const m of loadSampleFile(file)) {
      for (const [name, value] of m.headerLines) if (/^(proxy-)?(authorization|www-authenticate|proxy-authenticate)$/i.test(name)) out.add(value);
    }
  }
  return [...out];
}

/** The scan's verdict: its map, or the error code it threw. */
function scan(value: string): Map<string, string> | string {
  try {
    return parseDigestParamsScan(value);
  } catch (err) {
    assert.ok(err instanceof SipParseError, `scan threw ${String(err)}`);
    return err.code;
  }
}

function agrees(value: string): void {
  const usual = parseDigestParamsUsual(value);
  const slow = scan(value);
  if (usual === null) return; // declined: the scan decides (its answer is the parser's)
  assert.ok(slow instanceof Map, `usual path accepted what the scan rejects (${String(slow)}): ${JSON.stringify(value)}`);
  assert.deepEqual([...usual], [...slow], JSON.stringify(value));
}

describe('digest parameter parser: usual path against the scan', () => {
  it('takes every captured header on the usual path, with the scan’s result', () => {
    const values = capturedValues();
    assert.ok(values.length >= 10, `captures hold ${values.length} digest headers`);
    for (const v of values) {
      assert.notEqual(parseDigestParamsUsual(v), null, v);
      agrees(v);
    }
  });

  it('reads the captures’ quirks as written (no spaces after commas, unquoted qop/nc, short nonce, opaque)', () => {
    const cred = parseDigestCredentials('Digest username="34020000001320000001",realm="3402000000",nonce="ecbd62595ced375b",uri="sip:34020000002000000001@3402000000",response="044e763db6fd597525e4c02d5cf66359",algorithm=MD5');
    assert.deepEqual([cred.username, cred.nonce, cred.algorithm, cred.qop], ['34020000001320000001', 'ecbd62595ced375b', 'MD5', undefined]);
    const qop = parseDigestParamsUsual('Digest username="a", realm="r", nonce="n", uri="sip:3402000000", response="x", algorithm=MD5, qop=auth, nc=00000001, cnonce="5e7ce6"');
    assert.deepEqual([qop?.get('qop'), qop?.get('nc'), qop?.get('cnonce')], ['auth', '00000001', '5e7ce6']);
  });

  it('hand-checked values', () => {
    const cases: Array<[string, Array<[string, string]>]> = [
      ['Digest realm="r",nonce="n"', [['realm', 'r'], ['nonce', 'n']]],
      ['  dIgEsT   ReAlM = "r" ,  , nonce=abc ,', [['realm', 'r'], ['nonce', 'abc']]],
      ['Digest ,realm="r"', [['realm', 'r']]],
      ['Digest realm="first", REALM="second"', [['realm', 'first']]], // the first of a repeated name
      ['Digest a=, b=""', [['a', ''], ['b', '']]],
      ['Digest uri="sip:a@b;x=1, y", nc=00000001', [['uri', 'sip:a@b;x=1, y'], ['nc', '00000001']]],
      ['Digest', []],
    ];
    for (const [value, expected] of cases) {
      assert.deepEqual([...(parseDigestParamsUsual(value) ?? new Map())], expected, value);
      assert.deepEqual([...parseDigestParamsScan(value)], expected, value);
    }
  });

  it('declines what only the scan reads right, which then reads it', () => {
    // quoted-pair (RFC 3261 §25.1): resolved by the scan
    assert.equal(parseDigestParamsUsual('Digest username="a\\"b", realm="r"'), null);
    assert.equal(parseDigestCredentials('Digest username="a\\"b", realm="r", nonce="n", uri="u", response="x"').username, 'a"b');
    // a `"` inside a token value is part of it for the scan
    assert.equal(parseDigestParamsUsual('Digest realm=a"b'), null);
    assert.deepEqual([...parseDigestParamsScan('Digest realm=a"b')], [['realm', 'a"b']]);
    assert.equal(parseDigestParamsUsual('Digest realm=="r"'), null);
    assert.deepEqual([...parseDigestParamsScan('Digest realm=="r"')], [['realm', '="r"']]);
  });

  it('declines every malformed value, which the scan rejects', () => {
    for (const bad of [
      'Basic realm="r"',
      'Digestrealm="r"',
      'Digest realm',
      'Digest realm="r" nonce="n"',
      'Digest realm="unterminated',
      'Digest realm="r"x',
      'Digest ="r"',
      'Digest realm="r\\',
      '',
    ]) {
      assert.equal(parseDigestParamsUsual(bad), null, bad);
      assert.equal(scan(bad), 'SIP_ERR_AUTH_HEADER', bad);
    }
  });

  it('agrees with the scan on 20,000 mutations of the captures', () => {
    const values = capturedValues();
    const alphabet = ['"', '\\', ',', ' ', '\t', '=', 'a', 'Z', '0', ';', ':', '@', '\r', '\u00e9', '\u4e2d'];
    let seed = 0x2545f491;
    const rand = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    let accepted = 0;
    for (let k = 0; k < 20_000; k++) {
      let v = values[rand(values.length)] as string;
      for (let e = 1 + rand(3); e > 0; e--) {
        const at = rand(v.length + 1);
        const op = rand(3);
        const ch = alphabet[rand(alphabet.length)] as string;
        v = op === 0 ? v.slice(0, at) + ch + v.slice(at) : op === 1 ? v.slice(0, at) + v.slice(at + 1) : v.slice(0, at) + ch + v.slice(at + 1);
      }
      agrees(v);
      if (parseDigestParamsUsual(v) !== null) accepted++;
    }
    assert.ok(accepted > 2_000, `the usual path took ${accepted} of the mutations: the comparison exercised it`);
  });
});

/** The credentials as read from the scan's map (the parser's answer where the usual path declines), or the error code. */
function credentialsByScan(value: string): Record<string, unknown> | string {
  const params = scan(value);
  if (typeof params === 'string') return params;
  for (const name of ['username', 'realm', 'nonce', 'uri', 'response']) if (!params.has(name)) return 'SIP_ERR_AUTH_HEADER';
  const fields = ['username', 'realm', 'nonce', 'uri', 'response', 'algorithm', 'opaque', 'qop', 'nc', 'cnonce'];
  return { ...Object.fromEntries(fields.map((f) => [f, params.get(f)])), params: [...params] };
}

function credentials(value: string): Record<string, unknown> | string {
  try {
    const c = parseDigestCredentials(value);
    const fields = ['username', 'realm', 'nonce', 'uri', 'response', 'algorithm', 'opaque', 'qop', 'nc', 'cnonce'] as const;
    return { ...Object.fromEntries(fields.map((f) => [f, c[f]])), params: [...c.params] };
  } catch (err) {
    assert.ok(err instanceof SipParseError, `parse threw ${String(err)}`);
    return err.code;
  }
}

describe('digest credentials read into their fields on the usual path (issue 11)', () => {
  it('the fields and the parameter map are the scan’s, on the captures and on 20,000 mutations of them', () => {
    const values = capturedValues().filter((v) => /^\s*digest\s+.*username/i.test(v));
    assert.ok(values.length >= 5);
    let seed = 0x1234567;
    const rand = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const alphabet = ['"', ',', ' ', '\t', '=', '\\', 'a', 'R', '0', ';', '\u00e9'];
    for (const v of values) assert.deepEqual(credentials(v), credentialsByScan(v), v);
    let read = 0;
    for (let k = 0; k < 20_000; k++) {
      let v = values[rand(values.length)] as string;
      for (let e = 1 + rand(2); e > 0; e--) {
        const at = rand(v.length + 1);
        v = v.slice(0, at) + (alphabet[rand(alphabet.length)] as string) + v.slice(at + rand(2));
      }
      const got = credentials(v);
      assert.deepEqual(got, credentialsByScan(v), v);
      if (typeof got !== 'string') read++;
    }
    assert.ok(read > 5_000, `${read} mutations read: the comparison exercised the reader`);
  });

  it('the first of a repeated name wins, names in any case, a missing required field is refused by name', () => {
    const c = parseDigestCredentials('Digest USERNAME="a", username="b", realm="r", Nonce=n, uri="u", response="x", qop=auth, QOP=other, nc=00000001, cnonce=""');
    assert.deepEqual([c.username, c.nonce, c.qop, c.nc, c.cnonce, c.algorithm], ['a', 'n', 'auth', '00000001', '', undefined]);
    assert.equal(c.params.get('username'), 'a');
    assert.throws(() => parseDigestCredentials('Digest username="a", realm="r", uri="u", response="x"'), /missing nonce/);
    assert.throws(() => parseDigestCredentials('Digest username="", realm="r", nonce="", uri="u"'), /missing response/);
  });
});

describe('digest credentials, the plainest form read by indexOf (issue 11)', () => {
  const fields = ['username', 'realm', 'nonce', 'uri', 'response', 'algorithm', 'opaque', 'qop', 'nc', 'cnonce'] as const;
  const plain = (value: string): Record<string, unknown> | null => {
    const c = plainCredentials(value);
    return c === null ? null : { ...Object.fromEntries(fields.map((f) => [f, c[f]])), params: [...c.params] };
  };

  it('reads what our client and the captured devices send, as the scan does', () => {
    const ours = formatDigestCredentials({ username: '34020000001320000001', realm: '3402000000', nonce: '0123456789abcdef0123456789abcdef', uri: 'sip:34020000002000000001@3402000000', response: '044e763db6fd597525e4c02d5cf66359', algorithm: 'MD5', qop: 'auth', nc: '00000001', cnonce: '5e7ce6', opaque: 'o' });
    const captured = capturedValues().filter((v) => /^Digest .*username/.test(v));
    assert.ok(captured.length >= 5);
    let read = 0;
    for (const v of [ours, ...captured]) {
      const got = plain(v);
      if (got !== null) read++;
      if (got !== null) assert.deepEqual(got, credentialsByScan(v), v);
    }
    assert.notEqual(plain(ours), null);
    assert.ok(read >= captured.length / 2, `${read} of ${captured.length + 1} read on the plain path`);
  });

  it('declines every other form, which the regex steps or the scan then read', () => {
    for (const v of [
      'digest username="a", realm="r", nonce="n", uri="u", response="x"', // scheme case
      'Digest Username="a", realm="r", nonce="n", uri="u", response="x"', // name case
      'Digest username = "a", realm="r", nonce="n", uri="u", response="x"', // spaces around =
      'Digest username="a",  realm="r", nonce="n", uri="u", response="x"', // two spaces
      'Digest username="a\\"b", realm="r", nonce="n", uri="u", response="x"', // quoted-pair
      'Digest username="a", realm=r x, nonce="n", uri="u", response="x"', // space in a token
      'Digest username="a", realm="r", nonce="n", uri="u", response="x", stale=false', // another name
      'Digest username="a", realm="r", nonce="n", uri="u"', // response missing
      'Digest username="a", realm="r", nonce="n", uri="u", response="x",', // trailing comma
      'Digest username="a", realm="r"x, nonce="n", uri="u", response="x"',
      'Digest username="a, realm="r", nonce="n", uri="u", response="x',
      'Digest constructor=1, username="a", realm="r", nonce="n", uri="u", response="x"',
    ]) {
      assert.equal(plainCredentials(v), null, v);
    }
    assert.equal(parseDigestCredentials('Digest Username="a", realm="r", nonce="n", uri="u", response="x"').username, 'a');
  });

  it('where it answers, answers the scan’s fields and map: 50,000 mutations of the plain form', () => {
    const base = [
      'Digest username="34020000001320000001", realm="3402000000", nonce="0123456789abcdef0123456789abcdef", uri="sip:34020000002000000001@3402000000", response="044e763db6fd597525e4c02d5cf66359", algorithm=MD5',
      'Digest username="34020000001320000001",realm="3402000000",nonce="ecbd",uri="sip:a@b;x=1, y",response="0d",algorithm=MD5,qop=auth,nc=00000001,cnonce="5e7ce6",opaque="o"',
    ];
    const alphabet = ['"', ',', ', ', ' ', '\t', '=', '\\', 'a', 'R', '0', 'nc=1', 'realm="z"', '\u00e9'];
    let seed = 0x7654321;
    const rand = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    let read = 0;
    for (let k = 0; k < 50_000; k++) {
      let v = base[rand(base.length)] as string;
      for (let e = 1 + rand(2); e > 0; e--) {
        const at = rand(v.length + 1);
        v = v.slice(0, at) + (alphabet[rand(alphabet.length)] as string) + v.slice(at + rand(2));
      }
      const got = plain(v);
      if (got === null) continue;
      read++;
      assert.deepEqual(got, credentialsByScan(v), v);
      assert.deepEqual(got, credentials(v), v);
    }
    assert.ok(read > 10_000, `${read} mutations read on the plain path: the comparison exercised it`);
  });
});

describe('digest credentials in the usual order, one regex match (issue 11)', () => {
  const fields = ['username', 'realm', 'nonce', 'uri', 'response', 'algorithm', 'opaque', 'qop', 'nc', 'cnonce'] as const;
  const usual = (value: string): Record<string, unknown> | null => {
    const c = usualOrderCredentials(value);
    return c === null ? null : { ...Object.fromEntries(fields.map((f) => [f, c[f]])), params: [...c.params] };
  };
  const CHARS = ['', ' ', '\t', '"', '\\', ',', '=', ';', ':', '@', 'a', 'Z', '0', '-', '_', '\r', '\n', '\u00e9', '\u4e2d'];

  it('reads what our client without qop and the captured devices send; where it answers, the scan answers the same, on every single-character mutation', () => {
    const fixed = { username: '34020000001320000001', realm: '3402000000', nonce: '0123456789abcdef0123456789abcdef', uri: 'sip:34020000002000000001@3402000000', response: '044e763db6fd597525e4c02d5cf66359' };
    const seeds = [
      formatDigestCredentials({ ...fixed, algorithm: 'MD5' }),
      formatDigestCredentials({ ...fixed, algorithm: 'MD5', qop: 'auth', nc: '00000001', cnonce: '5e7ce6a1b2c3d4e5' }),
      formatDigestCredentials({ ...fixed, algorithm: 'MD5', qop: 'auth', nc: '00000001', cnonce: '5e7ce6', opaque: 'o' }),
      'Digest username="admin", realm="3402000000", nonce="ab", uri="sip:a@b", response="0d", opaque=""',
      'Digest username="", realm="r", nonce="", uri="", response=""',
    ];
    for (const v of seeds) assert.notEqual(usual(v), null, v);
    const captured = capturedValues().filter((v) => usual(v) !== null);
    assert.ok(captured.length >= 2, `${captured.length} captured values in the usual order`);
    let read = 0;
    for (const seed of [...seeds, ...captured]) {
      for (let i = 0; i <= seed.length; i++) {
        for (const c of [...CHARS, seed.slice(i, i + 1)]) {
          for (const v of [seed.slice(0, i) + c + seed.slice(i + 1), seed.slice(0, i) + c + seed.slice(i)]) {
            const got = usual(v);
            if (got === null) continue;
            read++;
            assert.deepEqual(got, credentialsByScan(v), v);
            assert.deepEqual(got, credentials(v), v);
          }
        }
      }
    }
    assert.ok(read > 5_000, `${read} mutations read in the usual order: the comparison exercised it`);
  });

  it('declines every other form', () => {
    for (const v of [
      'Digest username="a", realm="r", nonce="n", uri="u"', // response missing
      'Digest realm="r", username="a", nonce="n", uri="u", response="x"', // another order
      'Digest username="a", realm="r", nonce="n", uri="u", response="x", cnonce="c", qop=auth, nc=00000001', // another order
      'Digest username="a", realm="r", nonce="n", uri="u", response="x", qop=auth, nc=00000001', // cnonce missing
      'Digest username="a", realm="r", nonce="n", uri="u", response="x", opaque="o", algorithm=MD5',
      'Digest username="a", realm="r", nonce="n", uri="u", response="x", stale=false', // another name
      'Digest username="a\\"b", realm="r", nonce="n", uri="u", response="x"', // quoted-pair
      'Digest username="a", realm="r", nonce="n", uri="u", response="x",', // trailing comma
      'digest username="a", realm="r", nonce="n", uri="u", response="x"', // scheme case
      'Digest username="\u00e9", realm="r", nonce="n", uri="u", response="x"', // not ASCII
      'Digest username="a", realm="r", nonce="n", uri="sip:\u4e2d@b", response="x"',
    ]) {
      assert.equal(usualOrderCredentials(v), null, v);
    }
    // what it reads is ASCII, which the digest check then tests no more; the other readings are not known so
    assert.equal(wireAscii(parseDigestCredentials('Digest username="a", realm="r", nonce="n", uri="u", response="x"')), true);
    assert.equal(wireAscii(parseDigestCredentials('Digest username="\u00e9", realm="r", nonce="n", uri="u", response="x"')), false);
    assert.equal(parseDigestCredentials('Digest username="\u00e9", realm="r", nonce="n", uri="u", response="x"').username, '\u00e9');
  });
});

