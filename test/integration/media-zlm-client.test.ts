// The real ZlmClient and hook handler against the ZLM stand-in (test/stand-ins, not ZLMediaKit):
// RTP ports bound for real, RTP with PS pack headers sent over UDP, TCP passive and TCP active
// (RFC 4571 framing), hooks delivered to a local receiver and verified by the node's secret.
import assert from 'node:assert/strict';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { NodeHealthTracker, createZlmClient, type ZlmCallError, type ZlmClient } from '@vms/media';
import { sleep, waitFor } from '@vms/harness';
import { buildRtpPacket, frameRfc4571, parseRtpHeader, psPack } from '../stand-ins/rtp-packets.ts';
import { startZlmStandIn, type ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { startHookReceiver, type HookReceiver } from './media-hook-receiver.ts';

const NODE_ID = 'standin-zlm-1';
const SECRET = 'zlm-api-secret-1';
const HOST = '127.0.0.1';

let receiver: HookReceiver;
let zlm: ZlmStandIn;
let client: ZlmClient;
const closers: Array<() => Promise<void> | void> = [];

/** 20 RTP packets of one "camera": a PS pack starts every 5th packet (a frame), marker on frame ends. */
function cameraPackets(ssrc: number, count = 20, firstSeq = 1): Buffer[] {
  return Array.from({ length: count }, (_, i) => {
    const frameStart = i % 5 === 0;
    return buildRtpPacket({
      ssrc,
      seq: firstSeq + i,
      timestamp: 3600 * Math.floor(i / 5),
      marker: i % 5 === 4,
      payload: frameStart ? psPack(Buffer.alloc(200, i)) : Buffer.alloc(400, i),
    });
  });
}

async function udpSocket(): Promise<UdpSocket> {
  const s = createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, HOST, resolve));
  closers.push(() => {
    s.close();
  });
  return s;
}

async function sendUdp(s: UdpSocket, port: number, packets: Buffer[]): Promise<void> {
  for (const p of packets) await new Promise<void>((resolve, reject) => s.send(p, port, HOST, (err) => (err ? reject(err) : resolve())));
}

async function openStream(streamId: string, tcpMode: 'udp' | 'tcp-passive' | 'tcp-active' = 'udp', ssrc?: string): Promise<number> {
  const { port } = await client.openRtpServer({ streamId, tcpMode, ssrc });
  assert.ok(port > 0);
  return port;
}

async function readers(streamId: string, delta: number): Promise<void> {
  const res = await fetch(`${zlm.apiBaseUrl}/standin/readers?secret=${SECRET}&stream=${streamId}&delta=${delta}`);
  assert.equal(((await res.json()) as { code: number }).code, 0);
}

before(async () => {
  receiver = await startHookReceiver({ nodes: { [NODE_ID]: SECRET } });
  zlm = await startZlmStandIn({
    secret: SECRET,
    mediaServerId: NODE_ID,
    hookBaseUrl: `${receiver.baseUrl}?secret=${SECRET}`,
    rtpTimeoutMs: 10_000,
    keepaliveIntervalMs: 200,
  });
  client = createZlmClient({ id: NODE_ID, apiBaseUrl: zlm.apiBaseUrl, secret: SECRET }, { requestTimeoutMs: 3000 });
});

after(async () => {
  for (const c of closers.reverse()) await c();
  await client.close();
  await zlm.close();
  await receiver.close();
});

describe('ZlmClient against the ZLM stand-in', () => {
  it('getServerConfig names the node (what a probe checks) and on_server_started arrived', async () => {
    const config = await client.getServerConfig();
    assert.equal(config['general.mediaServerId'], NODE_ID);
    const started = await receiver.waitForEvent('server_started');
    assert.equal(started.mediaServerId, NODE_ID);
  });

  it('UDP: open port → RTP with PS headers counted → stream registered via hook → listed → closed', async () => {
    const port = await openStream('udp-1');
    const cam = await udpSocket();
    await sendUdp(cam, port, cameraPackets(0x0bebc201));
    await waitFor(() => zlm.stats('udp-1')?.rtpPackets === 20, { description: '20 RTP packets' });
    const stats = zlm.stats('udp-1');
    assert.deepEqual([stats?.psPackHeaders, stats?.tcpMode, stats?.notRtp, stats?.registered], [4, 0, 0, true]);

    const changed = await receiver.waitForEvent('stream_changed', (e) => e.stream === 'udp-1' && e.regist);
    assert.deepEqual([changed.mediaServerId, changed.app, changed.vhost, changed.originType], [NODE_ID, 'rtp', '__defaultVhost__', 3]);
    await waitFor(() => receiver.events('stream_changed').filter((e) => e.stream === 'udp-1' && e.regist).length === 2, { description: 'one per schema' });

    const list = await client.getMediaList({ stream: 'udp-1' });
    assert.deepEqual(list.map((m) => [m.app, m.stream, m.schema, m.originType]).sort(), [
      ['rtp', 'udp-1', 'rtmp', 3],
      ['rtp', 'udp-1', 'rtsp', 3],
    ]);
    const info = await client.getRtpInfo('udp-1');
    assert.deepEqual(info, { exist: true, peerIp: HOST, peerPort: (cam.address() as AddressInfo).port, localIp: HOST, localPort: port });

    assert.deepEqual(await client.closeRtpServer('udp-1'), { hit: true });
    await receiver.waitForEvent('stream_changed', (e) => e.stream === 'udp-1' && !e.regist);
    assert.deepEqual(await client.closeRtpServer('udp-1'), { hit: false });
    assert.deepEqual(await client.getRtpInfo('udp-1'), { exist: false });
    assert.deepEqual(await client.getMediaList({ stream: 'udp-1' }), []);
  });

  it('TCP passive: the device connects; RFC 4571 frames split across writes are reassembled', async () => {
    const port = await openStream('tcp-p', 'tcp-passive');
    const dev = connect({ host: HOST, port });
    closers.push(() => void dev.destroy());
    await once(dev, 'connect');
    const bytes = Buffer.concat(cameraPackets(0x0bebc202).map(frameRfc4571));
    // odd chunk sizes: frame boundaries and the 2-byte length itself land mid-chunk
    for (let off = 0; off < bytes.length; off += 333) {
      dev.write(bytes.subarray(off, off + 333));
      await sleep(1);
    }
    await waitFor(() => zlm.stats('tcp-p')?.rtpPackets === 20, { description: '20 RTP packets over TCP' });
    assert.deepEqual([zlm.stats('tcp-p')?.psPackHeaders, zlm.stats('tcp-p')?.tcpMode], [4, 1]);
    await receiver.waitForEvent('stream_changed', (e) => e.stream === 'tcp-p' && e.regist);
    const info = await client.getRtpInfo('tcp-p');
    assert.ok(info.exist && info.peerPort === dev.localPort);
    await client.closeRtpServer('tcp-p');
  });

  it('TCP active: connectRtpServer makes the node connect to the device, which then sends', async () => {
    const device = createServer((s: Socket) => {
      for (const p of cameraPackets(0x0bebc203)) s.write(frameRfc4571(p));
    });
    await new Promise<void>((resolve) => device.listen(0, HOST, resolve));
    closers.push(() => void device.close());
    await openStream('tcp-a', 'tcp-active');
    await client.connectRtpServer({ streamId: 'tcp-a', dstUrl: HOST, dstPort: (device.address() as AddressInfo).port });
    await waitFor(() => zlm.stats('tcp-a')?.rtpPackets === 20, { description: '20 RTP packets over TCP active' });
    assert.deepEqual([zlm.stats('tcp-a')?.psPackHeaders, zlm.stats('tcp-a')?.tcpMode], [4, 2]);
    await client.closeRtpServer('tcp-a');
  });

  it('a port opened for one SSRC drops other SSRCs', async () => {
    const port = await openStream('ssrc-1', 'udp', '0200000001');
    const cam = await udpSocket();
    await sendUdp(cam, port, cameraPackets(999, 5));
    await sendUdp(cam, port, cameraPackets(200000001, 5));
    await waitFor(() => zlm.stats('ssrc-1')?.rtpPackets === 5);
    assert.equal(zlm.stats('ssrc-1')?.ssrcMismatches, 5);
    await client.closeRtpServer('ssrc-1');
  });

  it('updateRtpServerSsrc moves the filter to another SSRC', async () => {
    const port = await openStream('ssrc-2', 'udp', '0200000001');
    await client.updateRtpServerSsrc('ssrc-2', '0300000009');
    const cam = await udpSocket();
    await sendUdp(cam, port, cameraPackets(200000001, 3));
    await sendUdp(cam, port, cameraPackets(300000009, 4));
    await waitFor(() => zlm.stats('ssrc-2')?.rtpPackets === 4);
    assert.equal(zlm.stats('ssrc-2')?.ssrcMismatches, 3);
    await client.closeRtpServer('ssrc-2');
    await assert.rejects(client.updateRtpServerSsrc('ssrc-2', '0300000009'), (e: ZlmCallError) => e.code === 'MEDIA_ERR_API');
  });

  it('ZLM failures become typed errors: duplicate stream id, bad secret, missing stream', async () => {
    await openStream('dup');
    await assert.rejects(client.openRtpServer({ streamId: 'dup' }), (e: ZlmCallError) => e.code === 'MEDIA_ERR_API' && e.zlmCode === -300);
    const wrong = createZlmClient({ id: NODE_ID, apiBaseUrl: zlm.apiBaseUrl, secret: 'guess' });
    closers.push(() => wrong.close());
    await assert.rejects(wrong.getMediaList(), (e: ZlmCallError) => e.code === 'MEDIA_ERR_API' && e.zlmCode === -100);
    await assert.rejects(client.startSendRtp({ stream: 'nope', ssrc: '1', dstUrl: HOST, dstPort: 9 }), (e: ZlmCallError) => e.code === 'MEDIA_ERR_API' && e.zlmCode === -1);
    await client.closeRtpServer('dup');
  });

  it('startSendRtp forwards the received RTP with the requested SSRC; stopSendRtp stops it', async () => {
    const port = await openStream('fwd');
    const cam = await udpSocket();
    await sendUdp(cam, port, cameraPackets(0x0bebc204, 1));
    await receiver.waitForEvent('stream_changed', (e) => e.stream === 'fwd' && e.regist);
    const upstream = await udpSocket();
    const got: Buffer[] = [];
    upstream.on('message', (m) => got.push(m));
    const { localPort } = await client.startSendRtp({ stream: 'fwd', ssrc: '0200000099', dstUrl: HOST, dstPort: (upstream.address() as AddressInfo).port });
    assert.ok(localPort > 0);
    await sendUdp(cam, port, cameraPackets(0x0bebc204, 10, 2));
    await waitFor(() => got.length === 10, { description: '10 forwarded packets' });
    assert.ok(got.every((m) => parseRtpHeader(m)?.ssrc === 200000099));
    assert.deepEqual(got.map((m) => parseRtpHeader(m)?.seq), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    await client.stopSendRtp({ stream: 'fwd', ssrc: '0200000099' });
    await assert.rejects(client.stopSendRtp({ stream: 'fwd' }), (e: ZlmCallError) => e.code === 'MEDIA_ERR_API');
    await sendUdp(cam, port, cameraPackets(0x0bebc204, 5, 20));
    await waitFor(() => zlm.stats('fwd')?.rtpPackets === 16);
    await sleep(50);
    assert.equal(got.length, 10, 'nothing forwarded after stopSendRtp');
    await client.closeRtpServer('fwd');
  });

  it('last reader leaves → on_stream_none_reader; the close:true reply unregisters the stream', async () => {
    const port = await openStream('view');
    await sendUdp(await udpSocket(), port, cameraPackets(0x0bebc205, 3));
    await receiver.waitForEvent('stream_changed', (e) => e.stream === 'view' && e.regist);
    await readers('view', 2);
    assert.equal((await client.getMediaList({ stream: 'view', schema: 'rtsp' }))[0]?.readerCount, 2);
    await readers('view', -1);
    await sleep(50);
    assert.equal(receiver.events('stream_none_reader').length, 0, 'one viewer left: no hook');
    await readers('view', -1);
    const none = await receiver.waitForEvent('stream_none_reader', (e) => e.stream === 'view');
    assert.equal(none.mediaServerId, NODE_ID);
    await receiver.waitForEvent('stream_changed', (e) => e.stream === 'view' && !e.regist);
    assert.equal(zlm.stats('view')?.registered, false, 'stream closed, port still open until closeRtpServer');
    await client.closeRtpServer('view');
  });

  it('getSnap returns a JPEG', async () => {
    const jpeg = await client.getSnap({ url: `rtsp://${HOST}/rtp/any`, timeoutSec: 3 });
    assert.deepEqual([jpeg[0], jpeg[1], jpeg.at(-2), jpeg.at(-1)], [0xff, 0xd8, 0xff, 0xd9]);
  });

  it('keepalives carry the stream count and make the node active in the health tracker', async () => {
    const port = await openStream('ka');
    await sendUdp(await udpSocket(), port, cameraPackets(0x0bebc206, 2));
    const ka = await receiver.waitForEvent('server_keepalive', (e) => (e.streams ?? 0) >= 1);
    const health = new NodeHealthTracker({ now: () => Date.now() });
    assert.equal(health.state(NODE_ID), 'probing');
    health.keepalive(ka.mediaServerId, ka.streams);
    assert.deepEqual([health.state(NODE_ID), health.get(NODE_ID).reportedStreams], ['active', ka.streams]);
    await client.closeRtpServer('ka');
  });
});

describe('ZLM stand-in timeouts and hook authentication', () => {
  it('no RTP within the timeout → on_rtp_server_timeout, and the port is gone', async () => {
    const quick = await startZlmStandIn({ secret: SECRET, mediaServerId: NODE_ID, hookBaseUrl: `${receiver.baseUrl}?secret=${SECRET}`, rtpTimeoutMs: 300, keepaliveIntervalMs: 0 });
    const c = createZlmClient({ id: NODE_ID, apiBaseUrl: quick.apiBaseUrl, secret: SECRET });
    try {
      const { port } = await c.openRtpServer({ streamId: 'silent', tcpMode: 'tcp-passive', ssrc: '0200000007' });
      const ev = await receiver.waitForEvent('rtp_server_timeout', (e) => e.streamId === 'silent', 3000);
      assert.deepEqual(ev, { kind: 'rtp_server_timeout', mediaServerId: NODE_ID, streamId: 'silent', localPort: port, tcpMode: 1, reUsePort: false, ssrc: '0200000007' });
      assert.deepEqual(await c.closeRtpServer('silent'), { hit: false });
    } finally {
      await c.close();
      await quick.close();
    }
  });

  it('hooks without the right secret are refused with ZLM AuthFailed (-100)', async () => {
    const forged = await startZlmStandIn({ secret: SECRET, mediaServerId: NODE_ID, hookBaseUrl: `${receiver.baseUrl}?secret=wrong`, keepaliveIntervalMs: 0 });
    try {
      const call = await waitFor(() => forged.hookCalls.find((h) => h.name === 'on_server_started' && h.status !== undefined));
      assert.deepEqual([call.status, call.reply?.code], [401, -100]);
    } finally {
      await forged.close();
    }
  });
});
