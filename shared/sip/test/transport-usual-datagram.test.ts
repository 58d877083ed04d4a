// The usual-head regex (usual-datagram.ts) reads what the header scanner reads. For every request of
// the captures (@vms/fixtures) and for mutations of them (compact and other-case
// names, LWS, CR/LF variants, repeated headers, several Vias, GB2312 bytes, truncation), whenever the
// regex takes a datagram, peekDatagramRequest's answer — what it read, the stamped top Via and its
// destination, the response bytes — equals the scanner's (peekReadings.scanned), and the scanner's
// equals the parsed path's (transport-datagram-equivalence.test.ts holds that part on hand-made cases).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildDatagramResponse, peekReadings, stampDatagramVia, writeDatagramResponse, type PeekedRequest } from '../src/transport/datagram-shortcut.ts';
import type { Flow } from '../src/transport/flow.ts';
import { loadAllSamples } from './message-fixtures/samples.ts';

const flows: Flow[] = [
  { transport: 'udp', remoteAddress: '10.64.49.218', remotePort: 7100, localAddress: '10.0.0.5', localPort: 5060 },
  { transport: 'udp', remoteAddress: '203.0.113.7', remotePort: 1024, localAddress: '10.0.0.5', localPort: 5060 },
  { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 5061, localAddress: '127.0.0.1', localPort: 5060 },
];

/** An answer's bytes as text (writeDatagramResponse answers a plain Uint8Array view of the datagram). */
const latin1 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');

/** Answers writeDatagramResponse wrote over the request's bytes (each equal to buildDatagramResponse's). */
let writtenInPlace = 0;

/**
 * What a stateless handler asks header() for (the REGISTER challenge: Authorization, Expires), names of the
 * lines the regex reads in other spellings, and a name in no request: the usual reading scans only the
 * lines after CSeq for names other than those five, so it must answer as the scanner does for all of them.
 */
const ASKED = ['Authorization', 'Expires', 'expires', 'EXPIRES', 'Expire', 'Expiresx', 'e', 'Contact', 'm', 'Max-Forwards', 'user-agent', 'Content-Length', 'l', 'From', 'from', 'TO', 'via', 'Call-ID', 'cseq', 'X-None', 'X-GB-ver', 'f', 'v', ''];
function headersAsked(p: PeekedRequest): Record<string, string | boolean | undefined> {
  const out: Record<string, string | boolean | undefined> = {};
  for (const name of ASKED) {
    out[name] = p.header(name);
    out[`has ${name}`] = p.hasHeader(name);
  }
  return out;
}

/**
 * Everything an answer depends on: the reading (body as text), and per flow and forceRport, the stamp and
 * the bytes. `read` reads a fresh copy of the datagram each time: writeDatagramResponse overwrites it.
 */
function answerOf(read: () => PeekedRequest | undefined): unknown {
  const p = read();
  if (p === undefined) return undefined;
  const out: unknown[] = [{ ...p, via: p.via, body: p.body.toString('latin1'), topVia: p.topVia, ct: p.header('Content-Type'), hasCL: p.hasHeader('Content-Length'), ...headersAsked(p) }];
  for (const f of flows) {
    for (const force of [false, true]) {
      for (const server of ['vms-signaling/0.1.0', undefined]) {
        const via = stampDatagramVia(p, f, force);
        if (via === undefined) {
          out.push(undefined);
          continue;
        }
        const bytes = buildDatagramResponse(p, via, 200, server).toString('latin1');
        out.push({ via: { topVia: via.topVia, host: via.host, port: via.port, branch: via.branch }, bytes });
        // the same answer written over a fresh reading's own bytes (its body never viewed), whenever it is
        const q = read() as PeekedRequest;
        const qVia = stampDatagramVia(q, f, force) as NonNullable<typeof via>;
        const written = writeDatagramResponse(q, qVia, 200, server);
        if (written !== undefined) {
          assert.equal(latin1(written), bytes);
          assert.deepEqual({ host: qVia.host, port: qVia.port }, { host: via.host, port: via.port });
          writtenInPlace++;
        }
      }
    }
  }
  return out;
}

const requests = loadAllSamples()
  .filter((s) => !s.startLine.startsWith('SIP/2.0'))
  .map((s) => ({ name: `${s.file}#${s.index}`, wire: s.wire }));

/** The same answer from both readings, and whether the regex took it. */
function check(wire: Buffer, name: string): boolean {
  const usual = peekReadings.matches(wire);
  if (usual) assert.deepEqual(answerOf(() => peekReadings.usual(Buffer.from(wire))), answerOf(() => peekReadings.scanned(Buffer.from(wire))), name);
  return usual;
}

describe('usual-head regex = header scanner', () => {
  it('on every request of the captures, and the usual ones are taken by the regex', () => {
    assert.ok(requests.length > 20, `requests in the captures: ${requests.length}`);
    const taken = requests.filter((r) => check(r.wire, r.name)).map((r) => r.name);
    // Keepalives of the Hikvision capture, both simulators and the SPVMN lower platform (Via … CSeq first)
    for (const file of ['03-', '04-', '17-']) assert.ok(taken.some((n) => n.startsWith(file)), `a request of ${file} read by the regex: ${taken.join(' ')}`);
    // and what it reads is what answers: the shortcut answers them
    for (const r of requests.filter((x) => taken.includes(x.name))) if (peekReadings.usual(r.wire) === undefined) assert.equal(peekReadings.scanned(r.wire), undefined, r.name);
  });

  it('on mutations of the captured requests (deterministic), taking a good share of them', () => {
    let state = 0x5eed_1234;
    const rand = (n: number): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    const pieces = [' ', '\t', '\r\n', '\n', '\r', ':', ';', ',', '=', 'v: x', 'Via: SIP/2.0/UDP h;branch=z9hG4bKx\r\n', 'From: <sip:a@b>\r\n', 'l: 0\r\n', 'c: a/b\r\n', 'To: <sip:x@y>;tag=9\r\n', 'CSeq: 1 MESSAGE\r\n', '\xb9\xfa', ';rport', ';received=1.2.3.4', ';RPORT', ':65536', ':0', 'MESSAGE', 'message', '\0'];
    const seeds = requests.filter((r) => peekReadings.matches(r.wire));
    let taken = 0;
    for (let n = 0; n < 6000; n++) {
      const seed = seeds[rand(seeds.length)] as (typeof seeds)[number];
      let text = seed.wire.toString('latin1');
      const head = text.indexOf('\r\n\r\n') + 4;
      for (let k = 1 + rand(3); k > 0; k--) {
        const at = rand(rand(4) === 0 ? text.length : head); // mostly in the header section
        const op = rand(4);
        const piece = pieces[rand(pieces.length)] as string;
        if (op === 0) text = text.slice(0, at) + piece + text.slice(at);
        else if (op === 1) text = text.slice(0, at) + text.slice(at + 1 + rand(3));
        else if (op === 2) text = text.slice(0, at) + (rand(2) === 0 ? text.charAt(at).toUpperCase() : text.charAt(at).toLowerCase()) + text.slice(at + 1);
        else text = text.slice(0, at) + piece + text.slice(at + piece.length);
      }
      if (check(Buffer.from(text, 'latin1'), `${seed.name} mutated: ${JSON.stringify(text.slice(0, 400))}`)) taken++;
    }
    assert.ok(taken > 1000, `mutants the regex read: ${taken}`);
    assert.ok(writtenInPlace > 10_000, `answers written over the request: ${writtenInPlace}`);
  });

  it('writes the answer over the request only when it can, the same bytes as the built one', () => {
    const body = '<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>1</SN>\r\n<DeviceID>34020000001320000001</DeviceID>\r\n</Notify>\r\n';
    const wire = (via: string, b = body, uri = 'sip:34020000002000000001@3402000000'): Buffer =>
      Buffer.from(
        [
          `MESSAGE ${uri} SIP/2.0`,
          `Via: SIP/2.0/UDP ${via}`,
          'From: <sip:34020000001320000001@3402000000>;tag=1',
          'To: <sip:34020000002000000001@3402000000>',
          'Call-ID: 1@192.168.1.64',
          'CSeq: 20 MESSAGE',
          'Content-Type: Application/MANSCDP+xml',
          'Max-Forwards: 70',
          `Content-Length: ${b.length}`,
          '',
          b,
        ].join('\r\n'),
        'latin1',
      );
    const flow = flows[1] as Flow; // port 1024: four digits
    const answer = (w: Buffer, opts: { force?: boolean; viewBody?: boolean; headers?: [string, string][]; server?: string; status?: number } = {}): { built: string; written: string | undefined; at: number } => {
      const server = opts.server ?? 'ua';
      const status = opts.status ?? 200;
      const built = peekReadings.usual(Buffer.from(w)) as PeekedRequest;
      const bytes = buildDatagramResponse(built, stampDatagramVia(built, flow, opts.force === true)!, status, server, opts.headers).toString('latin1');
      const copy = Buffer.from(w);
      const p = peekReadings.usual(copy) as PeekedRequest;
      if (opts.viewBody === true) assert.equal(p.body.length, body.length);
      const out = writeDatagramResponse(p, stampDatagramVia(p, flow, opts.force === true)!, status, server, opts.headers);
      // within the request's bytes (a new buffer may come from the same pool: the same ArrayBuffer)
      const inPlace = out !== undefined && out.buffer === copy.buffer && out.byteOffset >= copy.byteOffset && out.byteOffset + out.length <= copy.byteOffset + copy.length;
      // an answer longer than the request is written into a buffer of its own, the request left as it was
      if (!inPlace) assert.ok(copy.equals(w), 'a request not answered in place is left as it was');
      if (out !== undefined && !inPlace) assert.ok(out.length > w.length, 'a buffer of its own only when longer than the request');
      return { built: bytes, written: out === undefined ? undefined : latin1(out), at: inPlace ? out.byteOffset - copy.byteOffset : -1 };
    };
    for (const via of ['192.168.1.64:5060;rport;branch=z9hG4bK1', '192.168.1.64;branch=z9hG4bK1;rport', '192.168.1.64:5060;branch=z9hG4bK1', '203.0.113.7:1024;branch=z9hG4bK1', '203.0.113.7;rport=99;branch=x', 'h;rport=1024']) {
      // the pieces move left; with a status line longer than the request line, the first ones move right
      for (const force of [false, true]) {
        for (const status of [200, 480]) {
          for (const uri of ['sip:34020000002000000001@3402000000', 'sip:a@b']) {
            const a = answer(wire(via, body, uri), { force, status });
            assert.equal(a.written, a.built, `${via} ${force} ${status} ${uri}`);
          }
        }
      }
    }
    assert.equal(answer(wire('192.168.1.64:5060;rport=65535;branch=z9hG4bK1')).written, undefined); // rport's value longer than 1024
    assert.equal(answer(wire('192.168.1.64:5060;rport;branch=z9hG4bK1'), { viewBody: true }).written, undefined); // a handler holds the body
    // extra headers (a REGISTER's 401 challenge) are written before the tail, byte for byte the built ones (latin1: a wide character's low byte)
    for (const headers of [[['Expires', '60']], [['WWW-Authenticate', 'Digest realm="3402000000", nonce="abc", algorithm=MD5'], ['Retry-After', '7']], [['Subject', '\u4e2d\xe9']]] as [string, string][][]) {
      for (const force of [false, true]) {
        const a = answer(wire('192.168.1.64:5060;rport;branch=z9hG4bK1'), { headers, force });
        assert.equal(a.written, a.built, `${JSON.stringify(headers)} ${force}`);
      }
    }
    const long: [string, string][] = [['X-Long', 'x'.repeat(body.length + 200)]];
    for (const force of [false, true]) {
      for (const via of ['192.168.1.64:5060;rport;branch=z9hG4bK1', '203.0.113.7;rport=99;branch=x', '192.168.1.64:5060;branch=z9hG4bK1']) {
        const a = answer(wire(via), { headers: long, force }); // longer than the request: a buffer of its own
        assert.deepEqual([a.written, a.at], [a.built, -1], `${via} ${force}`);
      }
    }
    // room: an answer as long as the request is written over it, one byte longer into a buffer of its own
    const bare = wire('192.168.1.64:5060;rport;branch=z9hG4bK1', '');
    const room = bare.length - answer(bare, { server: '' }).built.length;
    const fits = answer(bare, { server: 'x'.repeat(room) });
    assert.equal(fits.built.length, bare.length);
    assert.equal(fits.written, fits.built);
    const longer = answer(bare, { server: 'x'.repeat(room + 1) });
    assert.deepEqual([longer.written, longer.at], [longer.built, -1]);
    // where it starts: where From … To lie in the request (that piece not moved) when the answer then ends
    // within the datagram, else at its first byte
    const fromAt = (t: string): number => t.indexOf('\r\nFrom: ');
    const usual = answer(wire('192.168.1.64:5060;rport;branch=z9hG4bK1'));
    assert.equal(usual.written, usual.built);
    assert.equal(usual.at + fromAt(usual.built), fromAt(wire('192.168.1.64:5060;rport;branch=z9hG4bK1').toString('latin1')));
    assert.ok(usual.at > 0);
    const shift = fromAt(bare.toString('latin1')) - fromAt(answer(bare, { server: '' }).built); // how far From … To moves left
    assert.ok(shift > 0);
    const last = answer(bare, { server: 'x'.repeat(room - shift) }); // ends at the datagram's end, From … To in place
    assert.deepEqual([last.written, last.at, last.at + last.built.length], [last.built, shift, bare.length]);
    const over = answer(bare, { server: 'x'.repeat(room - shift + 1) }); // one byte more: from the first byte
    assert.deepEqual([over.written, over.at], [over.built, 0]);
  });

  it('reads `;rport;branch=<value>` (flagged by the regex, canonicalParams not called) as the scanner does, and the lists around it', () => {
    const wire = (params: string): Buffer =>
      Buffer.from(
        [
          'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
          `Via: SIP/2.0/UDP 192.168.1.64:5060${params}`,
          'From: <sip:34020000001320000001@3402000000>;tag=1',
          'To: <sip:34020000002000000001@3402000000>',
          'Call-ID: 1@192.168.1.64',
          'CSeq: 20 MESSAGE',
          'Content-Type: Application/MANSCDP+xml',
          'Max-Forwards: 70',
          'Content-Length: 0',
          '',
          '',
        ].join('\r\n'),
        'latin1',
      );
    const many = Array.from({ length: 14 }, (_, i) => `;p${i}`).join('');
    const lists = [
      ';rport;branch=z9hG4bK1',
      ';rport;branch=z',
      ';rport;branch=z9hG4bK-1=2',
      ';rport;branch=z9hG4bK1;x',
      ';rport;branch=z9hG4bK1;rport',
      ';rport;branch=z9hG4bK1;branch=z9hG4bK2',
      ';rport;branch=z9hG4bK1;received=1.2.3.4',
      ';rport;branch=z9hG4bK1' + many,
      ';rport;branch=z9hG4bK1' + many + ';q',
      ';rport;branchx=1',
      ';rport=7;branch=z9hG4bK1',
      ';rport;rport;branch=z9hG4bK1',
      ';branch=z9hG4bK1;rport',
      ';rport',
      '',
    ];
    for (const params of lists) assert.ok(check(wire(params), params), `the regex reads ${params}`);
    assert.equal(check(wire(';rport;branch='), 'empty branch'), false, 'an empty value: the scanner decides');
    // what the flagged reading hands on: the stamp and the To-tag over the branch (both compared by check)
    const p = peekReadings.usual(wire(';rport;branch=z9hG4bK1')) as PeekedRequest;
    const via = stampDatagramVia(p, flows[0] as Flow, false);
    assert.deepEqual([via?.branch, via?.topVia, via?.port], ['z9hG4bK1', 'SIP/2.0/UDP 192.168.1.64:5060;rport=7100;branch=z9hG4bK1;received=10.64.49.218', 7100]);
  });

  it('takes the tail variants (User-Agent, padded Content-Length) and leaves other orders to the scanner, same answer', () => {
    const body = '<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>1</SN>\r\n<DeviceID>34020000001320000001</DeviceID>\r\n<Info>\xc9\xe3\xcf\xf1\xbb\xfa</Info>\r\n</Notify>\r\n';
    const headOf = (tail: string[]): Buffer =>
      Buffer.from(
        [
          'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
          'Via: SIP/2.0/UDP 192.168.1.64:5060;rport;branch=z9hG4bK1',
          'From: <sip:34020000001320000001@3402000000>;tag=1',
          'To: <sip:34020000002000000001@3402000000>',
          'Call-ID: 1@192.168.1.64',
          'CSeq: 20 MESSAGE',
          ...tail,
          '',
          body,
        ].join('\r\n'),
        'latin1',
      );
    const len = `${Buffer.byteLength(body, 'latin1')}`;
    const cases: Array<[string[], boolean]> = [
      [['Content-Type: Application/MANSCDP+xml', 'Max-Forwards: 70', `Content-Length: ${len}`], true],
      [['Content-Type: Application/MANSCDP+xml', 'Max-Forwards: 70', 'User-Agent: IP Camera', `Content-Length:   ${len}`], true],
      [['Max-Forwards: 70', 'Contact: <sip:34020000001320000001@192.168.1.64:5060>', 'Content-Type: Application/MANSCDP+xml', `Content-Length: ${len}`], true],
      [['Max-Forwards: 70', 'l: ' + len, 'c: Application/MANSCDP+xml', 'v: SIP/2.0/UDP proxy:5060;branch=z9hG4bK0'], true],
      [['Content-Type: Application/MANSCDP+xml', 'Max-Forwards: 70', `Content-Length: ${Number(len) + 1}`], true],
      [['Content-Type: Application/MANSCDP+xml', 'From: <sip:x@y>;tag=2', `Content-Length: ${len}`], true],
    ];
    for (const [tail, matches] of cases) {
      const wire = headOf(tail);
      assert.equal(check(wire, tail.join('|')), matches, tail.join('|'));
    }
    // the answers themselves: taken, refused (wrong length, second From) exactly as the scanner does
    assert.ok(peekReadings.usual(headOf(cases[0]![0])));
    assert.equal(peekReadings.usual(headOf(cases[4]![0])), undefined);
    assert.equal(peekReadings.usual(headOf(cases[5]![0])), undefined);
    assert.equal(peekReadings.usual(headOf(cases[3]![0]))?.via.length, 2);
    // the devices' Content-Type spelling is read as it is written, and so is any longer or other one
    for (const type of ['Application/MANSCDP+xml', 'Application/MANSCDP+xmlx', 'Application/MANSCDP+xml;charset=GB2312', 'application/MANSCDP+xml', 'Application/MANSCDP+xm']) {
      const w = headOf([`Content-Type: ${type}`, 'Max-Forwards: 70', `Content-Length: ${len}`]);
      assert.ok(peekReadings.matches(w), type);
      assert.equal(peekReadings.usual(w)?.contentType, type);
      assert.equal(peekReadings.scanned(w)?.contentType, type);
    }
  });

  it("takes a REGISTER's tail (Contact … Expires, Content-Length): on it and on every single-character mutation, the scanner's answer and header() answers", () => {
    const lines = (ua: boolean, authorization: boolean): Buffer =>
      Buffer.from(
        [
          'REGISTER sip:34020000002000000001@3402000000 SIP/2.0',
          'Via: SIP/2.0/UDP 127.0.0.1:40000;rport;branch=z9hG4bK-rc-1-1',
          'From: <sip:34020000001320000001@3402000000>;tag=rc1',
          'To: <sip:34020000001320000001@3402000000>',
          'Call-ID: rc-1@bench',
          'CSeq: 1 REGISTER',
          'Contact: <sip:34020000001320000001@127.0.0.1:40000>',
          ...(authorization ? ['Authorization: Digest username="34020000001320000001", realm="3402000000", nonce="ab", uri="sip:a@b", response="0d"'] : []),
          'Max-Forwards: 70',
          ...(ua ? ['User-Agent: IP Camera'] : []),
          'Expires: 3600',
          'Content-Length: 0',
          '',
          '',
        ].join('\r\n'),
        'latin1',
      );
    for (const ua of [true, false]) {
      assert.equal(check(lines(ua, false), `REGISTER ua=${ua}`), true);
      assert.equal(peekReadings.usual(lines(ua, false))?.header('Expires'), '3600');
      assert.equal(peekReadings.usual(lines(ua, false))?.hasHeader('Authorization'), false);
      assert.equal(check(lines(ua, true), `REGISTER with Authorization ua=${ua}`), true); // the head; not the tail: the scanner reads the rest
      assert.equal(peekReadings.usual(lines(ua, true))?.hasHeader('Authorization'), true);
    }
    const CHARS = ['', ' ', '\t', '\r', '\n', ':', ';', '0', '9', 'a', 'A', 'e', 'E', 'x', '-', '\xb9'];
    let taken = 0;
    for (const ua of [true, false]) {
      const seed = lines(ua, false).toString('latin1');
      const tailAt = seed.indexOf('\r\nContact:');
      for (let i = tailAt; i < seed.length; i++) {
        for (const c of CHARS) {
          for (const text of [seed.slice(0, i) + c + seed.slice(i + 1), seed.slice(0, i) + c + seed.slice(i)]) {
            if (check(Buffer.from(text, 'latin1'), JSON.stringify(text))) taken++;
          }
        }
      }
    }
    assert.ok(taken > 500, `REGISTER mutants the regex read: ${taken}`);
  });
});
