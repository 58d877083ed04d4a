// The edge on real UDP sockets (loopback, ports from the OS): a keepalive and its answer through the byte
// path end to end, and the ceiling: past it requests are answered 503 + Retry-After from the bytes, each
// charged once, and the edge keeps forwarding what the bucket lets in.
import assert from 'node:assert/strict';
import type dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '@vms/sip';
import { startEdge, type SipEdge } from '../src/edge.ts';
import { createStaticShardSource } from '../src/shard-source.ts';
import { answer200, createSocketPool, nextMessage } from './udp-peers.ts';

const DEV = '34020000001320000001';
const peers = createSocketPool();
const socket = peers.socket;
const keepalive = (port: number, n: number): Buffer => {
  const body = `<?xml version="1.0"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>${n}</SN>\r\n<DeviceID>${DEV}</DeviceID>\r\n</Notify>\r\n`;
  return Buffer.from(
    [
      'MESSAGE sip:34020000002000000001@3402000000 SIP/2.0',
      `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bK-t-${n}`,
      `From: <sip:${DEV}@3402000000>;tag=${n}`,
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
};

describe('sip edge on UDP', () => {
  let shard: dgram.Socket;
  const seen: string[] = [];
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
  const start = (maxRequestsPerSec: number, now?: () => number): Promise<SipEdge> =>
    startEdge({
      code: 'edge-t',
      bindHost: '127.0.0.1',
      host: '127.0.0.1',
      port: 0,
      transports: ['udp'],
      flowSecret: Buffer.alloc(32, 7),
      shards: createStaticShardSource([{ code: 's1', sipHost: '127.0.0.1', sipPort: shard.address().port, group: 'default', online: true, draining: false }]),
      maxRequestsPerSec,
      perAddressRequestsPerSec: 1_000_000,
      log: silentLogger,
      ...(now === undefined ? {} : { now }),
    });

  it('a keepalive reaches the shard under the edge Via, its 200 reaches the device without it', async () => {
    const edge = await start(1000);
    try {
      const device = await socket();
      const got = nextMessage(device);
      device.send(keepalive(device.address().port, 1), edge.port, '127.0.0.1');
      const res = await got;
      assert.match(res, /^SIP\/2\.0 200 OK\r\n/);
      assert.deepEqual(res.split('\r\n').filter((l) => l.startsWith('Via:')), [`Via: SIP/2.0/UDP 127.0.0.1:${device.address().port};rport=${device.address().port};branch=z9hG4bK-t-1;received=127.0.0.1`], "RFC 3581 §4: rport asked → rport and received");
      const atShard = seen.at(-1) ?? '';
      assert.match(atShard, new RegExp(`^MESSAGE [^\\r]+\\r\\nVia: SIP/2\\.0/UDP 127\\.0\\.0\\.1:${edge.port};branch=z9hG4bKe[0-9a-z]+;vms-f=[^\\r]+\\r\\nVia: SIP/2\\.0/UDP 127\\.0\\.0\\.1:`));
      assert.match(atShard, /\r\nMax-Forwards: 69\r\n/);
      assert.deepEqual(edge.stats(), { toShard: 1, toDevice: 1, toVia: 0, replied: 0, shed: 0, dropped: 0, sendErrors: 0 });
    } finally {
      await edge.close();
    }
  });

  it('past the ceiling: 503 with Retry-After from the bytes, one charge per request, the admitted ones forwarded', async () => {
    let t = 1_000_000;
    const edge = await start(2, () => t); // a bucket of 2, refilled only when the test moves time
    try {
      const device = await socket();
      const answers: string[] = [];
      device.on('message', (d) => answers.push(d.toString('latin1')));
      for (let n = 0; n < 6; n++) device.send(keepalive(device.address().port, 10 + n), edge.port, '127.0.0.1');
      for (let i = 0; i < 100 && answers.length < 6; i++) await new Promise((r) => setTimeout(r, 20));
      const shed = answers.filter((a) => a.startsWith('SIP/2.0 503 '));
      assert.equal(answers.filter((a) => a.startsWith('SIP/2.0 200 ')).length, 2);
      assert.equal(shed.length, 4);
      for (const a of shed) {
        assert.match(a, /\r\nRetry-After: 5\r\n/);
        assert.match(a, /\r\nTo: <sip:34020000002000000001@3402000000>;tag=[0-9a-f]+\r\n/, 'a stateless final answer carries a To-tag (RFC 3261 §8.2.6.2)');
      }
      assert.deepEqual({ shed: edge.stats().shed, toShard: edge.stats().toShard }, { shed: 4, toShard: 2 });
      t += 1000; // two more tokens
      const got = nextMessage(device);
      device.send(keepalive(device.address().port, 20), edge.port, '127.0.0.1');
      assert.match(await got, /^SIP\/2\.0 200 /, 'responsive again once the rate allows');
    } finally {
      await edge.close();
    }
  });

  it('a request the byte path admits but leaves to the parsed path is charged once', async () => {
    const edge = await start(3, () => 5_000_000); // 3 tokens, never refilled
    try {
      const device = await socket();
      const port = device.address().port;
      const answers: string[] = [];
      device.on('message', (d) => answers.push(d.toString('latin1')));
      // a top Via with `received` already is not stamped in place: read and admitted by the byte path, forwarded parsed
      const odd = (n: number): Buffer => Buffer.from(keepalive(port, n).toString('latin1').replace(';rport;', ';received=127.0.0.1;'), 'latin1');
      device.send(odd(30), edge.port, '127.0.0.1');
      device.send(odd(31), edge.port, '127.0.0.1');
      device.send(keepalive(port, 32), edge.port, '127.0.0.1');
      device.send(keepalive(port, 33), edge.port, '127.0.0.1');
      for (let i = 0; i < 100 && answers.length < 4; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(answers.map((a) => a.slice(8, 11)).sort(), ['200', '200', '200', '503']);
      assert.deepEqual({ shed: edge.stats().shed, toShard: edge.stats().toShard }, { shed: 1, toShard: 3 });
    } finally {
      await edge.close();
    }
  });
});
