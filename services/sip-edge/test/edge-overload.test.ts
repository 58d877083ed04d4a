// The edge's overload control (overload.ts) on real UDP sockets, loopback, with a fake shard socket: the
// sampler's signals are injected (the receive queue forced over its mark, or under it), no real load.
// Over the mark a device's first REGISTER is answered 503 + Retry-After from the bytes (RFC 3261 §8.2.6)
// and never reaches the shard; the answer to a challenge, a refresh from a flow the edge forwards for,
// and keepalives still go through. Under the marks everything is forwarded.
import assert from 'node:assert/strict';
import type dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_SHED_POLICY, silentLogger } from '@vms/sip';
import { SHED_BOUNDS } from '../src/counters.ts';
import { startEdge, type EdgeOptions, type SipEdge } from '../src/edge.ts';
import { createEdgeMetrics } from '../src/metrics.ts';
import { createStaticShardSource } from '../src/shard-source.ts';
import { answer200, createSocketPool, nextMessage } from './udp-peers.ts';

const peers = createSocketPool();
const socket = peers.socket;
const deviceId = (n: number): string => `340200000013200${String(n).padStart(5, '0')}`;

function register(port: number, n: number, o: { authorization?: boolean } = {}): Buffer {
  const dev = deviceId(n);
  return Buffer.from(
    [
      'REGISTER sip:34020000002000000001@3402000000 SIP/2.0',
      `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bK-r-${n}-${o.authorization === true ? 'a' : 'f'}`,
      `From: <sip:${dev}@3402000000>;tag=f${n}`,
      `To: <sip:${dev}@3402000000>`,
      `Call-ID: reg-${n}-${o.authorization === true ? 'auth' : 'first'}@127.0.0.1`,
      `CSeq: ${o.authorization === true ? 2 : 1} REGISTER`,
      `Contact: <sip:${dev}@127.0.0.1:${port}>`,
      'Max-Forwards: 70',
      'Expires: 3600',
      ...(o.authorization === true ? [`Authorization: Digest username="${dev}", realm="3402000000", nonce="n0nce", uri="sip:34020000002000000001@3402000000", response="00112233445566778899aabbccddeeff", algorithm=MD5`] : []),
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
    'latin1',
  );
}

function keepalive(port: number, n: number): Buffer {
  const dev = deviceId(n);
  const body = `<?xml version="1.0"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>${n}</SN>\r\n<DeviceID>${dev}</DeviceID>\r\n</Notify>\r\n`;
  return Buffer.from(
    [
      'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
      `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bK-k-${n}`,
      `From: <sip:${dev}@3402000000>;tag=k${n}`,
      'To: <sip:34020000002000000001@3402000000>',
      `Call-ID: ka-${n}@127.0.0.1`,
      'CSeq: 20 MESSAGE',
      'Max-Forwards: 70',
      'Content-Type: Application/MANSCDP+xml',
      `Content-Length: ${body.length}`,
      '',
      body,
    ].join('\r\n'),
    'latin1',
  );
}



async function until(what: string, ok: () => boolean, ms = 3000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const header = (msg: string, name: string): string | undefined => msg.split('\r\n').find((l) => l.startsWith(`${name}:`));

describe('sip edge overload control on UDP', () => {
  let shard: dgram.Socket;
  const seen: string[] = [];
  const seenCallIds = (): string[] => seen.map((m) => header(m, 'Call-ID') ?? '');
  before(async () => {
    shard = await socket();
    shard.on('message', (d, r) => {
      seen.push(d.toString('latin1'));
      shard.send(answer200(d.toString('latin1')), r.port, r.address);
    });
  });
  after(() => {
    peers.closeAll();
  });
  const start = (probe: EdgeOptions['overloadProbe']): Promise<SipEdge> =>
    startEdge({
      code: 'edge-o',
      bindHost: '127.0.0.1',
      host: '127.0.0.1',
      port: 0,
      transports: ['udp'],
      flowSecret: Buffer.alloc(32, 9),
      shards: createStaticShardSource([{ code: 's1', sipHost: '127.0.0.1', sipPort: shard.address().port, group: 'default', online: true, draining: false }]),
      maxRequestsPerSec: 1_000_000,
      perAddressRequestsPerSec: 1_000_000,
      log: silentLogger,
      overloadProbe: probe,
    });

  it('over the mark: a first REGISTER gets 503 + Retry-After and is not forwarded; answers to a challenge, refreshes and keepalives are', async () => {
    const edge = await start({ readReceiveQueue: () => 64 * 1024 * 1024, utilization: () => 1, random: () => 0 });
    try {
      // a device registering before the overload: forwarded, and its flow is now one the edge forwards for
      const known = await socket();
      const knownPort = known.address().port;
      const ok = nextMessage(known);
      known.send(register(knownPort, 1), edge.port, '127.0.0.1');
      assert.match(await ok, /^SIP\/2\.0 200 /);
      // that REGISTER was the window's arrival: the queue (forced far over the mark) takes the share to the cap
      await until('shedding', () => edge.overload.shedder.fraction > 0);

      // while shedding (the share falls only after a second without REGISTERs, and the refresh below is one):
      // the answer to a challenge from a flow the edge has never forwarded for: forwarded
      const answering = await socket();
      const answered = nextMessage(answering);
      answering.send(register(answering.address().port, 3, { authorization: true }), edge.port, '127.0.0.1');
      assert.match(await answered, /^SIP\/2\.0 200 /);
      assert.ok(seenCallIds().includes('Call-ID: reg-3-auth@127.0.0.1'));

      // a refresh (no Authorization) from the flow of a device the edge forwards for: forwarded
      const refreshed = nextMessage(known);
      known.send(Buffer.from(register(knownPort, 1).toString('latin1').replace('CSeq: 1 ', 'CSeq: 3 ').replace('-r-1-f', '-r-1-g'), 'latin1'), edge.port, '127.0.0.1');
      assert.match(await refreshed, /^SIP\/2\.0 200 /);

      // a first REGISTER of another device from that known flow (devices behind one NAT): shed, not a refresh
      const other = nextMessage(known);
      known.send(register(knownPort, 4), edge.port, '127.0.0.1');
      assert.match(await other, /^SIP\/2\.0 503 /);

      // a first REGISTER from a new flow: 503
      const fresh = await socket();
      const freshPort = fresh.address().port;
      const got = nextMessage(fresh);
      fresh.send(register(freshPort, 2), edge.port, '127.0.0.1');
      const res = await got;
      assert.match(res, /^SIP\/2\.0 503 /);
      const retryAfter = Number(/\r\nRetry-After: (\d+)\r\n/.exec(res)?.[1]);
      assert.ok(retryAfter >= DEFAULT_SHED_POLICY.retryAfterMinSec && retryAfter <= DEFAULT_SHED_POLICY.retryAfterMinSec + DEFAULT_SHED_POLICY.retryAfterMaxSpreadSec, `Retry-After ${retryAfter}`);
      // RFC 3261 §8.2.6: built from the request, Via stamped (RFC 3581 §4), To tagged
      assert.equal(header(res, 'Via'), `Via: SIP/2.0/UDP 127.0.0.1:${freshPort};rport=${freshPort};branch=z9hG4bK-r-2-f;received=127.0.0.1`);
      assert.equal(header(res, 'From'), `From: <sip:${deviceId(2)}@3402000000>;tag=f2`);
      assert.match(header(res, 'To') ?? '', new RegExp(`^To: <sip:${deviceId(2)}@3402000000>;tag=[0-9a-z]+$`));
      assert.equal(header(res, 'Call-ID'), 'Call-ID: reg-2-first@127.0.0.1');
      assert.equal(header(res, 'CSeq'), 'CSeq: 1 REGISTER');

      // after it from the same socket, a keepalive: forwarded (and, arriving after, it shows the REGISTER was not)
      const ka = nextMessage(fresh);
      fresh.send(keepalive(freshPort, 2), edge.port, '127.0.0.1');
      assert.match(await ka, /^SIP\/2\.0 200 /);
      assert.ok(seenCallIds().includes('Call-ID: ka-2@127.0.0.1'));
      assert.ok(!seenCallIds().includes('Call-ID: reg-2-first@127.0.0.1'), 'the shed REGISTER never reached the shard');

      assert.equal(edge.stats().shed, 2);
      assert.equal(edge.counters.shed[SHED_BOUNDS.indexOf('overload')], 2);
      const text = await createEdgeMetrics({ counters: edge.counters, shards: edge.shards, shedShare: () => edge.overload.shedder.fraction, returnsBooked: () => edge.overload.shedder.returnsBooked, defaultMetrics: false }).render();
      assert.match(text, /\nvms_edge_shed_total\{bound="overload"\} 2\n/);
      assert.match(text, /\nvms_edge_register_shed_share [\d.]+\n/);
      // both 503s told to come back at least retryAfterMinSec later: still booked
      assert.match(text, /\nvms_edge_register_returns_booked 2\n/);
    } finally {
      await edge.close();
    }
  });

  it('under the marks every REGISTER is forwarded', async () => {
    let reads = 0;
    const edge = await start({
      readReceiveQueue: () => {
        reads++;
        return 0;
      },
      utilization: () => 1, // the queue decides where it can be read: an empty one is no backlog
      random: () => 0,
    });
    try {
      const answers: string[] = [];
      for (let n = 10; n < 80; n++) {
        const device = await socket();
        device.on('message', (d) => answers.push(d.toString('latin1')));
        device.send(register(device.address().port, n), edge.port, '127.0.0.1');
      }
      await until('70 answers', () => answers.length === 70);
      // a window with that many arrivals reads the queue (queueSampleNeeded) and decides on it
      await until('a queue read', () => reads > 0);
      assert.ok(answers.every((a) => a.startsWith('SIP/2.0 200 ')));
      assert.equal(edge.overload.shedder.fraction, 0);
      assert.equal(edge.stats().shed, 0);
    } finally {
      await edge.close();
    }
  });
});
