// The datagram shortcut's pure parts on hand-written requests (shape of sample 04, the Ellean
// keepalive) with hand-checked expectations: what it reads, what it refuses, the bytes it answers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildDatagramResponse, peekDatagramRequest, stampDatagramVia, type StampedVia } from '../src/transport/datagram-shortcut.ts';
import type { Flow } from '../src/transport/flow.ts';
import { statelessTagOf } from '../src/ua/stateless-tag.ts';

const BODY =
  '<?xml version="1.0" encoding="UTF-8"?>\r\n<Notify><CmdType>Keepalive</CmdType><SN>1796020507705</SN><DeviceID>34020000001320000001</DeviceID><Status>OK</Status></Notify>';

function keepalive(edit: (lines: string[]) => string[] = (l) => l, body = BODY, length: number | null = Buffer.byteLength(body)): Buffer {
  const lines = edit([
    'MESSAGE sip:127.0.0.1:5060 SIP/2.0',
    'Via: SIP/2.0/UDP 10.0.0.9:5061;rport;branch=z9hG4bKoTadipkzFRr1MA6s2dCj',
    'From: <sip:34020000001320000001@3402000000>;tag=8OheCdgNir',
    'To: <sip:34020000002000000001@3402000000>',
    'Call-ID: Rr5el7QLikXy7gNBiTCib4s03FjSzM6J',
    'CSeq: 4 MESSAGE',
    'Content-Type: Application/MANSCDP+xml',
    'Max-Forwards: 70',
    ...(length === null ? [] : [`Content-Length: ${length}`]),
  ]);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'latin1');
}

const flow: Flow = { transport: 'udp', remoteAddress: '192.168.1.64', remotePort: 40001, localAddress: '10.0.0.5', localPort: 5060 };

describe('datagram shortcut: peek', () => {
  it('reads the request line, the headers a response copies and the body', () => {
    const data = keepalive();
    const p = peekDatagramRequest(data);
    assert.deepEqual(p && { ...p, via: p.via, body: p.body.toString('latin1') }, {
      method: 'MESSAGE',
      via: ['SIP/2.0/UDP 10.0.0.9:5061;rport;branch=z9hG4bKoTadipkzFRr1MA6s2dCj'],
      viaStart: data.indexOf('Via: ') + 'Via: '.length,
      viaEnd: data.indexOf('Via: ') + 'Via: '.length + 'SIP/2.0/UDP 10.0.0.9:5061;rport;branch=z9hG4bKoTadipkzFRr1MA6s2dCj'.length,
      from: '<sip:34020000001320000001@3402000000>;tag=8OheCdgNir',
      to: '<sip:34020000002000000001@3402000000>',
      callId: 'Rr5el7QLikXy7gNBiTCib4s03FjSzM6J',
      cseq: '4 MESSAGE',
      contentType: 'Application/MANSCDP+xml',
      body: BODY,
      text: data.toString('latin1'),
      bodyStart: data.length - Buffer.byteLength(BODY),
    });
    assert.equal(p?.text.slice(p.bodyStart), BODY);
  });

  it('accepts compact header names, several Via lines, and no Content-Length (the datagram ends the body)', () => {
    const p = peekDatagramRequest(
      keepalive(
        (l) => ['MESSAGE sip:x@y SIP/2.0', 'v: SIP/2.0/UDP 10.0.0.9:5061;branch=z9hG4bK1', 'Via: SIP/2.0/UDP proxy:5060;branch=z9hG4bK0', 'f: <sip:a@b>;tag=1', 't: <sip:c@d>', 'i: abc', 'CSeq: 1 MESSAGE', 'c: text/plain'],
        BODY,
        null,
      ),
    );
    assert.deepEqual([p?.via.length, p?.from, p?.to, p?.callId, p?.contentType, p?.body.length], [2, '<sip:a@b>;tag=1', '<sip:c@d>', 'abc', 'text/plain', Buffer.byteLength(BODY)]);
  });

  it('reads header names in any case with LWS before the colon, and values trimmed of LWS only', () => {
    const p = peekDatagramRequest(
      keepalive((l) => l.map((x) => x.replace(/^From:/, 'fROM \t:').replace(/^Call-ID: /, 'CALL-id:\t ').replace(/^Content-Length: /, 'content-LENGTH :   ').replace(/^CSeq: 4/, 'cseq: 4 \t'))),
    );
    assert.deepEqual([p?.from, p?.callId, p?.cseq], ['<sip:34020000001320000001@3402000000>;tag=8OheCdgNir', 'Rr5el7QLikXy7gNBiTCib4s03FjSzM6J', '4 \t MESSAGE']);
    assert.equal(peekDatagramRequest(keepalive((l) => l.map((x) => x.replace(/^CSeq: 4/, 'CSeq: 4\u00a0')))), undefined, 'only SP/HT separate CSeq parts');
    assert.equal(peekDatagramRequest(keepalive((l) => [...l, 'Content-Type: text/plain'])), undefined, 'repeated Content-Type');
    assert.equal(peekDatagramRequest(keepalive((l) => [...l, 'l: 10'])), undefined, 'repeated Content-Length');
  });

  it('refuses what only the parser should judge', () => {
    const cases: [string, Buffer][] = [
      ['folded header line', keepalive((l) => [...l.slice(0, 3), ' ;more=1', ...l.slice(3)])],
      ['missing Call-ID', keepalive((l) => l.filter((x) => !x.startsWith('Call-ID')))],
      ['repeated From', keepalive((l) => [...l, 'From: <sip:x@y>;tag=2'])],
      ['CSeq method differs', keepalive((l) => l.map((x) => (x.startsWith('CSeq') ? 'CSeq: 4 INFO' : x)))],
      ['Content-Length too large', keepalive(undefined, BODY, 999)],
      ['Content-Length miscounted short (sample 06)', keepalive(undefined, BODY, 10)],
      ['a response', Buffer.from('SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP a;branch=z9hG4bK1\r\n\r\n')],
      ['no end of headers', Buffer.from('MESSAGE sip:x@y SIP/2.0\r\nVia: SIP/2.0/UDP a')],
      ['in-dialog (To-tag)', keepalive((l) => l.map((x) => (x.startsWith('To:') ? `${x};tag=abc` : x)))],
      ['in-dialog (To-tag on a bare URI)', keepalive((l) => l.map((x) => (x.startsWith('To:') ? 'To: sip:34020000002000000001@3402000000;tag=abc' : x)))],
      ['header line without colon', keepalive((l) => [...l, 'Garbage'])],
      ['request line with two spaces', keepalive((l) => [l[0]!.replace(' sip:', '  sip:'), ...l.slice(1)])],
      ['request line of another version', keepalive((l) => [l[0]!.replace('SIP/2.0', 'SIP/3.0'), ...l.slice(1)])],
      ['CSeq number too long', keepalive((l) => l.map((x) => (x.startsWith('CSeq') ? 'CSeq: 12345678901 MESSAGE' : x)))],
      ['Content-Length not a number', keepalive((l) => l.map((x) => (x.startsWith('Content-Length') ? 'Content-Length: 1e2' : x)))],
    ];
    for (const [name, data] of cases) assert.equal(peekDatagramRequest(data), undefined, name);
  });

  it('takes exactly the request lines `Method SP one-token-URI SP SIP/2.0` (mutated lines)', () => {
    // The rule as first written, char by char: letters, SP, a URI of chars above SP, SP SIP/2.0.
    const reference = (line: string): string | undefined => {
      let i = 0;
      while (i < line.length && /[A-Za-z]/.test(line[i] as string)) i++;
      if (i === 0 || line[i] !== ' ' || !line.endsWith(' SIP/2.0')) return undefined;
      const uri = line.slice(i + 1, line.length - ' SIP/2.0'.length);
      return uri.length > 0 && [...uri].every((c) => c.charCodeAt(0) > 32) ? line.slice(0, i) : undefined;
    };
    let state = 0x5eed_1234;
    const rand = (n: number): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    const alphabet = ['a', 'Z', ' ', '\t', '\x00', '\x7f', '\xe9', '\r', ':', '/', '2', '.', '@'];
    let accepted = 0;
    for (let n = 0; n < 3000; n++) {
      let line = 'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0';
      for (let k = 1 + rand(2); k > 0; k--) {
        const at = rand(line.length + 1);
        const ch = alphabet[rand(alphabet.length)] as string;
        const op = rand(3);
        line = op === 0 ? line.slice(0, at) + ch + line.slice(at + 1) : op === 1 ? line.slice(0, at) + ch + line.slice(at) : line.slice(0, at) + line.slice(at + 1);
      }
      const want = reference(line);
      const cseqMethod = want ?? 'MESSAGE';
      const data = keepalive((l) => [line, ...l.slice(1).map((x) => (x.startsWith('CSeq') ? `CSeq: 4 ${cseqMethod}` : x))]);
      assert.equal(peekDatagramRequest(data)?.method, want, JSON.stringify(line));
      if (want !== undefined) accepted++;
    }
    assert.ok(accepted > 300, `mutants accepted: ${accepted}`);
  });
});

/** A StampedVia's three values (the usual head's is an object whose line is made when asked for). */
const stamped = (v: StampedVia | undefined): unknown => (v === undefined ? undefined : { topVia: v.topVia, host: v.host, port: v.port, branch: v.branch });

describe('datagram shortcut: answer', () => {
  it('stamps received and rport (RFC 3581 §4) and answers to them (§18.2.2)', () => {
    const p = peekDatagramRequest(keepalive());
    assert.ok(p);
    const via = stampDatagramVia(p, flow, false);
    assert.ok(via);
    assert.deepEqual(stamped(via), {
      topVia: 'SIP/2.0/UDP 10.0.0.9:5061;rport=40001;branch=z9hG4bKoTadipkzFRr1MA6s2dCj;received=192.168.1.64',
      host: '192.168.1.64',
      port: 40001,
      branch: 'z9hG4bKoTadipkzFRr1MA6s2dCj',
    });
  });

  it('without rport and from its sent-by address: nothing stamped, answer to the sent-by port; forced rport stamps', () => {
    const p = peekDatagramRequest(keepalive((l) => l.map((x) => (x.startsWith('Via') ? 'Via: SIP/2.0/UDP 192.168.1.64:5061;branch=z9hG4bK1' : x))));
    assert.ok(p);
    assert.deepEqual(stamped(stampDatagramVia(p, flow, false)), { topVia: 'SIP/2.0/UDP 192.168.1.64:5061;branch=z9hG4bK1', host: '192.168.1.64', port: 5061, branch: 'z9hG4bK1' });
    assert.equal(stampDatagramVia(p, flow, true)?.port, 40001);
  });

  it('builds the response bytes: status line, every Via, From, To with the tag, Call-ID, CSeq, Server, empty body', () => {
    const p = peekDatagramRequest(keepalive((l) => [...l.slice(0, 2), 'Via: SIP/2.0/UDP proxy.example:5060;branch=z9hG4bKp', ...l.slice(2)]));
    assert.ok(p);
    const via = stampDatagramVia(p, flow, false);
    assert.ok(via);
    // §8.2.7: the To-tag is the stateless tag of the top Via's branch, Call-ID and CSeq.
    const tag = statelessTagOf('z9hG4bKoTadipkzFRr1MA6s2dCj', p.callId, p.cseq);
    assert.match(tag, /^[0-9a-f]{16}$/);
    assert.equal(
      buildDatagramResponse(p, via, 200, 'vms').toString('latin1'),
      [
        'SIP/2.0 200 OK',
        'Via: SIP/2.0/UDP 10.0.0.9:5061;rport=40001;branch=z9hG4bKoTadipkzFRr1MA6s2dCj;received=192.168.1.64',
        'Via: SIP/2.0/UDP proxy.example:5060;branch=z9hG4bKp',
        'From: <sip:34020000001320000001@3402000000>;tag=8OheCdgNir',
        `To: <sip:34020000002000000001@3402000000>;tag=${tag}`,
        'Call-ID: Rr5el7QLikXy7gNBiTCib4s03FjSzM6J',
        'CSeq: 4 MESSAGE',
        'Server: vms',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
  });

  it('an unparsable top Via declines (the parser answers 400)', () => {
    const p = peekDatagramRequest(keepalive((l) => l.map((x) => (x.startsWith('Via') ? 'Via: garbage' : x))));
    assert.ok(p);
    assert.equal(stampDatagramVia(p, flow, true), undefined);
  });
});
