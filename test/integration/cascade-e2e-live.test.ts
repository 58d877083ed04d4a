// End-to-end (SPEC CASC-6): live view asked for by the upstream platform. The upstream (@vms/sip in this
// process) INVITEs the cascade leader for a shared channel of a device (@vms/device-sim, real RTP/PS)
// registered on another instance. The leader plays the channel through the ordinary play path (owner-
// routed to the owner, which INVITEs the device into the media node — the ZLM stand-in, NOT ZLMediaKit,
// hooks on the owner), has the media node re-send the stream to the address of the upstream's SDP with
// the upstream's y= SSRC (startSendRtp), and answers 200 with the sending address. The upstream's RTP
// port really receives the packets; its BYE stops the sending and — the last viewer gone — the device
// stream. Failures answer a SIP error and leave no viewer, sending or device stream behind.
import assert from 'node:assert/strict';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { defaultChannelIds, parseRtpHeader, Rfc4571Deframer, type SimulatedDevice } from '@vms/device-sim';
import { describeSdp, parseSdp, type SdpSummary } from '@vms/gb28181';
import { SipRejectedError, type Dialog } from '@vms/sip';
import { freePort, sleep, waitFor } from '@vms/harness';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { api, eventually, logLines, shares, UPSTREAM_DOMAIN, UPSTREAM_ID, useCascadeCluster, type CascadeCluster, type Instance } from './cascade-cluster.ts';
import { mediaNodesEnv, startStandIn, type StartAnswer } from './media-e2e-fixture.ts';

const DEVICE = '34020000001320000701';
const UPSTREAM_SSRC = '0340100077';
/** STREAM_CHECK_MS and STREAM_GONE_CHECKS of services/signaling/src/cascade/live-view-watch.ts. */
const STREAM_CHECK_MS = 2000;
const STREAM_GONE_CHECKS = 2;

/** Where the upstream receives RTP: a UDP socket or a TCP listener (RFC 4571), counting packets. */
interface RtpSink {
  readonly port: number;
  readonly packets: { ssrc: number; fromPort: number }[];
  close(): Promise<void>;
}

async function udpSink(): Promise<RtpSink> {
  const socket: UdpSocket = createSocket('udp4');
  const packets: RtpSink['packets'] = [];
  socket.on('message', (msg, rinfo) => {
    const h = parseRtpHeader(msg);
    if (h !== undefined) packets.push({ ssrc: h.ssrc, fromPort: rinfo.port });
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, packets, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}

async function tcpSink(): Promise<RtpSink> {
  const packets: RtpSink['packets'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    const deframer = new Rfc4571Deframer();
    s.on('data', (chunk: Buffer) => {
      for (const frame of deframer.push(chunk)) {
        const h = parseRtpHeader(frame);
        if (h !== undefined) packets.push({ ssrc: h.ssrc, fromPort: s.remotePort ?? 0 });
      }
    });
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    packets,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const offer = (port: number, tcp: boolean, ssrc = UPSTREAM_SSRC): string =>
  [
    'v=0',
    `o=${UPSTREAM_ID} 0 0 IN IP4 127.0.0.1`,
    's=Play',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=video ${port} ${tcp ? 'TCP/RTP/AVP' : 'RTP/AVP'} 96 98`,
    'a=recvonly',
    'a=rtpmap:96 PS/90000',
    'a=rtpmap:98 H264/90000',
    ...(tcp ? ['a=setup:passive', 'a=connection:new'] : []),
    `y=${ssrc}`,
  ]
    .map((l) => `${l}\r\n`)
    .join('');

/** The upstream's INVITE to the leader for `channelId`: the dialog and the answer, or the refusal's status. */
async function invite(cluster: CascadeCluster, leader: Instance, channelId: string, body: string): Promise<{ dialog: Dialog; answer: SdpSummary } | number> {
  try {
    const { dialog, response } = await cluster.upstream.stack.createUAC({
      uri: `sip:${channelId}@127.0.0.1:${leader.sipPort}`,
      headers: {
        From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`,
        To: `<sip:${channelId}@${channelId.slice(0, 10)}>`,
        Subject: `${channelId}:${UPSTREAM_SSRC},${UPSTREAM_ID}:0`,
      },
      body,
      contentType: 'APPLICATION/SDP',
      target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
    });
    return { dialog, answer: describeSdp(parseSdp(response.body)) };
  } catch (err) {
    if (err instanceof SipRejectedError) return err.response.status;
    throw err;
  }
}

/** Why the leader refused the upstream's INVITEs so far (its log), for assertion messages. */
const refusals = (leader: Instance): string =>
  JSON.stringify(logLines(leader, 'upstream live view refused').map((l) => [l.status, l.code, l.reason]));

describe('live view requested by the upstream (CASC-6)', () => {
  const cluster = useCascadeCluster();
  let leader: Instance;
  let owner: Instance;
  let zlm: ZlmStandIn;
  let device: SimulatedDevice;
  let shared: string;
  let unshared: string;

  const streamId = (): string => `${DEVICE}_${shared}`;

  it('set-up: leader, owner with the media node hooks, a device with one shared and one unshared channel', async () => {
    const ownerPort = await freePort();
    zlm = await startStandIn(ownerPort, { id: 'zlm-casc-live' });
    cluster.track(() => zlm.close());
    const media = { VMS_MEDIA_NODES: mediaNodesEnv(zlm) };
    // the device's channel ids are known before it starts: share the first one only
    const ids = defaultChannelIds(DEVICE, 2);
    [shared, unshared] = ids as [string, string];
    const s = await cluster.database('casc_live', shares(DEVICE, [shared]));
    leader = await cluster.instance(s, 'casc-live-a', { cascade: true, env: media });
    owner = await cluster.instance(s, 'casc-live-b', {
      env: { ...media, SERVER_PORT: String(ownerPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${ownerPort}` },
    });
    await cluster.registered(leader);
    device = await cluster.device(owner, DEVICE, 2, { fps: 25, keyFrameBytes: 2000, deltaFrameBytes: 400 });
  });

  it('UDP: 200 with the media node address and the upstream y=; RTP reaches the upstream; shared with an operator; BYE ends it all', async () => {
    const sink = await udpSink();
    cluster.track(() => sink.close());
    const r = await invite(cluster, leader, shared, offer(sink.port, false));
    assert.ok(typeof r !== 'number', `INVITE refused with ${String(r)}: ${refusals(leader)}`);
    const { dialog, answer } = r;
    assert.deepEqual([answer.sessionName, answer.address, answer.transport, answer.ssrc, answer.direction], ['Play', '127.0.0.1', 'udp', UPSTREAM_SSRC, 'sendonly']);

    // the play went leader → owner (owner routing), the owner INVITEd the device
    await eventually(() => logLines(leader, 'upstream live view started').some((l) => l.deviceId === DEVICE && l.nodeId === zlm.mediaServerId), 'the leader started');
    assert.equal(logLines(owner, 'media stream established').length, 1, 'the owner INVITEd the device');
    assert.equal(logLines(leader, 'media stream established').length, 0);
    const devSession = device.sessions.find((x) => x.kind === 'Play');
    assert.ok(devSession !== undefined, 'the device received the INVITE');

    // real RTP at the upstream's port, with its SSRC, from the port the answer named
    await waitFor(() => sink.packets.length >= 20, { timeoutMs: 5000, intervalMs: 20, description: 'RTP at the upstream' });
    assert.ok(sink.packets.every((p) => p.ssrc === Number(UPSTREAM_SSRC)), 'every packet carries the upstream y= as SSRC');
    assert.ok(sink.packets.every((p) => p.fromPort === answer.port), `sent from the answered port ${answer.port}`);
    assert.ok((zlm.stats(streamId())?.forwarded ?? 0) > 0);

    // an operator watching the same channel shares the stream; leaving does not stop the upstream's
    const play = await api(leader, `/vms/play/start?channelId=${shared}`, { method: 'POST' });
    assert.equal(play.json.success, true, play.bytes.toString());
    const viewer = play.json.data as StartAnswer;
    assert.deepEqual([viewer.streamId, viewer.viewers], [streamId(), 2]);
    assert.equal((await api(leader, `/vms/play/stop?sessionId=${viewer.sessionId}`, { method: 'POST' })).json.success, true);
    const before = sink.packets.length;
    await waitFor(() => sink.packets.length > before + 10, { timeoutMs: 3000, intervalMs: 20, description: 'RTP still flowing after the operator left' });

    // the upstream's BYE: sending stops, the last viewer leaves, the device stream ends
    await dialog.destroy();
    await eventually(() => logLines(leader, 'upstream live view ended').some((l) => l.reason === 'bye'), 'the leader ended the live view', 5000);
    await waitFor(() => devSession.state === 'closed', { timeoutMs: 5000, intervalMs: 20, description: 'BYE at the device' });
    await waitFor(() => zlm.stats(streamId()) === undefined, { timeoutMs: 5000, intervalMs: 20, description: 'RTP server closed' });
    const after = sink.packets.length;
    await sleep(300);
    assert.equal(sink.packets.length, after, 'no RTP after the BYE');
  });

  it('the device ends the stream on its own (device BYE to the owner): the leader BYEs the upstream within the check bound; the sending stops', async () => {
    const sink = await udpSink();
    cluster.track(() => sink.close());
    const r = await invite(cluster, leader, shared, offer(sink.port, false, '0340100080'));
    assert.ok(typeof r !== 'number', `INVITE refused with ${String(r)}: ${refusals(leader)}`);
    let upstreamEnded: string | null = null;
    r.dialog.once('terminated', (reason) => (upstreamEnded = reason));
    await waitFor(() => sink.packets.length >= 10, { timeoutMs: 5000, intervalMs: 20, description: 'RTP at the upstream' });
    const devSession = device.sessions.findLast((x) => x.kind === 'Play');
    assert.ok(devSession !== undefined && devSession.state !== 'closed', 'the device is streaming');
    // a few stream checks while the stream is up do not end the live view
    await sleep(2 * STREAM_CHECK_MS + 500);
    assert.equal(upstreamEnded, null, 'no BYE while the stream is up');

    // the device hangs up (its media side closed: it BYEs the owner), the owner closes the RTP server
    const endedAt = Date.now();
    devSession.close('media-closed');
    await waitFor(() => zlm.stats(streamId()) === undefined, { timeoutMs: 5000, intervalMs: 20, description: 'RTP server closed by the owner' });
    const bound = (STREAM_GONE_CHECKS + 1) * STREAM_CHECK_MS + 2000;
    await waitFor(() => upstreamEnded !== null, { timeoutMs: bound, intervalMs: 20, description: 'BYE at the upstream' });
    assert.equal(upstreamEnded, 'bye', 'the leader sent the upstream a BYE');
    assert.ok(Date.now() - endedAt <= bound);
    await eventually(() => logLines(leader, 'upstream live view ended').some((l) => l.reason === 'stream-gone'), 'the leader ended the view: stream gone', 5000);
    const after = sink.packets.length;
    await sleep(300);
    assert.equal(sink.packets.length, after, 'no RTP after the stream ended');
  });

  it("an operator stops the session the leader holds (play/stop): the stream ends, the leader BYEs the upstream", async () => {
    const sink = await udpSink();
    cluster.track(() => sink.close());
    const goneBefore = logLines(leader, 'upstream live view ended').filter((l) => l.reason === 'stream-gone').length;
    const r = await invite(cluster, leader, shared, offer(sink.port, false, '0340100081'));
    assert.ok(typeof r !== 'number', `INVITE refused with ${String(r)}: ${refusals(leader)}`);
    let upstreamEnded: string | null = null;
    r.dialog.once('terminated', (reason) => (upstreamEnded = reason));
    await waitFor(() => sink.packets.length >= 10, { timeoutMs: 5000, intervalMs: 20, description: 'RTP at the upstream' });
    const started = logLines(leader, 'upstream live view started').filter((l) => l.callId === r.dialog.callId);
    const sessionId = started[0]?.sessionId;
    assert.equal(typeof sessionId, 'string', 'the leader logged the session it holds');
    const stop = await api(leader, `/vms/play/stop?sessionId=${String(sessionId)}`, { method: 'POST' });
    assert.equal(stop.json.success, true, stop.bytes.toString());
    await waitFor(() => zlm.stats(streamId()) === undefined, { timeoutMs: 5000, intervalMs: 20, description: 'the last viewer gone: RTP server closed' });
    await waitFor(() => upstreamEnded !== null, { timeoutMs: (STREAM_GONE_CHECKS + 1) * STREAM_CHECK_MS + 2000, intervalMs: 20, description: 'BYE at the upstream' });
    assert.equal(upstreamEnded, 'bye');
    await eventually(
      () => logLines(leader, 'upstream live view ended').some((l) => l.reason === 'stream-gone' && l.callId === r.dialog.callId),
      'this view ended: stream gone',
      5000,
    );
    assert.equal(logLines(leader, 'upstream live view ended').filter((l) => l.reason === 'stream-gone').length, goneBefore + 1);
  });

  it('TCP (the upstream listens): the media node connects and sends RFC 4571-framed RTP; BYE ends it', async () => {
    const sink = await tcpSink();
    cluster.track(() => sink.close());
    const r = await invite(cluster, leader, shared, offer(sink.port, true, '0340100078'));
    assert.ok(typeof r !== 'number', `INVITE refused with ${String(r)}: ${refusals(leader)}`);
    assert.deepEqual([r.answer.transport, r.answer.setup, r.answer.ssrc], ['tcp', 'active', '0340100078']);
    await waitFor(() => sink.packets.length >= 10, { timeoutMs: 5000, intervalMs: 20, description: 'RTP over TCP at the upstream' });
    assert.ok(sink.packets.every((p) => p.ssrc === 340100078));
    await r.dialog.destroy();
    await waitFor(() => zlm.stats(streamId()) === undefined, { timeoutMs: 5000, intervalMs: 20, description: 'device stream ended' });
  });

  it('Playback (§9.8): the recording plays back through the owner to the upstream; its INFO (pause, speed) reaches the device; BYE ends both', async () => {
    const sink = await udpSink();
    cluster.track(() => sink.close());
    const start = Date.parse('2026-11-30T08:00:00+08:00') / 1000;
    const body = offer(sink.port, false, '1340100090')
      .replace('s=Play', `s=Playback\r\nu=${shared}:0`)
      .replace('t=0 0', `t=${start} ${start + 3600}`);
    const r = await invite(cluster, leader, shared, body);
    assert.ok(typeof r !== 'number', `INVITE refused with ${String(r)}: ${refusals(leader)}`);
    assert.deepEqual([r.answer.sessionName, r.answer.ssrc, r.answer.start, r.answer.stop], ['Playback', '1340100090', String(start), String(start + 3600)]);
    const dev = device.sessions.findLast((x) => x.kind === 'Playback');
    assert.ok(dev !== undefined, 'the device was INVITEd for a playback (by its owner)');
    assert.equal(logLines(owner, 'media stream established').filter((l) => l.purpose === 'playback').length, 1);
    await waitFor(() => sink.packets.length >= 10, { timeoutMs: 5000, intervalMs: 20, description: 'playback RTP at the upstream' });
    assert.ok(sink.packets.every((p) => p.ssrc === 1340100090));

    const info = (text: string) => r.dialog.request('INFO', { body: text, contentType: 'Application/MANSRTSP' });
    assert.equal((await info('PAUSE RTSP/1.0\r\nCSeq: 1\r\nPauseTime: now\r\n')).status, 200);
    await waitFor(() => dev.infos.some((i) => i.method === 'PAUSE'), { timeoutMs: 3000, intervalMs: 20, description: 'PAUSE at the device' });
    assert.equal((await info('PLAY RTSP/1.0\r\nCSeq: 2\r\nScale: 2.0\r\n')).status, 200);
    assert.equal(dev.scale, 2, 'the device applied the upstream Scale');
    assert.equal((await info('not mansrtsp')).status, 400);

    await r.dialog.destroy();
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, intervalMs: 20, description: 'BYE at the device' });
    await eventually(() => logLines(leader, 'upstream live view ended').some((l) => l.callId === r.dialog.callId && l.reason === 'bye'), 'the leader ended the playback', 5000);
  });

  it('refusals: 404 unshared / unknown channel; a media failure answers 500 and leaves no stream behind', async () => {
    const plays = (): number => device.sessions.filter((x) => x.kind === 'Play').length;
    const before = plays();
    assert.equal(await invite(cluster, leader, unshared, offer(40000, false)), 404);
    assert.equal(await invite(cluster, leader, '34020000001310999999', offer(40000, false)), 404);
    assert.equal(plays(), before, 'no INVITE reached the device');

    // TCP to a port nobody listens on: startSendRtp fails after the device stream started
    const closedPort = await freePort();
    assert.equal(await invite(cluster, leader, shared, offer(closedPort, true, '0340100079')), 500);
    assert.equal(plays(), before + 1, 'the device was INVITEd');
    await waitFor(() => zlm.stats(streamId()) === undefined, { timeoutMs: 5000, intervalMs: 20, description: 'device stream ended after the failure' });
    await waitFor(() => device.sessions.every((x) => x.state === 'closed' || x.state === 'failed'), { timeoutMs: 5000, intervalMs: 20, description: 'device session closed' });
    await eventually(() => logLines(leader, 'upstream live view failed').some((l) => l.status === 500), 'failure logged once by the leader');
  });
});
