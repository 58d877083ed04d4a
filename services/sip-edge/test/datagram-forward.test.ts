// The edge's byte path (datagram-forward.ts): for the plain shapes it takes, the bytes it sends are checked
// against hand-written expectations and against what the parsed path (forward.ts) sends for the same
// message; for everything else it must step aside (undefined) so the parsed path validates and decides.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePlacementRules, type Shard } from '@vms/routing';
import { parseSipMessage, serializeSipMessage, type Flow, type SipMessage, type SipRequest, type SipResponse } from '@vms/sip';
import { forwardDeviceDatagram, forwardShardResponse, isResponseDatagram, readDeviceDatagram } from '../src/datagram-forward.ts';
import { FlowCodec } from '../src/flow-token.ts';
import { forwardRequest, forwardResponse, type ForwardContext } from '../src/forward.ts';

const codec = new FlowCodec(Buffer.alloc(32, 1));
const shards: Shard[] = [
  { code: 'a', sipHost: '10.0.0.1', sipPort: 5061, group: 'default', online: true, draining: false },
  { code: 'b', sipHost: '10.0.0.2', sipPort: 5062, group: 'default', online: true, draining: false },
];
const ctx: ForwardContext = { self: { code: 'edge-1', host: '192.0.2.1', port: 5060 }, codec, policy: compilePlacementRules([]), shards: () => shards };
const DEV = '34020000001320000001';
const deviceFlow: Flow = { transport: 'udp', remoteAddress: '198.51.100.7', remotePort: 40001, localAddress: '192.0.2.1', localPort: 5060 };
const BODY = '<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>7</SN>\r\n<DeviceID>34020000001320000001</DeviceID>\r\n<Status>OK</Status>\r\n</Notify>\r\n';

const bytes = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'latin1');
/** A keepalive as test/sipp/edge/keepalive.xml sends it (header lines given one per line, \n-separated). */
const keepalive = (opts: { via?: string; extra?: string; from?: string; method?: string; cseq?: string; length?: number; mf?: string | null } = {}): Buffer => {
  const mf = opts.mf === undefined ? 'Max-Forwards: 70\n' : opts.mf === null ? '' : `Max-Forwards: ${opts.mf}\n`;
  const head = `${opts.method ?? 'MESSAGE'} sip:34020000002000000001@3402000000 SIP/2.0
Via: ${opts.via ?? 'SIP/2.0/UDP 192.168.1.64:5060;rport;branch=z9hG4bK-dev-1'}
From: <sip:${opts.from ?? DEV}@3402000000>;tag=1
To: <sip:34020000002000000001@3402000000>
Call-ID: c1@192.168.1.64
CSeq: ${opts.cseq ?? `20 ${opts.method ?? 'MESSAGE'}`}
${mf}${opts.extra ?? ''}User-Agent: dev
Content-Type: Application/MANSCDP+xml
Content-Length: ${opts.length ?? BODY.length}

`;
  return Buffer.concat([bytes(head), Buffer.from(BODY, 'latin1')]);
};

const forwardBytes = (data: Buffer, flow = deviceFlow) => {
  const read = readDeviceDatagram(data);
  return read === undefined ? undefined : forwardDeviceDatagram(read, flow, ctx);
};

/** The parsed path for the same datagram: parsed, top Via stamped as the transport does, forwarded. */
function parsedPath(data: Buffer, stampedVia: string): { msg: SipMessage; host: string; port: number } {
  const req = parseSipMessage(data, { trustDatagramEnd: true }) as SipRequest;
  const vias = req.headers.getLines('Via');
  req.headers.delete('Via');
  req.headers.prepend('Via', [stampedVia, ...vias.slice(1)].join(', '));
  const action = forwardRequest(req, deviceFlow, ctx);
  assert.equal(action.kind, 'to-shard');
  if (action.kind !== 'to-shard') throw new Error('unreachable');
  return { msg: action.msg, host: action.shard.sipHost, port: action.shard.sipPort };
}

const linesOf = (m: SipMessage): string[] => m.headers.entries().map(([n, v]) => `${n}: ${v}`);

describe('edge byte path: device keepalive → shard', () => {
  it('request line, the edge Via on top, the device Via stamped (received, rport), Max-Forwards - 1, the rest and the body as they came', () => {
    const out = forwardBytes(keepalive());
    assert.ok(out !== undefined);
    const text = out.data.toString('latin1');
    const token = codec.encode({ transport: 'udp', address: '198.51.100.7', port: 40001 });
    const m = /^Via: SIP\/2\.0\/UDP 192\.0\.2\.1:5060;branch=(z9hG4bKe[0-9a-z]+);vms-f=([^\r]+)\r\n/m.exec(text);
    assert.ok(m !== null, text);
    assert.equal(m[2], token);
    const expected = `MESSAGE sip:34020000002000000001@3402000000 SIP/2.0
Via: SIP/2.0/UDP 192.0.2.1:5060;branch=${m[1]};vms-f=${token}
Via: SIP/2.0/UDP 192.168.1.64:5060;rport=40001;branch=z9hG4bK-dev-1;received=198.51.100.7
From: <sip:${DEV}@3402000000>;tag=1
To: <sip:34020000002000000001@3402000000>
Call-ID: c1@192.168.1.64
CSeq: 20 MESSAGE
Max-Forwards: 69
User-Agent: dev
Content-Type: Application/MANSCDP+xml
Content-Length: ${BODY.length}

`;
    assert.equal(text, bytes(expected).toString('latin1') + BODY);
  });

  it('the same shard, branch and headers as the parsed path (a retransmission may take either)', () => {
    for (const mf of ['70', null]) {
      for (const dev of [DEV, '34020000001320000002', '11010000001320000077']) {
        const data = keepalive({ from: dev, mf });
        const out = forwardBytes(data);
        assert.ok(out !== undefined);
        const parsed = parsedPath(data, 'SIP/2.0/UDP 192.168.1.64:5060;rport=40001;branch=z9hG4bK-dev-1;received=198.51.100.7');
        assert.deepEqual({ host: out.host, port: out.port }, { host: parsed.host, port: parsed.port });
        const fast = parseSipMessage(out.data, { trustDatagramEnd: true });
        assert.deepEqual(linesOf(fast).sort(), linesOf(parseSipMessage(serializeSipMessage(parsed.msg))).sort());
        assert.deepEqual(fast.body, parsed.msg.body);
      }
    }
  });

  it('NOTIFY and compact header names are taken too; another device flow gets another branch and token', () => {
    const notify = forwardBytes(keepalive({ method: 'NOTIFY', extra: 'Event: Catalog\n' }));
    assert.ok(notify !== undefined);
    const compact = bytes(`MESSAGE sip:34020000002000000001@3402000000 SIP/2.0
v: SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK-c
f: <sip:${DEV}@3402000000>;tag=1
t: <sip:34020000002000000001@3402000000>
i: c2@192.168.1.64
CSeq: 3 MESSAGE
l: 0

`);
    const a = forwardBytes(compact);
    const b = forwardBytes(compact, { ...deviceFlow, remotePort: 40002 });
    assert.ok(a !== undefined && b !== undefined);
    const top = (o: { data: Buffer }): string => /^Via: ([^\r]+)/m.exec(o.data.toString('latin1'))?.[1] ?? '';
    assert.notEqual(top(a), top(b));
    assert.match(a.data.toString('latin1'), /\r\nv: SIP\/2\.0\/UDP 192\.168\.1\.64:5060;branch=z9hG4bK-c;received=198\.51\.100\.7\r\n[^]*\r\nMax-Forwards: 69\r\n\r\n$/);
  });

  it('steps aside for everything not plain (the parsed path validates and answers it)', () => {
    const aside: Record<string, Buffer> = {
      REGISTER: keepalive({ method: 'REGISTER' }),
      INVITE: keepalive({ method: 'INVITE' }),
      'a Route (shard → device, or a device naming one)': keepalive({ extra: 'Route: <sip:edge@192.0.2.1:5060;lr;vms-f=x.y>\n' }),
      'From not a device code': keepalive({ from: 'admin' }),
      'From a 21-digit user': keepalive({ from: `${DEV}1` }),
      'a second From': keepalive({ extra: `From: <sip:${DEV}@3402000000>;tag=2\n` }),
      'CSeq method not the request method': keepalive({ cseq: '20 NOTIFY' }),
      'Content-Length not the body': keepalive({ length: BODY.length - 1 }),
      'Max-Forwards 0 (483 from the parsed path)': keepalive({ mf: '0' }),
      'Max-Forwards not a number': keepalive({ mf: '7a' }),
      'Max-Forwards over 255': keepalive({ mf: '256' }),
      'a second Max-Forwards': keepalive({ extra: 'Max-Forwards: 70\n' }),
      'a second Content-Length': keepalive({ extra: `Content-Length: ${BODY.length}\n` }),
      'no Content-Length (a UDP body may run to the end; the parsed path decides)': bytes(`MESSAGE sip:x@y SIP/2.0\nVia: SIP/2.0/UDP 1.2.3.4;branch=z9hG4bK-1\nFrom: <sip:${DEV}@3402000000>;tag=1\nTo: <sip:x@y>\nCall-ID: c\nCSeq: 1 MESSAGE\n\n${BODY}`),
      'a line that is not a header': keepalive({ extra: 'NoColonHere\n' }),
      'a method in lower case': keepalive({ method: 'message' }),
      'a folded header line': keepalive({ extra: 'Subject: a\n b\n' }),
      'two hops on the top Via line': keepalive({ via: 'SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK-1, SIP/2.0/UDP 10.1.1.1;branch=z9hG4bK-2' }),
      'a Via with received already': keepalive({ via: 'SIP/2.0/UDP 192.168.1.64:5060;received=203.0.113.1;branch=z9hG4bK-1' }),
      'no end of headers': bytes('MESSAGE sip:x@y SIP/2.0\nVia: SIP/2.0/UDP 1.2.3.4;branch=z9hG4bK-1\n'),
    };
    for (const [why, data] of Object.entries(aside)) assert.equal(forwardBytes(data), undefined, why);
    const noShard: ForwardContext = { ...ctx, shards: () => [] };
    const read = readDeviceDatagram(keepalive());
    assert.ok(read !== undefined);
    assert.equal(forwardDeviceDatagram(read, deviceFlow, noShard), undefined, 'no shard: the parsed path answers 503');
  });
});

describe('edge byte path: shard response → device', () => {
  const through = (): string => {
    const out = forwardBytes(keepalive());
    assert.ok(out !== undefined);
    return out.data.toString('latin1');
  };
  const answer = (vias: string, extra = ''): Buffer =>
    bytes(`SIP/2.0 200 OK
${vias}
From: <sip:${DEV}@3402000000>;tag=1
To: <sip:34020000002000000001@3402000000>;tag=9
Call-ID: c1@192.168.1.64
CSeq: 20 MESSAGE
${extra}Content-Length: 0

`);
  const viaLines = (text: string): string => text.split('\r\n').filter((l) => l.startsWith('Via: ')).join('\n');

  it("the edge's Via line removed, the rest byte for byte, to the device flow the token names; the parsed path agrees", () => {
    const vias = viaLines(through());
    const res = answer(vias);
    assert.ok(isResponseDatagram(res));
    const out = forwardShardResponse(res, ctx);
    assert.ok(out !== undefined);
    assert.deepEqual({ host: out.host, port: out.port }, { host: '198.51.100.7', port: 40001 });
    assert.equal(out.data.toString('latin1'), answer(vias.split('\n')[1] ?? '').toString('latin1'));
    const parsed = forwardResponse(parseSipMessage(res) as SipResponse, ctx);
    assert.equal(parsed.kind, 'to-device');
    if (parsed.kind === 'to-device') assert.deepEqual(linesOf(parseSipMessage(out.data)), linesOf(parseSipMessage(serializeSipMessage(parsed.msg))));
  });

  it('a shard that added received/rport to the edge Via: still ours', () => {
    const [edge = '', dev = ''] = viaLines(through()).split('\n');
    const out = forwardShardResponse(answer(`${edge};received=10.0.0.9;rport=5060\n${dev}`), ctx);
    assert.ok(out !== undefined);
    assert.equal(out.port, 40001);
  });

  it('steps aside for anything else; a forged token is never sent anywhere', () => {
    const [edge = '', dev = ''] = viaLines(through()).split('\n');
    const token = /vms-f=([^;\r\n]+)/.exec(edge)?.[1] ?? '';
    const forged = `${Buffer.from('u|203.0.113.9|53|').toString('base64url')}.${token.split('.')[1] ?? ''}`;
    const tcp = codec.encode({ transport: 'tcp', address: '198.51.100.7', port: 40001, connectionId: 4, edge: 'edge-1' });
    const aside: Record<string, Buffer> = {
      'forged flow token': answer(`${edge.replace(token, forged)}\n${dev}`),
      'a TCP flow (the connection lives in the parsed path)': answer(`${edge.replace(token, tcp)}\n${dev}`),
      'not our port': answer(`${edge.replace(':5060;', ':5070;')}\n${dev}`),
      'not an edge branch': answer(`${edge.replace(/branch=z9hG4bKe/, 'branch=z9hG4bKx')}\n${dev}`),
      'only our Via (nowhere to go)': answer(edge),
      'two hops on one line': answer(`${edge}, ${dev.slice(5)}`),
      'no flow token (a shard request answered: by the next Via)': answer(`${edge.replace(/;vms-f=[^;]+/, '')}\n${dev}`),
      'no Call-ID': bytes(`SIP/2.0 200 OK\n${edge}\n${dev}\nFrom: <sip:${DEV}@x>;tag=1\nTo: <sip:y@x>\nCSeq: 1 MESSAGE\nContent-Length: 0\n\n`),
      'Content-Length not the body': answer(`${edge}\n${dev}`).subarray(0, -2),
    };
    for (const [why, data] of Object.entries(aside)) assert.equal(forwardShardResponse(data, ctx), undefined, why);
    assert.equal(isResponseDatagram(keepalive()), false);
  });
});
