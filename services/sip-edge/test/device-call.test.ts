// A device's own call through the edge (GB/T 28181-2016 §9.12 voice broadcast / talk: after the Broadcast
// MESSAGE the device INVITEs the platform, From = its audio output channel): placed by the device that spoke
// last on the flow, record-routed twice (RFC 5658) in the order that makes each side's in-dialog requests
// arrive with the other side's entry on top (RFC 3261 §12.1.1: the UAS keeps Record-Route in order, §12.1.2:
// the UAC reverses it). Expectations written by hand from those clauses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePlacementRules, placeDevice, type Shard } from '@vms/routing';
import { getRouteSet, getVias, parseSipMessage, type Flow, type SipRequest } from '@vms/sip';
import { FlowDevices } from '../src/flow-devices.ts';
import { FlowCodec } from '../src/flow-token.ts';
import { FLOW_PARAM, forwardRequest, SHARD_PARAM, type ForwardAction, type ForwardContext } from '../src/forward.ts';

const codec = new FlowCodec(Buffer.alloc(32, 1));
const shards: Shard[] = [
  { code: 'a', sipHost: '10.0.0.1', sipPort: 5061, group: 'default', online: true, draining: false },
  { code: 'b', sipHost: '10.0.0.2', sipPort: 5062, group: 'default', online: true, draining: false },
  { code: 'c', sipHost: '10.0.0.3', sipPort: 5063, group: 'default', online: true, draining: false },
];
const policy = compilePlacementRules([]);
const context = (devices = new FlowDevices()): ForwardContext => ({ self: { code: 'edge-1', host: '192.0.2.1', port: 5060 }, codec, policy, shards: () => shards, devices });
const DEV = '34020000001320000001';
const CHANNEL = '34020000001370000001'; // the device's audio output channel (type 137)
const deviceFlow: Flow = { transport: 'udp', remoteAddress: '198.51.100.7', remotePort: 40001, localAddress: '192.0.2.1', localPort: 5060 };

const parse = (text: string): SipRequest => parseSipMessage(Buffer.from(text.replace(/\n/g, '\r\n'))) as SipRequest;
const fromDevice = (method: string, from: string, extra = '', branch = 'z9hG4bK-dev-1', cseq = `1 ${method}`): SipRequest =>
  parse(`${method} sip:34020000002000000001@3402000000 SIP/2.0
Via: SIP/2.0/UDP 192.168.1.64:5060;rport=40001;received=198.51.100.7;branch=${branch}
From: <sip:${from}@3402000000>;tag=1
To: <sip:34020000002000000001@3402000000>${extra}
Call-ID: bc1@192.168.1.64
CSeq: ${cseq}
Contact: <sip:${from}@192.168.1.64:5060>
Max-Forwards: 70
Content-Length: 0

`);
const toShard = (a: ForwardAction): Extract<ForwardAction, { kind: 'to-shard' }> => {
  assert.equal(a.kind, 'to-shard', JSON.stringify(a));
  return a as Extract<ForwardAction, { kind: 'to-shard' }>;
};
const placedOn = (id: string): string => placeDevice(policy, shards, id)?.code ?? 'none';
// a device code placed elsewhere than the channel code would be: From alone would pick the wrong shard
const device = ((): string => {
  for (let i = 1; ; i++) {
    const id = `340200000013200${String(i).padStart(5, '0')}`;
    if (placedOn(id) !== placedOn(CHANNEL)) return id;
  }
})();

describe("a device's INVITE through the edge (GB/T 28181 §9.12)", () => {
  it('goes to the shard of the device that spoke on the flow (not of the channel in From), record-routed: device entry on top, shard entry below', () => {
    const ctx = context();
    const keepalive = toShard(forwardRequest(fromDevice('MESSAGE', device), deviceFlow, ctx));
    const out = toShard(forwardRequest(fromDevice('INVITE', CHANNEL), deviceFlow, ctx));
    assert.equal(out.shard.code, keepalive.shard.code);
    assert.equal(out.shard.code, placedOn(device));
    assert.notEqual(out.shard.code, placedOn(CHANNEL));
    assert.equal(out.deviceId, device);
    const vias = getVias(out.msg);
    assert.deepEqual(codec.decode(vias[0]?.params.get(FLOW_PARAM) ?? ''), { transport: 'udp', address: '198.51.100.7', port: 40001 }, 'the device flow in the edge Via: the shard checks it (SEC-1)');
    assert.equal(vias[1]?.params.get('branch'), 'z9hG4bK-dev-1');
    assert.equal(out.msg.headers.get('Max-Forwards'), '69');
    const rr = getRouteSet(out.msg, 'Record-Route');
    assert.equal(rr.length, 2);
    assert.deepEqual(codec.decode(rr[0]?.uri.params.get(FLOW_PARAM) ?? ''), { transport: 'udp', address: '198.51.100.7', port: 40001 });
    assert.deepEqual(codec.decode(rr[1]?.uri.params.get(SHARD_PARAM) ?? ''), { transport: 'udp', address: out.shard.sipHost, port: out.shard.sipPort });
    for (const e of rr) assert.deepEqual([e.uri.host, e.uri.port, e.uri.params.has('lr')], ['192.0.2.1', 5060, true]);
  });

  it("in the dialog: the shard's BYE (route set = Record-Route in order) goes to the device, the device's ACK and BYE (reversed) to the shard", () => {
    const ctx = context();
    forwardRequest(fromDevice('MESSAGE', device), deviceFlow, ctx);
    const out = toShard(forwardRequest(fromDevice('INVITE', CHANNEL), deviceFlow, ctx));
    const [rrDevice = '', rrShard = ''] = out.msg.headers.getLines('Record-Route').join(', ').split(/,\s*(?=<)/);
    const inDialog = (method: string, routes: string, via: string): SipRequest =>
      parse(`${method} sip:${CHANNEL}@192.168.1.64:5060 SIP/2.0
Via: ${via}
Route: ${routes}
From: <sip:${CHANNEL}@3402000000>;tag=1
To: <sip:34020000002000000001@3402000000>;tag=2
Call-ID: bc1@192.168.1.64
CSeq: 2 ${method}
Max-Forwards: 70
Content-Length: 0

`);
    const shardFlow: Flow = { transport: 'udp', remoteAddress: out.shard.sipHost, remotePort: out.shard.sipPort, localAddress: '192.0.2.1', localPort: 5060 };
    const bye = forwardRequest(inDialog('BYE', `${rrDevice}, ${rrShard}`, `SIP/2.0/UDP ${out.shard.sipHost}:${out.shard.sipPort};branch=z9hG4bK-sbye`), shardFlow, ctx);
    assert.equal(bye.kind, 'to-device');
    if (bye.kind === 'to-device') {
      assert.deepEqual(bye.ref, { transport: 'udp', address: '198.51.100.7', port: 40001 });
      assert.equal(bye.msg.headers.get('Route'), undefined, 'both edge entries popped (§16.12)');
    }
    for (const method of ['ACK', 'BYE']) {
      const back = forwardRequest(inDialog(method, `${rrShard}, ${rrDevice}`, `SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK-d${method}`), deviceFlow, ctx);
      assert.equal(back.kind, 'to-shard-flow', method);
      if (back.kind === 'to-shard-flow') {
        assert.deepEqual(back.ref, { transport: 'udp', address: out.shard.sipHost, port: out.shard.sipPort });
        assert.equal(back.msg.headers.get('Route'), undefined);
      }
    }
  });

  it('its CANCEL and the ACK of a non-2xx answer go where the INVITE went, under the same edge Via (RFC 3261 §16.11, §17.2.3)', () => {
    const ctx = context();
    forwardRequest(fromDevice('NOTIFY', device), deviceFlow, ctx);
    const invite = toShard(forwardRequest(fromDevice('INVITE', CHANNEL), deviceFlow, ctx));
    const cancel = toShard(forwardRequest(fromDevice('CANCEL', CHANNEL, '', 'z9hG4bK-dev-1', '1 CANCEL'), deviceFlow, ctx));
    const ack = toShard(forwardRequest(fromDevice('ACK', CHANNEL, ';tag=488', 'z9hG4bK-dev-1', '1 ACK'), deviceFlow, ctx));
    for (const x of [cancel, ack]) {
      assert.equal(x.shard.code, invite.shard.code);
      assert.equal(x.msg.headers.getLines('Via')[0], invite.msg.headers.getLines('Via')[0]);
      assert.equal(x.msg.headers.get('Record-Route'), undefined, 'only the INVITE is record-routed');
    }
  });

  it('the last device that spoke on the flow wins; a TCP device gets transport=tcp on the entry it uses', () => {
    const ctx = context();
    forwardRequest(fromDevice('MESSAGE', CHANNEL), deviceFlow, ctx);
    forwardRequest(fromDevice('REGISTER', device), deviceFlow, ctx);
    assert.equal(toShard(forwardRequest(fromDevice('INVITE', CHANNEL), deviceFlow, ctx)).shard.code, placedOn(device));
    const tcp: Flow = { transport: 'tcp', remoteAddress: '198.51.100.8', remotePort: 40100, localAddress: '192.0.2.1', localPort: 5060, connectionId: 9 };
    forwardRequest(fromDevice('MESSAGE', device), tcp, ctx);
    const rr = getRouteSet(toShard(forwardRequest(fromDevice('INVITE', CHANNEL), tcp, ctx)).msg, 'Record-Route');
    assert.equal(rr[0]?.uri.params.has('transport'), false, 'the shard reaches the edge over UDP');
    assert.equal(rr[1]?.uri.params.get('transport'), 'tcp', 'the device keeps its connection');
  });

  it('a flow no device spoke on: INVITE 480 + Retry-After, CANCEL 480, ACK dropped; a re-INVITE outside our route set 481', () => {
    const ctx = context();
    const other: Flow = { ...deviceFlow, remotePort: 40002 };
    forwardRequest(fromDevice('MESSAGE', device), deviceFlow, ctx);
    assert.deepEqual(forwardRequest(fromDevice('INVITE', CHANNEL), other, ctx), { kind: 'reply', status: 480, refusal: 'unknown_flow', headers: [['Retry-After', '10']] });
    assert.equal((forwardRequest(fromDevice('CANCEL', CHANNEL, '', 'z9hG4bK-dev-1', '1 CANCEL'), other, ctx) as { status: number }).status, 480);
    assert.equal(forwardRequest(fromDevice('ACK', CHANNEL, ';tag=3', 'z9hG4bK-dev-1', '1 ACK'), other, ctx).kind, 'drop');
    assert.deepEqual(forwardRequest(fromDevice('INVITE', CHANNEL, ';tag=3'), deviceFlow, ctx), { kind: 'reply', status: 481, refusal: 'method' });
  });

  it('no eligible shard for the device: 503 + Retry-After', () => {
    const ctx: ForwardContext = { ...context(), shards: () => shards.map((s) => ({ ...s, draining: true })) };
    forwardRequest(fromDevice('MESSAGE', device), deviceFlow, ctx);
    assert.deepEqual(forwardRequest(fromDevice('INVITE', CHANNEL), deviceFlow, ctx), { kind: 'reply', status: 503, refusal: 'no_shard', headers: [['Retry-After', '10']] });
  });
});

describe('shards over TCP (shardTransport tcp)', () => {
  const tcpCtx = (): ForwardContext => ({ ...context(), shardTransport: 'tcp' });
  const shardConn: Flow = { transport: 'tcp', remoteAddress: '10.0.0.1', remotePort: 5061, localAddress: '192.0.2.1', localPort: 47001, connectionId: 3 };

  it("a device's INVITE: the shard entry names the shard's listening address over TCP, the entry the shard uses says transport=tcp; the REGISTER's Path too", () => {
    const ctx = tcpCtx();
    const reg = toShard(forwardRequest(fromDevice('REGISTER', device), deviceFlow, ctx));
    assert.match(reg.msg.headers.get('Path') ?? '', /^<sip:edge@192\.0\.2\.1:5060;lr;transport=tcp;vms-f=/);
    const out = toShard(forwardRequest(fromDevice('INVITE', CHANNEL), deviceFlow, ctx));
    const rr = getRouteSet(out.msg, 'Record-Route');
    assert.equal(rr[0]?.uri.params.get('transport'), 'tcp');
    assert.deepEqual(codec.decode(rr[1]?.uri.params.get(SHARD_PARAM) ?? ''), { transport: 'tcp', address: out.shard.sipHost, port: out.shard.sipPort });
    // the device's BYE along it goes to that shard flow
    const bye = forwardRequest(
      parse(`BYE sip:x@192.0.2.1 SIP/2.0
Via: SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK-tb
Route: ${out.msg.headers.getLines('Record-Route').join(', ').split(/,\s*(?=<)/).reverse().join(', ')}
From: <sip:${CHANNEL}@3402000000>;tag=1
To: <sip:34020000002000000001@3402000000>;tag=2
Call-ID: bc1@192.168.1.64
CSeq: 2 BYE
Max-Forwards: 70
Content-Length: 0

`),
      deviceFlow,
      ctx,
    );
    assert.equal(bye.kind, 'to-shard-flow');
    if (bye.kind === 'to-shard-flow') assert.deepEqual(bye.ref, { transport: 'tcp', address: out.shard.sipHost, port: out.shard.sipPort });
  });

  it("a shard's INVITE on an edge connection: its flow in the Record-Route is its Via port over TCP (the connection's port is the edge's)", () => {
    const ctx = tcpCtx();
    const devToken = codec.encode({ transport: 'udp', address: '198.51.100.7', port: 40001 });
    const invite = parse(`INVITE sip:34020000001310000001@192.0.2.1:5060 SIP/2.0
Via: SIP/2.0/TCP 10.0.0.1:5061;branch=z9hG4bK-tinv
Route: <sip:edge@192.0.2.1:5060;lr;transport=tcp;${FLOW_PARAM}=${devToken}>
From: <sip:34020000002000000001@3402000000>;tag=9
To: <sip:34020000001310000001@3402000000>
Call-ID: tinv@10.0.0.1
CSeq: 1 INVITE
Max-Forwards: 70
Content-Length: 0

`);
    const out = forwardRequest(invite, { ...shardConn, remotePort: 39999 }, ctx);
    assert.equal(out.kind, 'to-device');
    if (out.kind !== 'to-device') return;
    const rr = getRouteSet(out.msg as SipRequest, 'Record-Route');
    assert.deepEqual(codec.decode(rr[0]?.uri.params.get(SHARD_PARAM) ?? ''), { transport: 'tcp', address: '10.0.0.1', port: 5061 });
    assert.equal(rr[1]?.uri.params.get('transport'), 'tcp', 'the entry the shard uses');
  });

  it('a TCP shard flow is refused by an edge that speaks UDP to shards, and a device connection named as a shard flow always', () => {
    const tcpShard = codec.encode({ transport: 'tcp', address: '10.0.0.1', port: 5061 });
    const deviceConn = codec.encode({ transport: 'tcp', address: '198.51.100.7', port: 40001, connectionId: 4, edge: 'edge-1' });
    const bye = (token: string): SipRequest =>
      parse(`BYE sip:x@192.0.2.1 SIP/2.0
Via: SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK-r
Route: <sip:edge@192.0.2.1:5060;lr;${SHARD_PARAM}=${token}>
From: <sip:a@3402000000>;tag=1
To: <sip:b@3402000000>;tag=2
Call-ID: r@192.168.1.64
CSeq: 2 BYE
Max-Forwards: 70
Content-Length: 0

`);
    assert.deepEqual(forwardRequest(bye(tcpShard), deviceFlow, context()), { kind: 'reply', status: 403, refusal: 'flow_token' });
    assert.equal(forwardRequest(bye(tcpShard), deviceFlow, tcpCtx()).kind, 'to-shard-flow');
    assert.deepEqual(forwardRequest(bye(deviceConn), deviceFlow, tcpCtx()), { kind: 'reply', status: 403, refusal: 'flow_token' });
  });
});

describe('FlowDevices (bounded)', () => {
  it('remembers the last device per flow, a TCP connection by its id, and forgets the oldest flow when full', () => {
    const m = new FlowDevices(2);
    const f = (port: number): Flow => ({ ...deviceFlow, remotePort: port });
    m.learn(f(1), 'a');
    m.learn(f(2), 'b');
    m.learn(f(1), 'c');
    assert.equal(m.deviceOn(f(1)), 'c');
    m.learn(f(3), 'd');
    assert.equal(m.size, 2);
    assert.equal(m.deviceOn(f(2)), undefined, 'the oldest entry went');
    assert.deepEqual([m.deviceOn(f(1)), m.deviceOn(f(3))], ['c', 'd']);
    const conn: Flow = { transport: 'tcp', remoteAddress: '198.51.100.7', remotePort: 1, localAddress: '', localPort: 0, connectionId: 4 };
    m.learn(conn, 'e');
    assert.equal(m.deviceOn({ ...conn, remotePort: 2 }), 'e');
    assert.equal(m.deviceOn({ ...conn, connectionId: 5 }), undefined);
    assert.throws(() => new FlowDevices(0), RangeError);
  });
});
