// The header scanner the datagram fast paths share (the stack's stateless answers, the SIP edge's
// forwarding): what it records, and every shape it refuses (the caller then takes the parser), with
// hand-checked expectations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BAD_MAX_FORWARDS, requestLineEnd, requestMethod, scanHeaderSection, type HeaderScan } from '../src/transport/header-scan.ts';

const LINES = [
  'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
  'Via: SIP/2.0/UDP 10.0.0.9:5061;rport;branch=z9hG4bK1',
  'From: <sip:34020000001320000001@3402000000>;tag=8O',
  'To: <sip:34020000002000000001@3402000000>',
  'Call-ID: abc',
  'CSeq: 4 MESSAGE',
  'Content-Type: Application/MANSCDP+xml',
  'Max-Forwards: 70',
  'Content-Length: 4',
];

function text(lines: string[] = LINES, body = 'body'): string {
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

function scan(t: string): HeaderScan | undefined {
  const eol = requestLineEnd(t);
  assert.ok(eol > 0, 'request line');
  return scanHeaderSection(t, eol);
}

const value = (t: string, a: number, b: number): string => t.slice(a, b);
const edit = (i: number, line: string): string[] => LINES.map((l, k) => (k === i ? line : l));

describe('header scan: what it records', () => {
  it('every header a fast path reads, as positions of trimmed values, with counts', () => {
    const t = text();
    const s = scan(t);
    assert.ok(s);
    assert.deepEqual(
      [value(t, s.viaStart, s.viaEnd), value(t, s.fromStart, s.fromEnd), value(t, s.toStart, s.toEnd), value(t, s.callIdStart, s.callIdEnd), value(t, s.cseqStart, s.cseqEnd), value(t, s.typeStart, s.typeEnd)],
      ['SIP/2.0/UDP 10.0.0.9:5061;rport;branch=z9hG4bK1', '<sip:34020000001320000001@3402000000>;tag=8O', '<sip:34020000002000000001@3402000000>', 'abc', '4 MESSAGE', 'Application/MANSCDP+xml'],
    );
    assert.deepEqual([s.vias, s.froms, s.tos, s.callIds, s.cseqs, s.types, s.routes, s.length, s.maxForwards, s.moreVias], [1, 1, 1, 1, 1, 1, 0, 4, 70, undefined]);
    assert.equal(value(t, s.mfStart, s.mfEnd), '70');
    assert.equal(t.slice(s.end, s.end + 4), '\r\n\r\n');
    assert.equal(t.slice(s.end + 4), 'body');
    assert.equal(t.slice(s.viaLine, s.viaNext), `${LINES[1]}\r\n`);
  });

  it('compact forms, any letter case, LWS around the colon and the value; every Via line in order', () => {
    const t = text(['MESSAGE sip:x SIP/2.0', 'v: SIP/2.0/UDP a;branch=z9hG4bK1', 'VIA  :  SIP/2.0/UDP b;branch=z9hG4bK2 ', 'f:<sip:a@b>', 't: <sip:c@d>', 'i:\tid1', 'cseq: 1 MESSAGE', 'c: text/plain', 'l: 4', 'ROUTE: <sip:p;lr>', 'max-FORWARDS: 0', 'v: SIP/2.0/UDP c;branch=z9hG4bK3']);
    const s = scan(t);
    assert.ok(s);
    assert.equal(s.vias, 3);
    assert.equal(value(t, s.viaStart, s.viaEnd), 'SIP/2.0/UDP a;branch=z9hG4bK1');
    assert.deepEqual(
      (s.moreVias ?? []).map((_, i, a) => (i % 2 === 0 ? value(t, a[i] as number, a[i + 1] as number) : '')).filter((v) => v !== ''),
      ['SIP/2.0/UDP b;branch=z9hG4bK2', 'SIP/2.0/UDP c;branch=z9hG4bK3'],
    );
    assert.deepEqual([value(t, s.fromStart, s.fromEnd), value(t, s.callIdStart, s.callIdEnd), value(t, s.typeStart, s.typeEnd), s.length, s.routes, s.maxForwards], ['<sip:a@b>', 'id1', 'text/plain', 4, 1, 0]);
  });

  it('counts repeats (the callers refuse them) and skips other headers, including near-misses of the names read', () => {
    const t = text([...LINES, 'From: <sip:x@y>', 'Call\rID: nope', 'Via-X: nope', 'Tox: nope', 'X-Call-ID: nope']);
    const s = scan(t);
    assert.ok(s);
    assert.deepEqual([s.froms, s.callIds, s.vias, s.tos], [2, 1, 1, 1]);
    assert.equal(value(t, s.callIdStart, s.callIdEnd), 'abc');
  });

  it('a repeated or unreadable Max-Forwards is marked, not fatal (only a forwarder cares)', () => {
    for (const mf of ['256', '1x', '', '0070'] as const) assert.equal(scan(text(edit(7, `Max-Forwards: ${mf}`)))?.maxForwards, BAD_MAX_FORWARDS, mf);
    assert.equal(scan(text([...LINES, 'Max-Forwards: 70']))?.maxForwards, BAD_MAX_FORWARDS);
    assert.equal(scan(text(LINES.filter((l) => !l.startsWith('Max-'))))?.maxForwards, -1);
  });
});

describe('header scan: what it refuses (the parser decides)', () => {
  const refused: Array<[string, string]> = [
    ['a folded line', text([...LINES.slice(0, 3), ' ;more', ...LINES.slice(3)])],
    ['a folded line with a tab', text([...LINES.slice(0, 3), '\t;more', ...LINES.slice(3)])],
    ['a line without a colon', text([...LINES, 'NoColonHere'])],
    ['a line starting with a colon', text([...LINES, ': x'])],
    ['a repeated Content-Length', text([...LINES, 'Content-Length: 4'])],
    ['a repeated Content-Length in compact form', text([...LINES, 'l: 4'])],
    ['a Content-Length that is not digits', text(edit(8, 'Content-Length: 4x'))],
    ['an empty Content-Length', text(edit(8, 'Content-Length:'))],
    ['a Content-Length of 11 digits', text(edit(8, 'Content-Length: 00000000004'))],
    ['no empty line ending the headers', LINES.join('\r\n')],
    ['a header section cut after a line', `${LINES.join('\r\n')}\r\n`],
  ];
  for (const [what, t] of refused) it(what, () => assert.equal(scan(t), undefined));
});

describe('header scan: request line', () => {
  it('takes `Method SP token SP SIP/2.0 CRLF` only, and names common methods by constants', () => {
    const ok = 'MESSAGE sip:a@b SIP/2.0\r\n';
    assert.equal(requestLineEnd(ok), ok.length - 2);
    assert.equal(requestMethod(ok), 'MESSAGE');
    assert.equal(requestMethod('FOO sip:a SIP/2.0\r\n'), 'FOO');
    for (const bad of ['MESSAGE  sip:a@b SIP/2.0\r\n', 'MESSAGE sip:a@b SIP/2.1\r\n', 'MES1AGE sip:a@b SIP/2.0\r\n', ' MESSAGE sip:a SIP/2.0\r\n', 'MESSAGE sip:a SIP/2.0\n', 'MESSAGE sip:a SIP/2.0', 'MESSAGE sip:a\tb SIP/2.0\r\n', 'MESSAGE SIP/2.0\r\n', 'SIP/2.0 200 OK\r\n']) {
      assert.equal(requestLineEnd(bad), -1, JSON.stringify(bad));
    }
  });
});
