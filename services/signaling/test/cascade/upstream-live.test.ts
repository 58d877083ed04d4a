// UpstreamLiveViews (src/cascade/upstream-live.ts, SPEC CASC-6): an upstream's INVITE for a shared
// channel, over real @vms/sip stacks on 127.0.0.1; the play path (LiveSource) and the media node
// (RtpForwarder) are recording fakes. Checks the answer, the order of the media steps, the teardown on
// the upstream's BYE, and that every refusal leaves nothing behind.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CascadeError, createMemoryPlatformRepository, upstreamPlatform, type PlatformRepository, type UpstreamPlatform } from '@vms/cascade';
import { describeSdp, parseSdp } from '@vms/gb28181';
import { createSipStack, SipRejectedError, type Dialog, type SipStack } from '@vms/sip';
import { pino } from 'pino';
import { FakeClock } from '../../src/core/clock.ts';
import { STREAM_CHECK_MS, STREAM_GONE_CHECKS, type StreamObservation } from '../../src/cascade/live-view-watch.ts';
import { UpstreamLiveViews } from '../../src/cascade/upstream-live.ts';
import type { LiveSource, LiveViewer, RtpForwarder, SendRtpRequest } from '../../src/cascade/upstream-live.port.ts';
import { createMemoryDeviceRepository } from '../../src/devices/device-repository.memory.ts';
import type { DeviceRepository } from '../../src/devices/device-repository.port.ts';
import type { ChannelInput } from '../../src/devices/device.types.ts';

const LOCAL_ID = '34020000002000000001';
const UPSTREAM = '34010000002000000001';
const DEVICE = '34020000001320000001';
const CHANNEL = '34020000001310000001';
const UNSHARED = '34020000001310000002';
const log = pino({ level: 'silent' });

const channel = (channelId: string): ChannelInput => ({
  channelId, name: 'Gate', manufacturer: null, model: null, owner: null, civilCode: null, address: null,
  parentId: null, parental: false, status: 'ON', longitude: null, latitude: null, ptzType: 1, extra: {},
});

const offer = (o: { port?: number; ssrc?: string; tcp?: boolean } = {}): string =>
  [
    'v=0',
    `o=${UPSTREAM} 0 0 IN IP4 127.0.0.1`,
    's=Play',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=video ${o.port ?? 30000} ${o.tcp === true ? 'TCP/RTP/AVP' : 'RTP/AVP'} 96`,
    'a=recvonly',
    'a=rtpmap:96 PS/90000',
    ...(o.tcp === true ? ['a=setup:passive', 'a=connection:new'] : []),
    `y=${o.ssrc ?? '0340100001'}`,
  ]
    .map((l) => `${l}\r\n`)
    .join('');

type Step = string;

class Fakes {
  readonly steps: Step[] = [];
  startError: CascadeError | null = null;
  waitError: CascadeError | null = null;
  sendError: CascadeError | null = null;
  /** Resolves start() only when released (CANCEL tests). */
  hold: Promise<void> | null = null;
  sends: SendRtpRequest[] = [];
  readonly viewer: LiveViewer = { purpose: 'live', sessionId: 'sess-1', streamId: `${DEVICE}_${CHANNEL}`, mediaNodeId: 'zlm-1' };

  readonly source: LiveSource = {
    start: async (req) => {
      this.steps.push(`play ${req.channelId} ${req.deviceId} ${req.tenantId}`);
      if (this.hold !== null) await this.hold;
      if (this.startError !== null) throw this.startError;
      return this.viewer;
    },
    stop: async (v, tenantId) => {
      this.steps.push(`leave ${v.sessionId} ${tenantId}`);
    },
    control: async (v, _tenantId, a) => {
      this.steps.push(`control ${v.sessionId} ${a.action}${'value' in a ? ` ${a.value}` : ''}`);
    },
  };

  readonly forwarder: RtpForwarder = {
    waitForStream: async (nodeId, streamId) => {
      this.steps.push(`wait ${nodeId} ${streamId}`);
      if (this.waitError !== null) throw this.waitError;
    },
    start: async (nodeId, req) => {
      this.steps.push(`send ${nodeId} ${req.ssrc} ${req.dstAddress}:${req.dstPort} ${req.udp ? 'udp' : 'tcp'}`);
      this.sends.push(req);
      if (this.sendError !== null) throw this.sendError;
      return { address: '10.9.8.7', port: 40123 };
    },
    stop: async (nodeId, streamId, ssrc) => {
      this.steps.push(`unsend ${nodeId} ${streamId} ${ssrc}`);
    },
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('UpstreamLiveViews: INVITE from an upstream platform (CASC-6)', () => {
  let upstream: SipStack;
  let local: SipStack;
  let platforms: PlatformRepository;
  let fakes: Fakes;
  let leader = true;
  let views: UpstreamLiveViews;
  let known = new Map<string, UpstreamPlatform>();
  let devices: DeviceRepository;
  const make = (): UpstreamLiveViews =>
    new UpstreamLiveViews({ known: () => known, platforms, devices, isLeader: () => leader, source: fakes.source, forwarder: fakes.forwarder, log });

  beforeEach(() => {
    fakes = new Fakes();
    leader = true;
    views = make();
  });

  before(async () => {
    upstream = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
    local = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp'] });
    platforms = createMemoryPlatformRepository();
    await platforms.upsert(upstreamPlatform({ serverId: UPSTREAM, host: '127.0.0.1', port: upstream.port, transport: 'udp', localId: LOCAL_ID }));
    await platforms.shareChannels(UPSTREAM, [{ deviceId: DEVICE, channelId: CHANNEL, catalogGroupId: null, parentId: null }]);
    devices = createMemoryDeviceRepository();
    await devices.registerDevice({ deviceId: DEVICE, transport: 'UDP', remoteIp: '127.0.0.1', remotePort: 5070, expiresSec: 3600, at: Date.now() });
    await devices.replaceChannels(DEVICE, [channel(CHANNEL), channel(UNSHARED)], Date.now());
    const p = await platforms.get(UPSTREAM);
    assert.ok(p !== null);
    known = new Map([[UPSTREAM, p]]);
    local.onRequest('INVITE', (req, ctx) => views.onInvite(req, ctx));
  });
  after(async () => {
    await views.close();
    await local.close();
    await upstream.close();
  });

  const invite = (channelId: string, body: string, from = UPSTREAM): Promise<{ dialog: Dialog; status: number; sdp: string }> =>
    upstream
      .createUAC({
        uri: `sip:${channelId}@127.0.0.1:${local.port}`,
        headers: { From: `<sip:${from}@3401000000>`, To: `<sip:${channelId}@3402000000>`, Subject: `${channelId}:0340100001,${from}:0` },
        body,
        contentType: 'application/sdp',
        target: { host: '127.0.0.1', port: local.port, transport: 'udp' },
      })
      .then(({ dialog, response }) => ({ dialog, status: response.status, sdp: response.body.toString('utf8') }));

  const refusal = async (channelId: string, body: string, from = UPSTREAM): Promise<number> => {
    try {
      await invite(channelId, body, from);
    } catch (err) {
      if (err instanceof SipRejectedError) return err.response.status;
      throw err;
    }
    assert.fail('INVITE was accepted');
  };

  it('shared channel: play, wait, send, 200 with the media node address and the upstream y=; BYE stops the send and leaves', async () => {
    const { dialog, status, sdp } = await invite(CHANNEL, offer({ port: 31000, ssrc: '0340100007' }));
    assert.equal(status, 200);
    const answer = describeSdp(parseSdp(sdp));
    assert.deepEqual(
      [answer.sessionName, answer.address, answer.port, answer.transport, answer.ssrc, answer.direction, answer.ownerId],
      ['Play', '10.9.8.7', 40123, 'udp', '0340100007', 'sendonly', CHANNEL],
    );
    assert.deepEqual(fakes.steps, [
      `play ${CHANNEL} ${DEVICE} 000000`,
      `wait zlm-1 ${DEVICE}_${CHANNEL}`,
      'send zlm-1 0340100007 127.0.0.1:31000 udp',
    ]);
    assert.equal(views.size, 1);
    await dialog.destroy(); // the upstream's BYE
    await until(() => views.size === 0 && fakes.steps.length === 5, 'teardown after BYE');
    assert.deepEqual(fakes.steps.slice(3), [`unsend zlm-1 ${DEVICE}_${CHANNEL} 0340100007`, 'leave sess-1 000000']);
  });

  it('device stream gone from the media node: BYE to the upstream, sending stopped, viewer left (fake clock)', async () => {
    const clock = new FakeClock();
    let seen: StreamObservation = { kind: 'present' };
    const probes: string[] = [];
    views = new UpstreamLiveViews({
      known: () => known, platforms, devices, isLeader: () => leader, source: fakes.source, forwarder: fakes.forwarder, log,
      watch: { clock, probe: async (nodeId, streamId) => (probes.push(`${nodeId} ${streamId}`), seen) },
    });
    const { dialog } = await invite(CHANNEL, offer({ ssrc: '0340100009' }));
    const byeReason = new Promise<string>((resolve) => dialog.once('terminated', resolve));
    for (let i = 0; i < 3; i++) {
      clock.advance(STREAM_CHECK_MS);
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(probes, Array<string>(3).fill(`zlm-1 ${DEVICE}_${CHANNEL}`));
    assert.equal(views.size, 1, 'stream present: the view goes on');
    seen = { kind: 'absent' };
    for (let i = 0; i < STREAM_GONE_CHECKS; i++) {
      clock.advance(STREAM_CHECK_MS);
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(await byeReason, 'bye', 'the upstream received a BYE');
    await until(() => views.size === 0 && fakes.steps.length === 5, 'teardown after the stream went');
    assert.deepEqual(fakes.steps.slice(3), [`unsend zlm-1 ${DEVICE}_${CHANNEL} 0340100009`, 'leave sess-1 000000']);
    assert.equal(clock.pending, 0, 'no view left: no check armed');
  });

  it('TCP offer (upstream listens): the media node connects, the answer says TCP setup:active', async () => {
    const { dialog, sdp } = await invite(CHANNEL, offer({ tcp: true }));
    assert.equal(fakes.sends[0]?.udp, false);
    const answer = describeSdp(parseSdp(sdp));
    assert.deepEqual([answer.transport, answer.setup], ['tcp', 'active']);
    await dialog.destroy();
    await until(() => views.size === 0, 'teardown');
  });

  it('refusals: 404 unshared or unknown channel, 403 unknown sender, 400 / 488 offers, 503 not leader — nothing started', async () => {
    assert.equal(await refusal(UNSHARED, offer()), 404);
    assert.equal(await refusal('34020000001310009999', offer()), 404);
    assert.equal(await refusal(CHANNEL, offer(), '34010000002000000099'), 403);
    assert.equal(await refusal(CHANNEL, offer({ ssrc: 'not-an-ssrc' })), 400);
    assert.equal(await refusal(CHANNEL, offer().replace('s=Play', 's=Talk')), 488);
    assert.equal(await refusal(CHANNEL, offer().replace('s=Play', 's=Playback')), 400, 'a playback needs a t= range');
    leader = false;
    assert.equal(await refusal(CHANNEL, offer()), 503);
    assert.deepEqual(fakes.steps, []);
  });

  it('source failures answer their status; media failures undo what was done (no viewer, no sending left)', async () => {
    fakes.startError = new CascadeError('CASCADE_ERR_SOURCE_UNAVAILABLE', 'device offline');
    assert.equal(await refusal(CHANNEL, offer()), 480);
    assert.deepEqual(fakes.steps, [`play ${CHANNEL} ${DEVICE} 000000`]);

    fakes = Object.assign(fakes, { startError: null, waitError: new CascadeError('CASCADE_ERR_SOURCE_TIMEOUT', 'no RTP') });
    fakes.steps.length = 0;
    assert.equal(await refusal(CHANNEL, offer()), 504);
    assert.deepEqual(fakes.steps, [`play ${CHANNEL} ${DEVICE} 000000`, `wait zlm-1 ${DEVICE}_${CHANNEL}`, 'leave sess-1 000000']);

    fakes.waitError = null;
    fakes.sendError = new CascadeError('CASCADE_ERR_MEDIA', 'startSendRtp failed');
    fakes.steps.length = 0;
    assert.equal(await refusal(CHANNEL, offer()), 500);
    assert.deepEqual(fakes.steps.at(-1), 'leave sess-1 000000');
    assert.equal(fakes.steps.filter((s) => s.startsWith('unsend')).length, 0, 'a sending that never started is not stopped');
    assert.equal(views.size, 0);
  });

  it('CANCEL while the play is under way: 487, and the viewer got meanwhile is left', async () => {
    let release!: () => void;
    fakes.hold = new Promise((r) => (release = r));
    const abort = new AbortController();
    const pending = upstream.createUAC(
      {
        uri: `sip:${CHANNEL}@127.0.0.1:${local.port}`,
        headers: { From: `<sip:${UPSTREAM}@3401000000>`, To: `<sip:${CHANNEL}@3402000000>` },
        body: offer(),
        contentType: 'application/sdp',
        target: { host: '127.0.0.1', port: local.port, transport: 'udp' },
      },
      { signal: abort.signal, onProvisional: () => abort.abort() },
    );
    await assert.rejects(pending, (err: unknown) => (err as { code?: string }).code === 'SIP_ERR_CANCELLED');
    release();
    await until(() => fakes.steps.includes('leave sess-1 000000'), 'viewer left after CANCEL');
    assert.equal(fakes.steps.filter((s) => s.startsWith('send')).length, 0);
    assert.equal(views.size, 0);
  });

  it('close(): BYE to the upstream, sending stopped, viewer left', async () => {
    const { dialog } = await invite(CHANNEL, offer());
    let byeSeen = false;
    dialog.on('bye', () => (byeSeen = true));
    await views.close();
    assert.equal(views.size, 0);
    assert.ok(fakes.steps.includes('leave sess-1 000000'));
    assert.ok(fakes.steps.some((s) => s.startsWith('unsend')));
    await until(() => byeSeen, 'BYE at the upstream');
  });
});
