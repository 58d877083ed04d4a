// Live view and playback of a device placed behind the SIP edge (issue 14; RFC 3261 §12.1.2, §16.6 step 4,
// §16.12): real redis-server, mariadbd, three signaling processes, the edge, the ZLM stand-in (NOT
// ZLMediaKit, hooks to shard-a) and a simulated camera pointed at the edge, placed on shard-a. The shard's
// INVITE goes out through the Path the edge recorded; the edge record-routes the dialog (its flow tokens,
// nothing kept), so the ACK, the MANSRTSP INFO and the BYE from the shard reach the camera's flow, and the
// camera's own BYE reaches the shard that holds the dialog. A second camera speaks TCP to the edge (UDP
// between edge and shards): the shard reaches it back on that same connection (the flow token names it).
// Voice broadcast and talk (GB/T 28181 §9.12): the camera INVITEs the platform after the Broadcast MESSAGE;
// the edge places that INVITE by the device on its flow and record-routes it, both sides hang up through it.
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import diagnosticsChannel from 'node:diagnostics_channel';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { freePort, waitFor } from '@vms/harness';
import { SIP_CHANNELS, type MessageInEvent } from '@vms/sip';
import { COUNTED_METHODS } from '@vms/sip-edge';
import { buildRtpPacket } from '../stand-ins/rtp-packets.ts';
import type { ZlmStandIn } from '../stand-ins/zlm-stand-in.ts';
import { mediaNodesEnv, startStandIn, syncChannels, ZLM_ID, ZLM_SECRET, type StartAnswer } from './media-e2e-fixture.ts';
import { CODES, PASSWORD, placedAmong, startPlacementCluster, type PlacementCluster } from './placement-edge-cluster.ts';
import { api, logLines, SERVER_ID, type Instance } from './routing-cluster.ts';

let zlm: ZlmStandIn;
let c: PlacementCluster;
let camera: SimulatedDevice;
let channel: string;
// the first code from here that placement puts on shard-a (the shard the stand-in's hooks reach)
const placedOn = (code: string, from: number): string => {
  for (let i = from; ; i++) {
    const id = `340200000013204${String(i).padStart(5, '0')}`;
    if (placedAmong(CODES, id) === code) return id;
  }
};
const DEV = placedOn('shard-a', 0);
const TCP_DEV = placedOn('shard-b', 500);

const shard = (code: string): Instance => c.shards.get(code)!;
const post = async <T>(code: string, path: string): Promise<{ success: boolean; data: T; raw: string }> => {
  const r = await api(shard(code), path, { method: 'POST', timeoutMs: 20_000 });
  return { success: r.json.success === true, data: r.json.data as T, raw: r.bytes.toString() };
};
/** Requests the edge forwarded in one direction, for one method. */
const forwarded = (direction: 0 | 1, method: (typeof COUNTED_METHODS)[number]): number => c.edge.counters.requests[direction]![COUNTED_METHODS.indexOf(method)]!;

before(async () => {
  const hookPort = await freePort();
  zlm = await startStandIn(hookPort);
  c = await startPlacementCluster({
    devices: 0,
    firstId: DEV,
    keepaliveS: 20,
    env: { VMS_MEDIA_NODES: mediaNodesEnv(zlm) },
    edgeTransports: ['udp', 'tcp'],
    shardEnv: (code): Record<string, string> => (code === 'shard-a' ? { SERVER_PORT: String(hookPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${hookPort}` } : {}),
  });
  camera = createSimulatedDevice({
    server: { host: '127.0.0.1', port: c.edge.port, id: SERVER_ID },
    deviceId: DEV,
    password: PASSWORD,
    channels: 1,
    fps: 25,
    keyFrameBytes: 2000,
    deltaFrameBytes: 400,
    keepaliveIntervalS: 20,
    utcOffsetMinutes: 480,
  });
  await camera.start();
  await waitFor(async () => (await c.owners([DEV]))[0] === 'shard-a', { timeoutMs: 20_000, intervalMs: 100, description: `${DEV} registered on shard-a through the edge` });
  await syncChannels({ api: async (m, p) => (await api(shard('shard-b'), p, { method: m, timeoutMs: 20_000 })).json as never }, DEV, 1);
  channel = camera.channelIds[0] as string;
});

after(async () => {
  await camera?.close();
  await c?.close();
  await zlm?.close();
});

describe('a camera behind the SIP edge: dialogs through the edge', () => {
  it('live view started on shard-b: the owner (shard-a) INVITEs through the edge, RTP at the media node; stop on shard-c → BYE at the camera through the edge', async () => {
    const invites = forwarded(1, 'INVITE');
    const start = await post<StartAnswer>('shard-b', `/vms/play/start?channelId=${channel}`);
    assert.equal(start.success, true, start.raw);
    await waitFor(() => logLines(shard('shard-a'), 'media stream established').length === 1, { timeoutMs: 5000, description: 'shard-a sent the INVITE' });
    assert.equal(logLines(shard('shard-b'), 'media stream established').length, 0, 'shard-b does not hold the device');
    assert.equal(forwarded(1, 'INVITE'), invites + 1, 'the INVITE went through the edge');
    const dev = camera.sessions.find((s) => s.kind === 'Play');
    assert.ok(dev !== undefined, 'the camera received the INVITE');
    await waitFor(() => forwarded(1, 'ACK') >= 1, { timeoutMs: 5000, description: 'the ACK for the 200 through the edge (route set)' });
    await waitFor(() => (zlm.stats(start.data.streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 10_000, description: 'RTP at the media node' });

    const byes = forwarded(1, 'BYE');
    const stop = await post('shard-c', `/vms/play/stop?sessionId=${start.data.sessionId}`);
    assert.equal(stop.success, true, stop.raw);
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'BYE at the camera' });
    assert.equal(forwarded(1, 'BYE'), byes + 1, 'the BYE went through the edge');
    await waitFor(() => zlm.stats(start.data.streamId) === undefined, { timeoutMs: 3000, description: 'RTP server closed' });
  });

  it("the camera's own BYE reaches the shard holding the dialog through the edge: the session ends there", async () => {
    const start = await post<StartAnswer>('shard-c', `/vms/play/start?channelId=${channel}`);
    assert.equal(start.success, true, start.raw);
    await waitFor(() => (zlm.stats(start.data.streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 10_000, description: 'RTP at the media node' });
    const dev = camera.sessions.filter((s) => s.kind === 'Play').at(-1);
    assert.ok(dev !== undefined && dev.state !== 'closed');
    const byes = forwarded(0, 'BYE');
    dev.close('media-closed'); // the camera hangs up: BYE along its route set (the edge's vms-s entry on top)
    await waitFor(() => logLines(shard('shard-a'), 'media stream ended').some((l) => l.streamId === start.data.streamId && String(l.reason).startsWith('device ended the dialog')), {
      timeoutMs: 5000,
      description: 'shard-a ended the stream on the camera BYE',
    });
    assert.equal(forwarded(0, 'BYE'), byes + 1, 'the BYE went device → shard through the edge');
    await waitFor(() => zlm.stats(start.data.streamId) === undefined, { timeoutMs: 3000, description: 'RTP server closed' });
    const again = await post('shard-b', `/vms/play/stop?sessionId=${start.data.sessionId}`);
    assert.equal(again.success, false, 'the session is gone');
  });

  it('playback started on shard-b: pause / resume go as MANSRTSP INFO in the dialog through the edge and are answered', async () => {
    const q = encodeURIComponent;
    const pb = await post<StartAnswer>('shard-b', `/vms/playback/start?channelId=${channel}&startTime=${q('2026-11-30T08:00:00+08:00')}&endTime=${q('2026-11-30T09:00:00+08:00')}`);
    assert.equal(pb.success, true, pb.raw);
    await waitFor(() => (zlm.stats(pb.data.streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 10_000, description: 'playback RTP' });
    const dev = camera.sessions.filter((s) => s.kind === 'Playback').at(-1);
    assert.ok(dev !== undefined);
    for (const action of ['pause', 'resume']) {
      const r = await post<{ cseq: number }>('shard-c', `/vms/playback/control?sessionId=${pb.data.sessionId}&action=${action}`);
      assert.equal(r.success, true, r.raw);
    }
    assert.equal(dev.infos.length, 2, 'both INFOs reached the camera');
    assert.equal(forwarded(1, 'INFO'), 2);
    assert.equal((await post('shard-b', `/vms/playback/stop?sessionId=${pb.data.sessionId}`)).success, true);
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'BYE at the camera' });
  });
});

interface AudioView {
  readonly sessionId: string;
  readonly ssrc: string;
  readonly deviceStream?: { app: string; stream: string };
}

describe('voice broadcast and talk with a camera behind the edge (GB/T 28181 §9.12: the camera INVITEs)', () => {
  const MIC = 'operator-mic-edge';
  let mic: Socket;
  let feeding: NodeJS.Timeout | undefined;
  const audioStarted = (code: string): number => logLines(shard(code), 'audio session started').length;
  /** The camera's call made after `before` calls: the API may answer before the camera has read the 200. */
  const newCall = async (before: number): Promise<NonNullable<(typeof camera.audioCalls)[number]>> => {
    await waitFor(() => camera.audioCalls.length > before, { timeoutMs: 5000, description: 'the camera INVITEd the platform and got its answer' });
    const call = camera.audioCalls[before];
    assert.ok(call !== undefined && !call.ended, 'the call is up');
    return call;
  };

  before(async () => {
    // the operator's microphone: an RTP stream on the media node (ZLM openRtpServer), G.711A every 20 ms
    const open = (await (await fetch(`${zlm.apiBaseUrl}/index/api/openRtpServer?secret=${ZLM_SECRET}&stream_id=${MIC}&port=0&tcp_mode=0`)).json()) as { code: number; port: number };
    assert.equal(open.code, 0);
    mic = createSocket('udp4');
    let seq = 0;
    feeding = setInterval(() => {
      seq++;
      mic.send(buildRtpPacket({ ssrc: 0x1234, seq, timestamp: seq * 160, payloadType: 8, payload: Buffer.alloc(160, 0xd5) }), open.port, '127.0.0.1');
    }, 20);
    await waitFor(() => (zlm.stats(MIC)?.registered ?? false) === true, { timeoutMs: 5000, description: 'the microphone stream reached the media node' });
  });
  after(() => {
    clearInterval(feeding);
    mic?.close();
  });

  it("broadcast started on shard-b: the camera's INVITE (From = its audio channel) is placed on shard-a through the edge, audio at the camera; stop on shard-c → BYE through the edge", async () => {
    const invites = forwarded(0, 'INVITE');
    const acks = forwarded(0, 'ACK');
    const started = audioStarted('shard-a');
    const calls = camera.audioCalls.length;
    const r = await post<AudioView>('shard-b', `/vms/broadcast/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
    assert.equal(r.success, true, r.raw);
    assert.equal(forwarded(0, 'INVITE'), invites + 1, 'the INVITE went device → shard through the edge');
    await waitFor(() => audioStarted('shard-a') === started + 1, { timeoutMs: 5000, description: 'shard-a (the owner, which sent the Notify) answered it' });
    const call = await newCall(calls);
    await waitFor(() => forwarded(0, 'ACK') === acks + 1, { timeoutMs: 5000, description: "the camera's ACK through the edge (route set)" });
    await waitFor(() => call.packets >= 10, { timeoutMs: 5000, description: 'audio RTP at the camera' });
    assert.deepEqual([...call.ssrcs], [Number(r.data.ssrc)], 'sent with the SSRC of the camera’s y=');

    const byes = forwarded(1, 'BYE');
    const stop = await post('shard-c', `/vms/broadcast/stop?channelId=${channel}`);
    assert.equal(stop.success, true, stop.raw);
    await waitFor(() => call.ended, { timeoutMs: 5000, description: 'the camera saw the BYE' });
    assert.equal(forwarded(1, 'BYE'), byes + 1, 'the BYE went shard → device through the edge');
  });

  it("another flow behind the same edge cannot answer for the camera (SEC-1: the shard checks the device flow the edge names, not only the edge's address)", async () => {
    // an impostor behind the edge: it speaks as the camera (the edge learns its flow → the camera's code, so
    // its INVITE goes to shard-a) and INVITEs for the camera's channel as soon as the Notify passes the edge
    const impostor = createSocket('udp4');
    await new Promise<void>((resolve) => impostor.bind(0, '127.0.0.1', resolve));
    const port = impostor.address().port;
    const answers: string[] = [];
    impostor.on('message', (m) => answers.push(m.toString('latin1')));
    const request = (method: string, from: string, body: string): string =>
      [
        `${method} sip:${SERVER_ID}@127.0.0.1:${c.edge.port} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bK-imp-${method}`,
        `From: <sip:${from}@3402000000>;tag=imp`,
        `To: <sip:${SERVER_ID}@3402000000>`,
        `Call-ID: impostor-${method}@127.0.0.1`,
        `CSeq: 1 ${method}`,
        `Contact: <sip:${from}@127.0.0.1:${port}>`,
        'Max-Forwards: 70',
        `Content-Type: ${method === 'INVITE' ? 'APPLICATION/SDP' : 'Application/MANSCDP+xml'}`,
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body,
      ].join('\r\n');
    const sdp = ['v=0', `o=${channel} 0 0 IN IP4 127.0.0.1`, 's=Play', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port + 1} RTP/AVP 8`, 'a=rtpmap:8 PCMA/8000', 'a=sendrecv', 'y=0100000099', 'f=v/////a/1/8/1', ''].join('\r\n');
    impostor.send(request('MESSAGE', DEV, `<?xml version="1.0"?>\r\n<Notify><CmdType>Keepalive</CmdType><SN>1</SN><DeviceID>${DEV}</DeviceID><Status>OK</Status></Notify>\r\n`), c.edge.port, '127.0.0.1');
    await waitFor(() => answers.length >= 1, { timeoutMs: 5000, description: 'the edge forwarded the impostor keepalive (and the shard refused it)' });
    let sent = false;
    const onNotify = (m: unknown): void => {
      const e = m as MessageInEvent;
      if (sent || e.message.type !== 'request' || e.message.method !== 'MESSAGE' || e.flow.remotePort !== shard('shard-a').sipPort || !e.message.body.toString('latin1').includes('Broadcast')) return;
      sent = true;
      impostor.send(request('INVITE', channel, sdp), c.edge.port, '127.0.0.1');
    };
    diagnosticsChannel.subscribe(SIP_CHANNELS.messageIn, onNotify);
    try {
      const calls = camera.audioCalls.length;
      const r = await post<AudioView & { deviceAudio: string }>('shard-b', `/vms/broadcast/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
      assert.ok(sent, 'the impostor INVITEd while the shard waited');
      await waitFor(() => answers.some((a) => /^SIP\/2\.0 [2-6]\d\d .*\r\n[\s\S]*CSeq: 1 INVITE/.test(a)), { timeoutMs: 5000, description: "a final answer to the impostor's INVITE" });
      const final = answers.find((a) => /^SIP\/2\.0 [2-6]\d\d /.test(a) && a.includes('CSeq: 1 INVITE')) ?? '';
      assert.doesNotMatch(final, /^SIP\/2\.0 200 /, 'the impostor is not answered with the media');
      assert.equal(r.success, true, r.raw);
      const call = await newCall(calls);
      assert.equal(r.data.deviceAudio, `127.0.0.1:${call.port}`, "the broadcast went to the camera's audio port");
      assert.equal((await post('shard-c', `/vms/broadcast/stop?channelId=${channel}`)).success, true);
      await waitFor(() => call.ended, { timeoutMs: 5000, description: 'the camera saw the BYE' });
    } finally {
      diagnosticsChannel.unsubscribe(SIP_CHANNELS.messageIn, onNotify);
      impostor.close();
    }
  });

  it('talk: audio both ways; the camera hangs up and its BYE ends the talk on shard-a through the edge', async () => {
    camera.talks = true;
    try {
      const calls = camera.audioCalls.length;
      const r = await post<AudioView>('shard-c', `/vms/talk/start?channelId=${channel}&mediaNodeId=${ZLM_ID}&app=rtp&stream=${MIC}`);
      assert.equal(r.success, true, r.raw);
      const call = await newCall(calls);
      await waitFor(() => call.packets >= 10, { timeoutMs: 5000, description: 'operator audio at the camera' });
      await waitFor(() => (zlm.stats(`talk_${channel}`)?.rtpPackets ?? 0) >= 10, { timeoutMs: 5000, description: 'camera audio at the media node' });
      const byes = forwarded(0, 'BYE');
      await call.hangUp();
      assert.equal(forwarded(0, 'BYE'), byes + 1, 'the BYE went device → shard through the edge');
      await waitFor(async () => ((await api(shard('shard-b'), `/vms/talk?deviceId=${DEV}`, { timeoutMs: 20_000 })).json.data as unknown[]).length === 0, {
        timeoutMs: 5000,
        description: 'talk ended on the platform',
      });
    } finally {
      camera.talks = false;
    }
  });

  it('what the edge does not take gets an answer: OPTIONS 405 with Allow, an INVITE from a flow no device spoke on 480', async () => {
    const sock = createSocket('udp4');
    await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
    try {
      const ask = (method: string): Promise<string> =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no answer to ${method}`)), 3000);
          sock.once('message', (m) => {
            clearTimeout(timer);
            resolve(m.toString('latin1'));
          });
          const port = sock.address().port;
          const text = [
            `${method} sip:${SERVER_ID}@127.0.0.1:${c.edge.port} SIP/2.0`,
            `Via: SIP/2.0/UDP 127.0.0.1:${port};rport;branch=z9hG4bK-x-${method}`,
            `From: <sip:${channel}@3402000000>;tag=1`,
            `To: <sip:${SERVER_ID}@3402000000>`,
            `Call-ID: stray-${method}@127.0.0.1`,
            `CSeq: 1 ${method}`,
            'Max-Forwards: 70',
            'Content-Length: 0',
            '',
            '',
          ].join('\r\n');
          sock.send(text, c.edge.port, '127.0.0.1');
        });
      const options = await ask('OPTIONS');
      assert.match(options, /^SIP\/2\.0 405 /);
      assert.match(options, /\r\nAllow: REGISTER, MESSAGE, NOTIFY, INVITE, ACK, CANCEL\r\n/);
      assert.match(await ask('INVITE'), /^SIP\/2\.0 480 /);
    } finally {
      sock.close();
    }
  });
});

describe('a camera on TCP to the edge', () => {
  let tcpCamera: SimulatedDevice;
  // what the TCP camera's stack received from the edge, by connection
  const received: MessageInEvent[] = [];
  const onIn = (m: unknown): void => {
    const e = m as MessageInEvent;
    if (e.flow.transport === 'tcp' && e.flow.remotePort === c.edge.port) received.push(e);
  };
  let keepalives = 0;

  before(async () => {
    diagnosticsChannel.subscribe(SIP_CHANNELS.messageIn, onIn);
    tcpCamera = createSimulatedDevice({
      server: { host: '127.0.0.1', port: c.edge.port, id: SERVER_ID },
      transport: 'tcp',
      deviceId: TCP_DEV,
      password: PASSWORD,
      channels: 1,
      keepaliveIntervalS: 1,
      utcOffsetMinutes: 480,
    });
    tcpCamera.on('keepalive', (status) => {
      if (status === 200) keepalives++;
    });
    await tcpCamera.start();
  });

  after(async () => {
    diagnosticsChannel.unsubscribe(SIP_CHANNELS.messageIn, onIn);
    await tcpCamera?.close();
  });

  it('REGISTER (401, digest, 200) and keepalives over TCP, placed on shard-b', async () => {
    await waitFor(async () => (await c.owners([TCP_DEV]))[0] === 'shard-b', { timeoutMs: 20_000, intervalMs: 100, description: `${TCP_DEV} registered on shard-b` });
    await waitFor(() => keepalives >= 2, { timeoutMs: 10_000, description: 'two keepalives answered 200 over TCP' });
    const statuses = received.filter((e) => e.message.type === 'response').map((e) => (e.message.type === 'response' ? e.message.status : 0));
    assert.ok(statuses.includes(401) && statuses.includes(200), `answers on the TCP connection: ${statuses.join(',')}`);
  });

  it('a control MESSAGE from another instance and an INVITE reach the camera on the connection it opened', async () => {
    const info = await api(shard('shard-c'), `/vms/device/info?deviceId=${TCP_DEV}`, { timeoutMs: 20_000 });
    assert.equal(info.json.success, true, info.bytes.toString());
    assert.equal((info.json.data as { deviceId?: string }).deviceId, TCP_DEV);
    await syncChannels({ api: async (m, p) => (await api(shard('shard-a'), p, { method: m, timeoutMs: 20_000 })).json as never }, TCP_DEV, 1);

    const start = await post<StartAnswer>('shard-a', `/vms/play/start?channelId=${tcpCamera.channelIds[0] as string}`);
    assert.equal(start.success, true, start.raw);
    await waitFor(() => (zlm.stats(start.data.streamId)?.rtpPackets ?? 0) > 0, { timeoutMs: 10_000, description: 'RTP at the media node' });
    const dev = tcpCamera.sessions.find((s) => s.kind === 'Play');
    assert.ok(dev !== undefined);
    assert.equal((await post('shard-c', `/vms/play/stop?sessionId=${start.data.sessionId}`)).success, true);
    await waitFor(() => dev.state === 'closed', { timeoutMs: 5000, description: 'BYE at the TCP camera' });

    const requests = received.filter((e) => e.message.type === 'request').map((e) => (e.message.type === 'request' ? e.message.method : ''));
    for (const m of ['MESSAGE', 'INVITE', 'ACK', 'BYE']) assert.ok(requests.includes(m), `${m} arrived over TCP: ${requests.join(',')}`);
    const connections = new Set(received.map((e) => e.flow.connectionId));
    assert.equal(connections.size, 1, 'one TCP connection, the one the camera opened');
  });
});
