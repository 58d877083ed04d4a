// The stateless forwarding decision (forward.ts) on hand-written messages: what goes where, which headers
// the edge adds and removes, and what it refuses. Expectations are written by hand from RFC 3261 §16.11,
// RFC 3327 §5 and RFC 3581, never produced by the code under test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePlacementRules, type Shard } from '@vms/routing';
import { getRouteSet, getVias, parseSipMessage, type Flow, type SipRequest, type SipResponse } from '@vms/sip';
import { FlowDevices } from '../src/flow-devices.ts';
import { FlowCodec } from '../src/flow-token.ts';
import { FLOW_PARAM, forwardRequest, forwardResponse, SHARD_PARAM, type ForwardContext } from '../src/forward.ts';

const codec = new FlowCodec(Buffer.alloc(32, 1));
const shards: Shard[] = [
  { code: 'a', sipHost: '10.0.0.1', sipPort: 5061, group: 'default', online: true, draining: false },
  { code: 'b', sipHost: '10.0.0.2', sipPort: 5062, group: 'default', online: true, draining: false },
];
let live = shards;
const ctx: ForwardContext = { self: { code: 'edge-1', host: '192.0.2.1', port: 5060 }, codec, policy: compilePlacementRules([]), shards: () => live };
const DEV = '34020000001320000001';
const deviceFlow: Flow = { transport: 'udp', remoteAddress: '198.51.100.7', remotePort: 40001, localAddress: '192.0.2.1', localPort: 5060 };
const shardFlow: Flow = { transport: 'udp', remoteAddress: '10.0.0.1', remotePort: 5061, localAddress: '192.0.2.1', localPort: 5060 };

const parse = (text: string): SipRequest | SipResponse => parseSipMessage(Buffer.from(text.replace(/\n/g, '\r\n'))) as SipRequest | SipResponse;
const request = (method: string, extra = '', from = DEV): SipRequest =>
  parse(`${method} sip:34020000002000000001@3402000000 SIP/2.0
Via: SIP/2.0/UDP 192.168.1.64:5060;rport=40001;received=198.51.100.7;branch=z9hG4bK-dev-1
From: <sip:${from}@3402000000>;tag=1
To: <sip:${from}@3402000000>
Call-ID: c1@192.168.1.64
CSeq: 1 ${method}
Max-Forwards: 70
${extra}Content-Length: 0

`) as SipRequest;

describe('edge forwarding (stateless proxy)', () => {
  it('device REGISTER → the placed shard, with the edge Via (device flow inside) on top, Path, Max-Forwards - 1', () => {
    const action = forwardRequest(request('REGISTER', 'Path: <sip:evil@203.0.113.9;lr>\n'), deviceFlow, ctx);
    assert.equal(action.kind, 'to-shard');
    if (action.kind !== 'to-shard') return;
    assert.ok(action.shard.code === 'a' || action.shard.code === 'b');
    assert.equal(action.deviceId, DEV);
    const vias = getVias(action.msg);
    assert.equal(vias.length, 2);
    assert.equal(vias[0]?.host, '192.0.2.1');
    assert.equal(vias[0]?.port, 5060);
    assert.match(vias[0]?.params.get('branch') ?? '', /^z9hG4bK/);
    assert.deepEqual(codec.decode(vias[0]?.params.get(FLOW_PARAM) ?? ''), { transport: 'udp', address: '198.51.100.7', port: 40001 });
    assert.equal(vias[1]?.params.get('branch'), 'z9hG4bK-dev-1', 'the device Via kept under ours');
    assert.equal(action.msg.headers.get('Max-Forwards'), '69');
    const path = getRouteSet({ ...action.msg, headers: action.msg.headers } as SipRequest, 'Route');
    assert.equal(path.length, 0);
    const paths = action.msg.headers.getLines('Path');
    assert.equal(paths.length, 1, "the device's own Path is dropped");
    assert.match(paths[0] ?? '', /^<sip:edge@192\.0\.2\.1:5060;lr;vms-f=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>$/);
  });

  it('the same request retransmitted gets the same branch; another device with the same branch another one', () => {
    const a = forwardRequest(request('MESSAGE'), deviceFlow, ctx);
    const b = forwardRequest(request('MESSAGE'), deviceFlow, ctx);
    const c = forwardRequest(request('MESSAGE'), { ...deviceFlow, remotePort: 40002 }, ctx);
    const branch = (x: typeof a): string | null | undefined => (x.kind === 'to-shard' ? getVias(x.msg)[0]?.params.get('branch') : undefined);
    assert.equal(branch(a), branch(b));
    assert.notEqual(branch(a), branch(c));
  });

  it("the shard's response → the device flow named in the edge Via, that Via removed", () => {
    const fwd = forwardRequest(request('MESSAGE'), deviceFlow, ctx);
    assert.equal(fwd.kind, 'to-shard');
    if (fwd.kind !== 'to-shard') return;
    const vias = fwd.msg.headers.getLines('Via').join(', ');
    const res = parse(`SIP/2.0 200 OK
Via: ${vias}
From: <sip:${DEV}@3402000000>;tag=1
To: <sip:${DEV}@3402000000>;tag=2
Call-ID: c1@192.168.1.64
CSeq: 1 MESSAGE
Content-Length: 0

`) as SipResponse;
    const back = forwardResponse(res, ctx);
    assert.equal(back.kind, 'to-device');
    if (back.kind !== 'to-device') return;
    assert.deepEqual(back.ref, { transport: 'udp', address: '198.51.100.7', port: 40001 });
    assert.deepEqual(getVias(back.msg).map((v) => v.params.get('branch')), ['z9hG4bK-dev-1']);
  });

  it('shard → device through the Path: Route popped, edge Via on top, sent to the device flow; the answer goes back by the shard Via', () => {
    const token = codec.encode({ transport: 'udp', address: '198.51.100.7', port: 40001 });
    const req = parse(`MESSAGE sip:${DEV}@192.0.2.1:5060 SIP/2.0
Via: SIP/2.0/UDP 10.0.0.1:5061;branch=z9hG4bK-shard-1;rport=5061;received=10.0.0.1
Route: <sip:edge@192.0.2.1:5060;lr;${FLOW_PARAM}=${token}>
From: <sip:34020000002000000001@3402000000>;tag=9
To: <sip:${DEV}@3402000000>
Call-ID: q1@10.0.0.1
CSeq: 20 MESSAGE
Max-Forwards: 70
Content-Length: 0

`) as SipRequest;
    const out = forwardRequest(req, shardFlow, ctx);
    assert.equal(out.kind, 'to-device');
    if (out.kind !== 'to-device') return;
    assert.deepEqual(out.ref, { transport: 'udp', address: '198.51.100.7', port: 40001 });
    assert.equal(out.msg.headers.get('Route'), undefined);
    const vias = getVias(out.msg);
    assert.deepEqual(vias.map((v) => v.host), ['192.0.2.1', '10.0.0.1']);
    assert.equal(vias[0]?.params.get(FLOW_PARAM), undefined, 'towards the device the edge Via names no flow');
    const answer = parse(`SIP/2.0 200 OK
Via: ${out.msg.headers.getLines('Via').join(', ')}
From: <sip:34020000002000000001@3402000000>;tag=9
To: <sip:${DEV}@3402000000>;tag=3
Call-ID: q1@10.0.0.1
CSeq: 20 MESSAGE
Content-Length: 0

`) as SipResponse;
    const back = forwardResponse(answer, ctx);
    assert.equal(back.kind, 'to-via');
    if (back.kind === 'to-via') assert.deepEqual(getVias(back.msg).map((v) => v.params.get('branch')), ['z9hG4bK-shard-1']);
  });

  it('a Route with a forged flow (a device trying to make the edge send elsewhere): 403, nothing sent', () => {
    const forged = `${Buffer.from('u|203.0.113.9|53|').toString('base64url')}.AAAAAAAAAAAAAAAA`;
    assert.deepEqual(forwardRequest(request('MESSAGE', `Route: <sip:edge@192.0.2.1:5060;lr;${FLOW_PARAM}=${forged}>\n`), deviceFlow, ctx), { kind: 'reply', status: 403, refusal: 'flow_token' });
  });

  it('refuses what a device has no business sending through the edge', () => {
    const options = forwardRequest(request('OPTIONS'), deviceFlow, ctx);
    assert.deepEqual(options, { kind: 'reply', status: 405, refusal: 'method', headers: [['Allow', 'REGISTER, MESSAGE, NOTIFY, INVITE, ACK, CANCEL']] }, 'RFC 3261 §21.4.6: 405 lists what is allowed');
    assert.deepEqual(forwardRequest(request('SUBSCRIBE'), deviceFlow, ctx).kind, 'reply');
    assert.equal((forwardRequest(request('MESSAGE', '', 'admin'), deviceFlow, ctx) as { status: number }).status, 403);
    assert.equal(forwardRequest(request('ACK'), deviceFlow, ctx).kind, 'drop');
    const spent = request('MESSAGE');
    spent.headers.set('Max-Forwards', '0');
    assert.equal((forwardRequest(spent, deviceFlow, ctx) as { status: number }).status, 483, 'RFC 3261 §16.3 step 3');
  });

  it('no eligible shard: 503 with Retry-After', () => {
    live = shards.map((s) => ({ ...s, draining: true }));
    try {
      assert.deepEqual(forwardRequest(request('REGISTER'), deviceFlow, ctx), { kind: 'reply', status: 503, refusal: 'no_shard', headers: [['Retry-After', '10']] });
    } finally {
      live = shards;
    }
  });

  it('drops responses that did not pass through this edge', () => {
    const res = parse(`SIP/2.0 200 OK
Via: SIP/2.0/UDP 10.9.9.9:5070;branch=z9hG4bK-other
Via: SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK-dev-1
From: <sip:${DEV}@3402000000>;tag=1
To: <sip:${DEV}@3402000000>;tag=2
Call-ID: c1@192.168.1.64
CSeq: 1 MESSAGE
Content-Length: 0

`) as SipResponse;
    assert.equal(forwardResponse(res, ctx).kind, 'drop');
  });

  describe('dialogs (RFC 3261 §12, §16.6 step 4, §16.12; RFC 5658 double record-route)', () => {
    const devToken = codec.encode({ transport: 'udp', address: '198.51.100.7', port: 40001 });
    const invite = (extraTo = ''): SipRequest =>
      parse(`INVITE sip:34020000001310000001@192.0.2.1:5060 SIP/2.0
Via: SIP/2.0/UDP 10.0.0.1:5061;branch=z9hG4bK-inv-1;rport=5061;received=10.0.0.1
Route: <sip:edge@192.0.2.1:5060;lr;${FLOW_PARAM}=${devToken}>
From: <sip:34020000002000000001@3402000000>;tag=9
To: <sip:34020000001310000001@3402000000>${extraTo}
Call-ID: inv1@10.0.0.1
CSeq: 1 INVITE
Contact: <sip:34020000002000000001@10.0.0.1:5061>
Max-Forwards: 70
Content-Length: 0

`) as SipRequest;

    it("the shard's INVITE: to the device flow, two Record-Route entries of the edge on top (shard flow, then device flow)", () => {
      const out = forwardRequest(invite(), shardFlow, ctx);
      assert.equal(out.kind, 'to-device');
      if (out.kind !== 'to-device') return;
      assert.deepEqual(out.ref, { transport: 'udp', address: '198.51.100.7', port: 40001 });
      assert.equal(out.msg.headers.get('Route'), undefined);
      const rr = getRouteSet(out.msg as SipRequest, 'Record-Route');
      assert.equal(rr.length, 2);
      assert.deepEqual([rr[0]?.uri.host, rr[0]?.uri.port, rr[0]?.uri.params.has('lr')], ['192.0.2.1', 5060, true]);
      assert.deepEqual(codec.decode(rr[0]?.uri.params.get(SHARD_PARAM) ?? ''), { transport: 'udp', address: '10.0.0.1', port: 5061 }, 'the shard flow: the packet source');
      assert.equal(rr[1]?.uri.params.get(FLOW_PARAM), devToken);
      assert.deepEqual(getVias(out.msg).map((v) => v.host), ['192.0.2.1', '10.0.0.1']);
    });

    it('a re-INVITE (To tag) is not record-routed again (§12.2: the route set is fixed)', () => {
      const out = forwardRequest(invite(';tag=7'), shardFlow, ctx);
      assert.equal(out.kind, 'to-device');
      if (out.kind === 'to-device') assert.equal(out.msg.headers.get('Record-Route'), undefined);
    });

    const rrOf = (): [string, string] => {
      const out = forwardRequest(invite(), shardFlow, ctx);
      if (out.kind !== 'to-device') throw new Error('not forwarded');
      const rr = out.msg.headers.getLines('Record-Route').join(', ');
      const [a, b] = rr.split(/,\s*(?=<)/);
      return [a ?? '', b ?? ''];
    };
    const inDialog = (method: string, routes: string, via: string): SipRequest =>
      parse(`${method} sip:x@192.0.2.99:5060 SIP/2.0
Via: ${via}
Route: ${routes}
From: <sip:a@3402000000>;tag=1
To: <sip:b@3402000000>;tag=2
Call-ID: inv1@10.0.0.1
CSeq: 2 ${method}
Max-Forwards: 70
Content-Length: 0

`) as SipRequest;

    it("the shard's BYE (route set = Record-Route reversed): to the device, both edge entries popped", () => {
      const [rrShard, rrDevice] = rrOf();
      const out = forwardRequest(inDialog('BYE', `${rrDevice}, ${rrShard}`, 'SIP/2.0/UDP 10.0.0.1:5061;branch=z9hG4bK-bye-1'), shardFlow, ctx);
      assert.equal(out.kind, 'to-device');
      if (out.kind !== 'to-device') return;
      assert.deepEqual(out.ref, { transport: 'udp', address: '198.51.100.7', port: 40001 });
      assert.equal(out.msg.headers.get('Route'), undefined, 'no edge entry left for the device');
      assert.equal(out.msg.headers.get('Record-Route'), undefined);
    });

    it("the device's BYE (route set = Record-Route in order): to the shard flow of the dialog, with the device flow in the edge Via", () => {
      const [rrShard, rrDevice] = rrOf();
      const out = forwardRequest(inDialog('BYE', `${rrShard}, ${rrDevice}`, 'SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK-dbye-1'), deviceFlow, ctx);
      assert.equal(out.kind, 'to-shard-flow');
      if (out.kind !== 'to-shard-flow') return;
      assert.deepEqual(out.ref, { transport: 'udp', address: '10.0.0.1', port: 5061 });
      assert.equal(out.msg.headers.get('Route'), undefined);
      const vias = getVias(out.msg);
      assert.deepEqual(codec.decode(vias[0]?.params.get(FLOW_PARAM) ?? ''), { transport: 'udp', address: '198.51.100.7', port: 40001 });
      assert.equal(vias[1]?.params.get('branch'), 'z9hG4bK-dbye-1');
      // the shard's 200 comes back to the device
      const res = parse(`SIP/2.0 200 OK
Via: ${out.msg.headers.getLines('Via').join(', ')}
From: <sip:a@3402000000>;tag=1
To: <sip:b@3402000000>;tag=2
Call-ID: inv1@10.0.0.1
CSeq: 2 BYE
Content-Length: 0

`) as SipResponse;
      const back = forwardResponse(res, ctx);
      assert.equal(back.kind, 'to-device');
      if (back.kind === 'to-device') assert.deepEqual(back.ref, { transport: 'udp', address: '198.51.100.7', port: 40001 });
    });

    it('an unsigned shard flow in a Route (a device steering the edge to an address of its choice): 403', () => {
      const forged = `${Buffer.from('u|203.0.113.9|53|').toString('base64url')}.AAAAAAAAAAAAAAAA`;
      const out = forwardRequest(inDialog('BYE', `<sip:edge@192.0.2.1:5060;lr;${SHARD_PARAM}=${forged}>`, 'SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK-x'), deviceFlow, ctx);
      assert.deepEqual(out, { kind: 'reply', status: 403, refusal: 'flow_token' });
    });

    it('a device on TCP: the entry the device uses says transport=tcp', () => {
      const tcpToken = codec.encode({ transport: 'tcp', address: '198.51.100.7', port: 40001, connectionId: 5, edge: 'edge-1' });
      const req = invite();
      req.headers.set('Route', `<sip:edge@192.0.2.1:5060;lr;${FLOW_PARAM}=${tcpToken}>`);
      const out = forwardRequest(req, shardFlow, ctx);
      assert.equal(out.kind, 'to-device');
      if (out.kind !== 'to-device') return;
      const rr = getRouteSet(out.msg as SipRequest, 'Record-Route');
      assert.equal(rr[0]?.uri.params.get('transport'), 'tcp');
      assert.equal(rr[1]?.uri.params.has('transport'), false);
      assert.equal(getVias(out.msg)[0]?.transport, 'TCP', 'the device answers on its connection (RFC 3261 §18.2.2)');
    });
  });
});
