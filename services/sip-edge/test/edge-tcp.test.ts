// The edge reaching a shard over its TCP links (shardTransport 'tcp'), on loopback with real SIP stacks: a
// device's REGISTER and keepalive go over an edge connection (the device flow in the edge Via), the shard's
// request to the device goes back on that connection through the Path and its answer returns over the links;
// a shard that cannot be reached: what waits is bounded and the rest is answered 503 + Retry-After.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildKeepalive } from '@vms/gb28181';
import { createSipStack, getTopVia, silentLogger, type Flow, type SipStack } from '@vms/sip';
import { startEdge, type SipEdge } from '../src/edge.ts';
import { createEdgeMetrics } from '../src/metrics.ts';
import { createStaticShardSource } from '../src/shard-source.ts';

const DEV = '34020000001320000901';
const PLATFORM = '34020000002000000001';
const shardOf = (port: number) => createStaticShardSource([{ code: 'shard-1', sipHost: '127.0.0.1', sipPort: port, group: 'default', online: true, draining: false }]);

describe('edge → shard over TCP links', () => {
  let shard: SipStack;
  let device: SipStack;
  let edge: SipEdge;
  const atShard: { method: string; flow: Flow; edgeFlow: string | null | undefined; path: string | undefined }[] = [];

  before(async () => {
    shard = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['tcp'] });
    for (const method of ['REGISTER', 'MESSAGE']) {
      shard.onRequest(method, (req, ctx) => {
        atShard.push({ method, flow: ctx.flow, edgeFlow: getTopVia(req).params.get('vms-f'), path: req.headers.get('Path') });
        ctx.reply(200);
      });
    }
    edge = await startEdge({ code: 'edge-t', bindHost: '127.0.0.1', host: '127.0.0.1', port: 0, transports: ['udp', 'tcp'], flowSecret: Buffer.alloc(32, 5), shards: shardOf(shard.port), shardTransport: 'tcp', log: silentLogger });
    device = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
  });
  after(async () => {
    await device?.close();
    await edge?.close();
    await shard?.close();
  });

  it("a UDP device's REGISTER and keepalive reach the shard over one edge connection; the shard's MESSAGE comes back on it", async () => {
    const target = { host: '127.0.0.1', port: edge.port, transport: 'udp' as const };
    const reg = await device.request({ method: 'REGISTER', uri: `sip:${PLATFORM}@3402000000`, headers: { From: `<sip:${DEV}@3402000000>`, To: `<sip:${DEV}@3402000000>`, Expires: '3600' }, target });
    assert.equal(reg.status, 200);
    const ka = await device.request({
      method: 'MESSAGE',
      uri: `sip:${PLATFORM}@3402000000`,
      headers: { From: `<sip:${DEV}@3402000000>`, To: `<sip:${PLATFORM}@3402000000>` },
      body: buildKeepalive({ sn: '1', deviceId: DEV, status: 'OK' }),
      contentType: 'Application/MANSCDP+xml',
      target,
    });
    assert.equal(ka.status, 200);
    assert.deepEqual(atShard.map((x) => x.method), ['REGISTER', 'MESSAGE']);
    const [r, m] = atShard as [(typeof atShard)[0], (typeof atShard)[0]];
    assert.equal(r.flow.transport, 'tcp');
    assert.notEqual(r.flow.remotePort, edge.port, "the edge's own connection (not its listening port)");
    assert.equal(m.flow.remotePort, r.flow.remotePort, 'the same connection for the same device (SEC-1 binds it)');
    assert.ok(r.edgeFlow !== undefined && r.edgeFlow !== null && r.edgeFlow === m.edgeFlow, 'the device flow named by the edge');
    assert.match(r.path ?? '', /;lr;transport=tcp;vms-f=/, 'the Path says how to reach the edge');
    assert.equal(edge.links?.openFlows('127.0.0.1', shard.port).length, 1);

    let heard: Flow | undefined;
    device.onRequest('MESSAGE', (_req, ctx) => {
      heard = ctx.flow;
      ctx.reply(200);
    });
    const back = await shard.request({ method: 'MESSAGE', uri: `sip:${DEV}@127.0.0.1`, headers: { From: `<sip:${PLATFORM}@3402000000>`, To: `<sip:${DEV}@3402000000>`, Route: r.path ?? '' }, body: '<Query/>', contentType: 'Application/MANSCDP+xml', target: r.flow });
    assert.equal(back.status, 200, "the device's answer came back over the links");
    assert.equal(heard?.remotePort, edge.port, 'the device heard the edge');
    assert.equal(edge.links?.openFlows('127.0.0.1', shard.port).length, 1, 'no other connection opened');
  });
});

describe('edge → an unreachable shard over TCP', () => {
  it('what waits for the connection is bounded: past it 503 + Retry-After; the edge keeps answering', async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const deadPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const edge = await startEdge({ code: 'edge-d', bindHost: '127.0.0.1', host: '127.0.0.1', port: 0, transports: ['udp', 'tcp'], flowSecret: Buffer.alloc(32, 6), shards: shardOf(deadPort), shardTransport: 'tcp', shardLinks: { connections: 1, maxQueued: 2 }, log: silentLogger });
    const sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
    try {
      const answers: string[] = [];
      sock.on('message', (d) => answers.push(d.toString('latin1')));
      const port = sock.address().port;
      const request = (n: number): string =>
        [`MESSAGE sip:${PLATFORM}@3402000000 SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bK-q-${n}`, `From: <sip:${DEV}@3402000000>;tag=${n}`, `To: <sip:${PLATFORM}@3402000000>`, `Call-ID: q-${n}@127.0.0.1`, `CSeq: ${n} MESSAGE`, 'Max-Forwards: 70', 'Content-Length: 0', '', ''].join('\r\n');
      // all in the edge's socket before it reads one: the connect cannot have failed yet
      for (let n = 1; n <= 5; n++) sock.send(request(n), edge.port, '127.0.0.1');
      for (let i = 0; i < 100 && answers.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(answers.length, 3, answers.join('\n'));
      for (const a of answers) {
        assert.match(a, /^SIP\/2\.0 503 /);
        assert.match(a, /\r\nRetry-After: 5\r\n/);
      }
      assert.equal(edge.counters.shed[2], 3, 'counted under bound shard_link');
      await new Promise((r) => setTimeout(r, 100));
      assert.ok(edge.links!.stats().connectFailures >= 1);
      assert.equal(edge.links!.stats().dropped, 2, 'the two that waited are dropped when the connect failed');
      const text = await createEdgeMetrics({ counters: edge.counters, shards: edge.shards, links: edge.links, defaultMetrics: false }).render();
      assert.match(text, /\nvms_edge_shed_total\{bound="shard_link"\} 3\n/);
      assert.match(text, /\nvms_edge_shard_link_dropped_total 2\n/);
      assert.match(text, /\nvms_edge_shard_connects_total\{outcome="failed"\} [1-9]/);
    } finally {
      sock.close();
      await edge.close();
    }
  });
});
