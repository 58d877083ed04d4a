// The datagram shortcut gives the answer the parsed path gives. For each request, the full path is
// what the stack does with a parsed request (transport stamping §18.2.1, createResponse with the
// stateless To-tag, serialisation, responseDestination §18.2.2); the shortcut is peek, stamp, tag and
// build from bytes. When the shortcut answers, the bytes and the destination must be identical; the
// canonical-Via stamping must match parse-stamp-format on every input it accepts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getTopVia } from '../src/message/accessors.ts';
import { createResponse } from '../src/message/build.ts';
import { parseSipMessage } from '../src/message/parse.ts';
import { serializeSipMessage } from '../src/message/serialize.ts';
import type { SipRequest } from '../src/message/types.ts';
import { formatVia, parseViaHop } from '../src/message/via.ts';
import { stampCanonicalVia, stampCanonicalViaAt } from '../src/transport/canonical-via.ts';
import { buildDatagramResponse, peekDatagramRequest, stampDatagramVia, writeDatagramResponse } from '../src/transport/datagram-shortcut.ts';
import type { Flow } from '../src/transport/flow.ts';
import { checkRequiredHeaders, rewriteTopVia } from '../src/transport/inbound.ts';
import { responseDestination, stampReceived } from '../src/transport/via-stamp.ts';
import { statelessTagOf, statelessToTag, writeStatelessTag } from '../src/ua/stateless-tag.ts';

const BODY = '<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>7</SN>\r\n<DeviceID>34020000001320000001</DeviceID>\r\n</Notify>\r\n';
const SERVER = 'vms-signaling/0.1.0';

function datagram(lines: string[], body = BODY): Buffer {
  return Buffer.from(`${lines.join('\r\n')}\r\nContent-Length: ${Buffer.byteLength(body, 'latin1')}\r\n\r\n${body}`, 'latin1');
}

const base = (via: string[], extra: string[] = []): string[] => [
  'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
  ...via,
  'From: <sip:34020000001320000001@3402000000>;tag=123k7',
  'To: <sip:34020000002000000001@3402000000>',
  'Call-ID: 7-123@127.0.0.1',
  'CSeq: 20 MESSAGE',
  'Content-Type: Application/MANSCDP+xml',
  'Max-Forwards: 70',
  ...extra,
];

interface Answer {
  bytes: string;
  host: string;
  port: number;
}

/** What RequestDispatcher's parsed path sends (transport.#inbound + #answerStatelessly + sendResponse). */
function parsedAnswer(data: Buffer, flow: Flow, forceRport: boolean): Answer {
  const req = parseSipMessage(data, { trustDatagramEnd: true }) as SipRequest;
  checkRequiredHeaders(req);
  const top = getTopVia(req);
  if (stampReceived(top, flow.remoteAddress, flow.remotePort, forceRport)) rewriteTopVia(req, top);
  const res = createResponse(req, 200, undefined, { toTag: statelessToTag(req), headers: [['Server', SERVER]] });
  const dest = responseDestination(getTopVia(res));
  return { bytes: serializeSipMessage(res).toString('latin1'), host: dest.host, port: dest.port };
}

/**
 * What RequestDispatcher.answerDatagram sends, or undefined when the shortcut declines: written over
 * (a copy of) the datagram's bytes when it can be, else built.
 */
function shortcutAnswer(data: Buffer, flow: Flow, forceRport: boolean): Answer | undefined {
  const peek = peekDatagramRequest(Buffer.from(data));
  if (peek === undefined) return undefined;
  const via = stampDatagramVia(peek, flow, forceRport);
  if (via === undefined) return undefined;
  const bytes = writeDatagramResponse(peek, via, 200, SERVER) ?? buildDatagramResponse(peek, via, 200, SERVER);
  return { bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1'), host: via.host, port: via.port };
}

const flow: Flow = { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 40001, localAddress: '127.0.0.1', localPort: 5060 };
const natFlow: Flow = { ...flow, remoteAddress: '203.0.113.7', remotePort: 1024 };

describe('datagram shortcut = parsed path', () => {
  const vias: Array<[string, string[]]> = [
    ['SIPp / canonical with rport', ['Via: SIP/2.0/UDP 127.0.0.1:40001;rport;branch=z9hG4bK-1-7-0']],
    ['no rport, address matches', ['Via: SIP/2.0/UDP 127.0.0.1:40001;branch=z9hG4bK1']],
    ['no rport, no port', ['Via: SIP/2.0/UDP 127.0.0.1;branch=z9hG4bK1']],
    ['rport with a value', ['Via: SIP/2.0/UDP 127.0.0.1:5060;rport=9;branch=z9hG4bK1']],
    ['rport last', ['Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK1;rport']],
    ['host name', ['Via: SIP/2.0/UDP camera.local:5060;rport;branch=z9hG4bK1']],
    ['received already there', ['Via: SIP/2.0/UDP 10.0.0.1:5060;received=10.9.9.9;branch=z9hG4bK1']],
    ['lower-case protocol', ['Via: sip/2.0/udp 127.0.0.1:5060;rport;branch=z9hG4bK1']],
    ['LWS around parameters', ['Via: SIP/2.0/UDP 127.0.0.1:5060 ; rport ; branch = z9hG4bK1']],
    ['upper-case parameter name', ['Via: SIP/2.0/UDP 127.0.0.1:5060;RPort;Branch=z9hG4bK1']],
    ['duplicate parameter', ['Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK1;branch=z9hG4bK2']],
    ['leading zero port', ['Via: SIP/2.0/UDP 127.0.0.1:05060;branch=z9hG4bK1']],
    ['IPv6 sent-by', ['Via: SIP/2.0/UDP [2001:db8::1]:5060;rport;branch=z9hG4bK1']],
    ['two hops on one line', ['Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK1, SIP/2.0/UDP proxy:5060;branch=z9hG4bK0']],
    ['two Via lines', ['Via: SIP/2.0/UDP 127.0.0.1:5060;rport;branch=z9hG4bK1', 'Via: SIP/2.0/UDP proxy.example:5060;branch=z9hG4bK0']],
    ['quoted parameter value', ['Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK1;x="a b"']],
    // the To-tag hashes the branch: absent, without a value, after a longer name that starts like it
    ['no branch (RFC 2543)', ['Via: SIP/2.0/UDP 127.0.0.1:5060;rport']],
    ['branch without a value', ['Via: SIP/2.0/UDP 127.0.0.1:5060;branch;rport']],
    ['a longer name first', ['Via: SIP/2.0/UDP 127.0.0.1:5060;branchx=1;rport;branch=z9hG4bK1']],
    ['branch before rport with a value', ['Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK1;rport=7']],
    ['no branch, compact name', ['v: SIP/2.0/UDP 127.0.0.1:5060;rport']],
    ['branch without a value, compact name', ['v: SIP/2.0/UDP 127.0.0.1:5060;branch;rport']],
    ['a longer name first, compact name', ['v: SIP/2.0/UDP 127.0.0.1:5060;branchx=1;rport;branch=z9hG4bK1']],
    ['compact name', ['v: SIP/2.0/UDP 127.0.0.1:5060;rport;branch=z9hG4bK1']],
  ];
  for (const [name, via] of vias) {
    it(`same bytes and destination: ${name}`, () => {
      for (const f of [flow, natFlow]) {
        for (const force of [false, true]) {
          const data = datagram(base(via));
          const fast = shortcutAnswer(data, f, force);
          assert.ok(fast, 'the shortcut answers every parsable one of these');
          assert.deepEqual(fast, parsedAnswer(data, f, force), `${name} from ${f.remoteAddress}, forceRport ${force}`);
        }
      }
    });
  }

  it('same bytes with compact headers, header-name case and LWS variations, several Via lines', () => {
    const data = datagram([
      'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
      'v: SIP/2.0/UDP 127.0.0.1:40001;rport;branch=z9hG4bK1',
      'VIA :  SIP/2.0/UDP proxy:5060;branch=z9hG4bK0 ',
      'f:<sip:34020000001320000001@3402000000>;tag=a',
      't:\t<sip:34020000002000000001@3402000000>',
      'i: 42@host',
      'cseq:  3\tMESSAGE',
      'c: Application/MANSCDP+xml',
      'User-Agent: IP Camera',
    ]);
    for (const force of [false, true]) assert.deepEqual(shortcutAnswer(data, natFlow, force), parsedAnswer(data, natFlow, force));
  });

  it('canonical Via stamping equals parse + stampReceived + formatVia on mutated lines', () => {
    // Deterministic mutations (xorshift32) of canonical lines; whenever the fast stamp answers, it must
    // be what the parser-based stamp gives, for both the line and the destination.
    let state = 0x7669_6121;
    const rand = (n: number): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    const seeds = ['SIP/2.0/UDP 127.0.0.1:5060;rport;branch=z9hG4bK1', 'SIP/2.0/UDP cam.example;branch=z9hG4bKx;rport=7', 'SIP/2.0/UDP 10.1.2.3:65535;branch=z;ttl=1'];
    const alphabet = ';=:,. \t"[]rR0a5';
    let accepted = 0;
    for (let n = 0; n < 20_000; n++) {
      let line = seeds[rand(seeds.length)] as string;
      for (let k = 1 + rand(2); k > 0; k--) {
        const at = rand(line.length + 1);
        const ch = alphabet[rand(alphabet.length)] as string;
        const op = rand(3);
        line = op === 0 ? line.slice(0, at) + ch + line.slice(at + 1) : op === 1 ? line.slice(0, at) + ch + line.slice(at) : line.slice(0, at) + line.slice(at + 1);
      }
      const src = rand(2) === 0 ? flow : natFlow;
      const force = rand(2) === 0;
      const fast = stampCanonicalVia(line, src.remoteAddress, src.remotePort, force);
      // In place within a datagram's text, whatever surrounds the range, the same answer.
      const around = `Via: ${line}\r\n;rport=1;received=9.9.9.9:5`;
      assert.deepEqual(stampCanonicalViaAt(around, 5, 5 + line.length, src.remoteAddress, src.remotePort, force), fast, JSON.stringify(line));
      if (fast === undefined) continue;
      accepted++;
      const hop = parseViaHop(line); // throws if the fast path accepted something unparsable
      stampReceived(hop, src.remoteAddress, src.remotePort, force);
      assert.deepEqual(fast, { line: formatVia(hop), ...responseDestination(hop) }, JSON.stringify(line));
    }
    assert.ok(accepted > 2000, `mutants accepted: ${accepted}`);
  });

  it('the stateless To-tag over bytes (writeStatelessTag) is the tag over the same text as strings', () => {
    // every length modulo 4 of each part (words and trailing bytes), every alignment of the bytes in
    // their ArrayBuffer (the hash reads words through a DataView at the Buffer's byteOffset)
    const parts = ['z9hG4bK-1.2_3~x!', 'c\xe9-1@h', '7 MESSAGE'];
    const tags = new Set<string>();
    for (let cut = 0; cut < 3; cut++) {
      for (let drop = 0; drop < 4; drop++) {
        const p = parts.map((x, i) => (i === cut ? x.slice(0, x.length - drop) : x)) as [string, string, string];
        for (let shift = 0; shift < 4; shift++) {
          const text = `xx${p[0]}|${p[1]}|${p[2]}|${'-'.repeat(16)}`;
          const b = Buffer.alloc(text.length + shift + 3).subarray(shift, shift + text.length);
          b.write(text, 'latin1');
          const at: number[] = [];
          let o = 2;
          for (const x of p) {
            at.push(o, o + x.length);
            o += x.length + 1;
          }
          writeStatelessTag(b, at[0]!, at[1]!, at[2]!, at[3]!, at[4]!, at[5]!, o);
          assert.equal(b.toString('latin1', o), statelessTagOf(...p), `${cut}/${drop}/${shift}`);
          assert.equal(b.toString('latin1', 0, o), text.slice(0, o), 'only the tag is written');
        }
        tags.add(statelessTagOf(...p));
      }
    }
    assert.equal(tags.size, 10, 'each cut a different tag (drop 0 is the same text for every part)');
  });

  it('the stateless To-tag hashes the parts as one text: equal inputs equal tags, any change another tag', () => {
    const tag = statelessTagOf('z9hG4bK1', 'c', '1 MESSAGE');
    assert.match(tag, /^[0-9a-f]{16}$/);
    assert.equal(statelessTagOf('z9hG4bK1', 'c', '1 MESSAGE'), tag);
    assert.notEqual(statelessTagOf('z9hG4bK2', 'c', '1 MESSAGE'), tag);
    assert.notEqual(statelessTagOf('z9hG4bK1', 'd', '1 MESSAGE'), tag);
    assert.notEqual(statelessTagOf('z9hG4bK1', 'c', '2 MESSAGE'), tag);
    // The separator is hashed: moving a character across a part boundary changes the tag.
    assert.notEqual(statelessTagOf('z9hG4bK1c', '', '1 MESSAGE'), tag);
  });
});
