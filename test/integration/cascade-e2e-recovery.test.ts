// End-to-end (SPEC §11 RECOVER for CASC-6): upstream live views held by a cascade leader that is killed -9.
// Real processes: redis-server, MariaDB, three signaling instances — casc-rec-a (cascade-flagged, the leader),
// casc-rec-b (flagged, next in line) and casc-rec-o (the device's owner, the media node's hooks) — the ZLM
// stand-in (NOT ZLMediaKit) re-sending the device's real RTP/PS to the upstream, a device-sim camera, and the
// upstream platform on @vms/sip in the test process with its own RTP sockets.
// The upstream opens three live views on the leader (one channel each). It ends the third one (BYE); the leader
// is killed right after that BYE was answered. Then, within the online window + a scan + the re-INVITE bound:
//   - view 1: casc-rec-b sends the upstream an in-dialog re-INVITE from the snapshot (same Call-ID and tags, its
//     own Contact: target refresh), the upstream accepts it and RTP keeps reaching its SDP address; its later BYE,
//     sent to the refreshed target, reaches casc-rec-b, which stops the sending and leaves the stream;
//   - view 2: the upstream refuses the re-INVITE (488, what a platform without session modification answers):
//     casc-rec-b sends it a clean BYE, the sending stops;
//   - view 3 (ended before the kill) is never resurrected: no re-INVITE, no BYE;
//   - nothing is left: the indexes of both leaders empty, every device stream ended with its last viewer.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { describe, it } from 'node:test';
import { defaultChannelIds, parseRtpHeader } from '@vms/device-sim';
import { SipRejectedError, type Dialog, type SipRequest } from '@vms/sip';
import { freePort, sleep, waitFor } from '@vms/harness';
import { eventually, HEARTBEAT_S, logLines, shares, UPSTREAM_DOMAIN, UPSTREAM_ID, useCascadeCluster, type CascadeCluster, type Instance } from './cascade-cluster.ts';
import { mediaNodesEnv, startStandIn } from './media-e2e-fixture.ts';

const DEVICE = '34020000001320000801';
const SSRCS = ['0340100091', '0340100092', '0340100093'] as const;
/** Online window (3 heartbeats), one scan period, and the re-INVITE bound of upstream-recovery.ts (8 s). */
const WINDOW_MS = 3 * HEARTBEAT_S * 1000;
const BOUND_MS = WINDOW_MS + HEARTBEAT_S * 1000 + 8000;

interface Sink {
  readonly port: number;
  /** Arrival times of RTP packets carrying `ssrc`. */
  readonly at: number[];
  close(): Promise<void>;
}

async function udpSink(ssrc: string): Promise<Sink> {
  const socket = createSocket('udp4');
  const at: number[] = [];
  socket.on('message', (msg) => {
    if (parseRtpHeader(msg)?.ssrc === Number(ssrc)) at.push(Date.now());
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, at, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}

const offer = (port: number, ssrc: string): string =>
  ['v=0', `o=${UPSTREAM_ID} 0 0 IN IP4 127.0.0.1`, 's=Play', 'c=IN IP4 127.0.0.1', 't=0 0', `m=video ${port} RTP/AVP 96`, 'a=recvonly', 'a=rtpmap:96 PS/90000', `y=${ssrc}`]
    .map((l) => `${l}\r\n`)
    .join('');

async function invite(cluster: CascadeCluster, leader: Instance, channelId: string, body: string, ssrc: string): Promise<Dialog> {
  try {
    const { dialog } = await cluster.upstream.stack.createUAC({
      uri: `sip:${channelId}@127.0.0.1:${leader.sipPort}`,
      headers: { From: `<sip:${UPSTREAM_ID}@${UPSTREAM_DOMAIN}>`, To: `<sip:${channelId}@${channelId.slice(0, 10)}>`, Subject: `${channelId}:${ssrc},${UPSTREAM_ID}:0` },
      body,
      contentType: 'APPLICATION/SDP',
      target: { host: '127.0.0.1', port: leader.sipPort, transport: 'udp' },
    });
    return dialog;
  } catch (err) {
    if (err instanceof SipRejectedError) assert.fail(`INVITE refused ${err.response.status}: ${JSON.stringify(logLines(leader, 'upstream live view refused'))}`);
    throw err;
  }
}

describe('upstream live views survive the leader (SPEC §11 for CASC-6)', () => {
  const cluster = useCascadeCluster();

  it('kill -9 of the leader: the next leader re-INVITEs the upstream (RTP keeps flowing) or BYEs it when refused; an ended view stays ended', async () => {
    const ownerPort = await freePort();
    const zlm = await startStandIn(ownerPort, { id: 'zlm-casc-rec', rtpTimeoutMs: 30_000 });
    cluster.track(() => zlm.close());
    const media = { VMS_MEDIA_NODES: mediaNodesEnv(zlm) };
    const channels = defaultChannelIds(DEVICE, 3);
    const s = await cluster.database('casc_rec', shares(DEVICE, channels));
    const a = await cluster.instance(s, 'casc-rec-a', { cascade: true, env: media });
    const b = await cluster.instance(s, 'casc-rec-b', { cascade: true, env: media });
    const o = await cluster.instance(s, 'casc-rec-o', { env: { ...media, SERVER_PORT: String(ownerPort), VMS_GB28181_SIP_INTERNAL_BASE_URL: `http://127.0.0.1:${ownerPort}` } });
    await cluster.registered(a);
    await cluster.device(o, DEVICE, 3, { fps: 25, keyFrameBytes: 2000, deltaFrameBytes: 400 });

    const sinks = await Promise.all(SSRCS.map((x) => udpSink(x)));
    for (const k of sinks) cluster.track(() => k.close());
    const dialogs: Dialog[] = [];
    for (let i = 0; i < 3; i++) dialogs.push(await invite(cluster, a, channels[i] as string, offer(sinks[i]!.port, SSRCS[i]!), SSRCS[i]!));
    const [kept, refused, ended] = dialogs as [Dialog, Dialog, Dialog];
    await waitFor(() => sinks.every((k) => k.at.length >= 20), { timeoutMs: 10_000, intervalMs: 20, description: 'RTP at the upstream for the three views' });
    await waitFor(async () => (await cluster.stores.redisClient.scard('vms:casc-rec:{casc-rec-a}:idx')) === 3, { timeoutMs: 5000, description: 'three upstream dialogs in the leader’s index' });

    // the upstream: accepts a re-INVITE of the first view (and follows its target refresh), refuses the second
    const reinvites: { view: number; req: SipRequest; fromPort: number; at: number }[] = [];
    kept.on('request', (req, ctx) => {
      reinvites.push({ view: 0, req, fromPort: ctx.flow.remotePort, at: Date.now() });
      ctx.reply(200, { body: offer(sinks[0]!.port, SSRCS[0]), contentType: 'application/sdp' });
    });
    refused.on('request', (req, ctx) => {
      reinvites.push({ view: 1, req, fromPort: ctx.flow.remotePort, at: Date.now() });
      ctx.reply(488);
    });
    ended.on('request', (req, ctx) => {
      reinvites.push({ view: 2, req, fromPort: ctx.flow.remotePort, at: Date.now() });
      ctx.reply(488);
    });
    const byes: { view: number; fromPort: number }[] = [];
    refused.on('bye', () => byes.push({ view: 1, fromPort: 0 }));

    // the upstream ends the third view; the leader dies right after that BYE was answered
    await ended.destroy();
    const killedAt = Date.now();
    await a.proc.kill();
    const packetsAtKill = sinks[0]!.at.length;

    await waitFor(() => reinvites.some((r) => r.view === 0) && refused.terminated, { timeoutMs: BOUND_MS + 5000, intervalMs: 20, description: 're-INVITE of view 1 and BYE of view 2' });
    const re = reinvites.find((r) => r.view === 0)!;
    const reinviteMs = re.at - killedAt;
    assert.equal(re.fromPort, b.sipPort, 'the re-INVITE comes from the new leader');
    assert.equal(re.req.headers.get('Call-ID'), kept.callId, 'same dialog: Call-ID');
    assert.match(re.req.headers.get('From') ?? '', new RegExp(`tag=${kept.remoteTag}`), 'same dialog: the leader’s tag');
    assert.match(re.req.headers.get('To') ?? '', new RegExp(`tag=${kept.localTag}`), 'same dialog: the upstream’s tag');
    assert.match(re.req.headers.get('Contact') ?? '', new RegExp(`:${b.sipPort}\\b`), 'target refresh to the new leader');
    assert.equal(kept.remoteTarget.port, b.sipPort);
    assert.ok(reinviteMs <= BOUND_MS, `re-INVITE ${reinviteMs} ms after the kill (bound ${BOUND_MS} ms)`);
    assert.equal(refused.terminated, true, 'the refused view got a BYE');
    assert.ok(byes.length === 1);
    assert.equal(reinvites.filter((r) => r.view === 2).length, 0, 'the ended view is not resurrected');
    const aboutEnded = [...logLines(b, 'orphaned upstream view released (BYE)'), ...logLines(b, 'orphaned upstream view recovered (re-INVITE accepted)')].filter((l) => l.callId === ended.callId);
    assert.equal(aboutEnded.length, 0, 'nothing done about the ended view');
    assert.equal(reinvites.filter((r) => r.view === 0).length, 1, 'exactly one re-INVITE');

    // RTP keeps reaching the upstream's SDP address after the recovery
    const afterRecovery = Date.now();
    await waitFor(() => sinks[0]!.at.filter((t) => t > afterRecovery).length >= 20, { timeoutMs: 5000, intervalMs: 20, description: 'RTP of view 1 after the recovery' });
    const lastBefore = sinks[0]!.at.filter((t) => t <= re.at).at(-1) ?? killedAt;
    const firstAfter = sinks[0]!.at.find((t) => t > re.at) ?? Date.now();
    console.log(
      `upstream recovery: re-INVITE from the new leader ${reinviteMs} ms after kill -9 (window ${WINDOW_MS} ms, bound ${BOUND_MS} ms); RTP gap at the upstream ${firstAfter - lastBefore} ms; ${sinks[0]!.at.length - packetsAtKill} packets since the kill`,
    );
    // the refused view's sending stops
    await eventually(() => logLines(b, 'orphaned upstream view released (BYE)').some((l) => l.reason === 'upstream re-INVITE refused'), 'casc-rec-b released view 2', 5000);
    const n2 = sinks[1]!.at.length;
    await sleep(500);
    assert.equal(sinks[1]!.at.length, n2, 'no RTP for the refused view after its BYE');
    assert.equal(logLines(b, 'orphaned upstream view recovered (re-INVITE accepted)').length, 1);
    assert.equal(logLines(o, 'orphaned upstream view recovered (re-INVITE accepted)').length, 0, 'only the leader recovers');
    await waitFor(async () => (await cluster.stores.redisClient.scard('vms:casc-rec:{casc-rec-a}:idx')) === 0, { timeoutMs: 5000, description: 'the dead leader’s index empty' });
    assert.equal(await cluster.stores.redisClient.scard('vms:casc-rec:{casc-rec-b}:idx'), 1, 'the recovered view journaled by the new leader');

    // the upstream ends the recovered view: its BYE reaches the new leader, everything is let go
    await kept.destroy();
    await eventually(() => logLines(b, 'upstream live view ended').some((l) => l.reason === 'bye'), 'casc-rec-b ended the recovered view', 5000);
    await waitFor(() => channels.every((c) => zlm.stats(`${DEVICE}_${c}`) === undefined), { timeoutMs: 10_000, intervalMs: 50, description: 'every device stream ended with its last viewer' });
    assert.equal(await cluster.stores.redisClient.scard('vms:casc-rec:{casc-rec-b}:idx'), 0);
  });
});
