// The session manager with fake edges: a media plane whose ZLM client records calls, and a signaling
// port whose INVITEs are answered (or refused) by the test. Real selection, ledger and SSRC allocator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemorySsrcAllocator, NodeHealthTracker, StreamLedger, ZlmCallError, type MediaNode, type ZlmClient } from '@vms/media';
import pino from 'pino';
import { createMemoryDeviceKeyIndex } from '../cluster/device-index.memory.ts';
import { FakeClock } from '../core/clock.ts';
import { DeviceRejectedError, MediaFailedError } from '../errors/catalog.ts';
import type { MediaPlane } from './media-plane.ts';
import { createMediaSessionManager } from './media-session-manager.ts';
import type { InviteRequest, MediaDialog, MediaSignaling } from './media-signaling.port.ts';
import type { StreamHolderDirectory } from './stream-holders.port.ts';
import type { SessionJournal } from '../recovery/session-journal.ts';
import type { SavedDialog, SessionSnapshot } from '../recovery/session-snapshot.ts';

const SERVER = '34020000002000000001';
const DEV = '34020000001320000001';
const CH = '34020000001310000001';
const NODE: MediaNode = {
  id: 'zlm-1', apiBaseUrl: 'http://10.0.0.5', secret: 's', rtpPortRange: { min: 30000, max: 30500 }, sdpIp: '10.0.0.5', streamIp: '10.0.0.5',
  hookBaseUrl: '', enabled: true, weight: 1, httpPort: 80, rtspPort: 554, rtmpPort: 1935,
};
const ANSWER = Buffer.from('v=0\r\no=x 0 0 IN IP4 10.0.0.9\r\ns=Play\r\nc=IN IP4 10.0.0.9\r\nt=0 0\r\nm=video 9000 TCP/RTP/AVP 96\r\na=rtpmap:96 PS/90000\r\ny=34020000001320000001\r\n');

const NODE_2: MediaNode = { ...NODE, id: 'zlm-2', apiBaseUrl: 'http://10.0.0.6', sdpIp: '10.0.0.6', streamIp: '10.0.0.6' };

interface SetupOptions {
  /** Media nodes in the order the fake selection offers them (skipping excluded ones). */
  nodes?: MediaNode[];
  /** The error openRtpServer throws on `nodeId` at its `attempt`-th call (1-based), if any. */
  openError?: (nodeId: string, attempt: number) => Error | undefined;
  /** Session continuity journal (SPEC §11). */
  journal?: SessionJournal;
}

const savedDialog = (callId: string, localSeq = 1): SavedDialog => ({
  callId,
  localTag: 'lt',
  remoteTag: 'rt',
  local: `<sip:${SERVER}@3402000000>`,
  remote: `<sip:${CH}@3402000000>`,
  localSeq,
  remoteSeq: null,
  routeSet: [],
  remoteTarget: `sip:${CH}@10.0.0.9:5060`,
  transport: 'udp',
  remoteAddress: '10.0.0.9',
  remotePort: 5060,
});

function setup(answerInvite: (req: InviteRequest) => Promise<void> = async () => {}, opts: SetupOptions = {}) {
  const clock = new FakeClock(1_000_000);
  const calls: string[] = [];
  let nextPort = 30000;
  const nodes = opts.nodes ?? [NODE];
  const attempts = new Map<string, number>();
  const clientOf = (node: MediaNode): ZlmClient =>
    ({
      nodeId: node.id,
      openRtpServer: async (p: { streamId: string; tcpMode?: string; ssrc?: string }) => {
        const n = (attempts.get(node.id) ?? 0) + 1;
        attempts.set(node.id, n);
        const prefix = node === NODE ? '' : `${node.id} `;
        calls.push(`${prefix}open ${p.streamId} ${p.tcpMode} ${p.ssrc}`);
        const err = opts.openError?.(node.id, n);
        if (err !== undefined) throw err;
        return { port: nextPort++ };
      },
      closeRtpServer: async (id: string) => (calls.push(`${node === NODE ? '' : `${node.id} `}close ${id}`), { hit: true }),
      connectRtpServer: async (p: { streamId: string; dstUrl: string; dstPort: number }) => void calls.push(`connect ${p.streamId} ${p.dstUrl}:${p.dstPort}`),
    }) as unknown as ZlmClient;
  const clients = new Map(nodes.map((n) => [n.id, clientOf(n)]));
  const client = clients.get(NODE.id) as ZlmClient;
  const ssrcs = createMemorySsrcAllocator({ serverId: SERVER });
  const plane: MediaPlane = {
    ledger: new StreamLedger(),
    ssrcs,
    health: new NodeHealthTracker(clock),
    start: async () => {},
    node: (id) => nodes.find((n) => n.id === id),
    nodes: () => nodes,
    choose: async (_channel, _purpose, exclude) => {
      const n = nodes.find((x) => !(exclude ?? []).includes(x.id));
      if (n === undefined) throw new MediaFailedError('node selection', 'no usable media node');
      return n;
    },
    client: (node) => clients.get(node.id) ?? client,
    callResult: () => {},
    close: async () => {},
  };
  const invites: InviteRequest[] = [];
  const dialogs: { bye: number; dropped: number; ended: ((r: string) => void)[] }[] = [];
  /** Dialogs restored from snapshots, and the BYEs sent on them. */
  const restored: { callId: string; bye: number }[] = [];
  const signaling: MediaSignaling = {
    restore(_deviceId, saved) {
      const r = { callId: saved.callId, bye: 0 };
      restored.push(r);
      return { callId: saved.callId, answer: Buffer.alloc(0), info: async () => 200, bye: async () => void r.bye++, onEnded: () => undefined, saved: () => saved, drop: () => undefined };
    },
    async invite(req) {
      invites.push(req);
      await answerInvite(req);
      const d = { bye: 0, dropped: 0, ended: [] as ((r: string) => void)[] };
      dialogs.push(d);
      const callId = `call-${invites.length}`;
      const dialog: MediaDialog = {
        callId,
        saved: () => savedDialog(callId),
        answer: ANSWER,
        info: async () => 200,
        bye: async () => void d.bye++,
        onEnded: (l) => void d.ended.push(l),
        drop: () => void d.dropped++,
      };
      return dialog;
    },
  };
  const directory = createMemoryDeviceKeyIndex(clock);
  const held = new Map<string, string>();
  const holders: StreamHolderDirectory = {
    claim: async (nodeId, streamId) => void held.set(`${nodeId}/${streamId}`, 'self'),
    holderOf: async (nodeId, streamId) => held.get(`${nodeId}/${streamId}`) ?? null,
    release: async (nodeId, streamId) => void held.delete(`${nodeId}/${streamId}`),
  };
  let n = 0;
  const manager = createMediaSessionManager({ plane, signaling, directory, holders, clock, log: pino({ level: 'silent' }), serverId: SERVER, newId: () => `id${++n}`, journal: opts.journal ?? null });
  return { manager, calls, invites, dialogs, directory, ssrcs, held, restored, clock };
}

describe('media session manager', () => {
  it('concurrent plays of one channel share one INVITE and one stream; the last stop sends BYE and closes the port', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const t = setup(() => gate);
    const p1 = t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    const p2 = t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    release();
    const [a, b] = await Promise.all([p1, p2]);
    assert.equal(t.invites.length, 1);
    assert.equal(a.streamId, b.streamId);
    assert.notEqual(a.sessionId, b.sessionId);
    assert.equal(t.invites[0]?.subject, `${CH}:${a.ssrc},${SERVER}:0`);
    assert.match(t.invites[0]?.sdp ?? '', /\r\ns=Play\r\n[\s\S]*m=video 30000 RTP\/AVP 96 97 98\r\n/);
    assert.match(t.invites[0]?.sdp ?? '', /\r\nf=v\/\/\/\/\/a\/\/\/\r\n$/, 'SPEC §8: the live offer carries f=');
    assert.equal(await t.directory.deviceOf(a.sessionId), DEV);
    assert.deepEqual([...t.held.keys()], [`${NODE.id}/${a.streamId}`], 'holder recorded once for the shared stream');
    assert.equal(t.manager.holds(NODE.id, a.streamId), true);
    assert.equal(t.manager.holds('zlm-other', a.streamId), false, 'same stream id on another node is not ours');
    assert.deepEqual(await t.manager.stop(a.sessionId), { viewers: 1 });
    assert.equal(t.dialogs[0]?.bye, 0);
    await t.manager.stop(b.sessionId);
    assert.equal(t.dialogs[0]?.bye, 1);
    assert.deepEqual(t.calls, [`open ${DEV}_${CH} udp ${a.ssrc}`, `close ${DEV}_${CH}`]);
    assert.equal(await t.ssrcs.inUse(NODE.id), 0);
    assert.equal(await t.directory.deviceOf(b.sessionId), null);
    assert.equal(t.held.size, 0, 'holder record removed with the stream');
    assert.equal(t.manager.holds(NODE.id, a.streamId), false);
  });

  it('a refused INVITE closes the RTP port and releases the SSRC; tcp-active connects to the answer address', async () => {
    const refused = setup(async () => {
      throw new DeviceRejectedError(DEV, 'INVITE', '488 Not Acceptable Here');
    });
    await assert.rejects(refused.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' }), DeviceRejectedError);
    assert.deepEqual(refused.calls.map((c) => c.split(' ')[0]), ['open', 'close']);
    assert.equal(await refused.ssrcs.inUse(NODE.id), 0);

    const active = setup();
    const s = await active.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'tcp-active' });
    assert.ok(active.calls.includes(`connect ${s.streamId} 10.0.0.9:9000`), active.calls.join('\n'));
  });

  it('the device ending the dialog ends the stream and its sessions without a BYE of ours', async () => {
    const t = setup();
    const s = await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    for (const l of t.dialogs[0]?.ended ?? []) l('bye');
    await new Promise((r) => setImmediate(r));
    assert.equal(t.dialogs[0]?.bye, 0);
    assert.deepEqual(t.manager.stats, { streams: 0, sessions: 0 });
    await assert.rejects(t.manager.stop(s.sessionId), { code: 'VMS_ERR_MEDIA_SESSION_NOT_FOUND' });
  });

  it('MediaStatus 121 with the INVITE Call-ID ends a playback; the no-reader hook ends a live stream', async () => {
    const t = setup();
    const pb = await t.manager.startPlayback({ deviceId: DEV, channelId: CH, mode: 'udp', start: new Date(0), end: new Date(60_000) });
    assert.match(pb.ssrc, /^1/);
    t.manager.onMediaStatus({ deviceId: DEV, callId: 'call-1', notifyType: '121' });
    await new Promise((r) => setImmediate(r));
    assert.equal(t.dialogs[0]?.bye, 1);
    const live = await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    t.manager.onHook({ kind: 'stream_none_reader', mediaServerId: NODE.id, vhost: '__defaultVhost__', app: 'rtp', stream: live.streamId, schema: 'rtsp' });
    await new Promise((r) => setImmediate(r));
    assert.equal(t.dialogs[1]?.bye, 1);
    assert.deepEqual(t.manager.stats, { streams: 0, sessions: 0 });
  });
});

describe('media session manager: media node trouble (SPEC §9)', () => {
  it('a stale RTP server under the channel stream id (an owner crashed holding it) is closed and the play goes on', async () => {
    const stale = new ZlmCallError('MEDIA_ERR_API', 'zlm-1 openRtpServer: This stream already exists', { nodeId: 'zlm-1', api: 'openRtpServer', zlmCode: -300, zlmMsg: 'This stream already exists' });
    const t = setup(async () => {}, { openError: (_id, attempt) => (attempt === 1 ? stale : undefined) });
    const a = await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    assert.deepEqual(t.calls, [`open ${DEV}_${CH} udp ${a.ssrc}`, `close ${DEV}_${CH}`, `open ${DEV}_${CH} udp ${a.ssrc}`]);
    assert.equal(t.invites.length, 1);
  });

  it('a media node failing openRtpServer: the play is retried on another node, the first SSRC released', async () => {
    const down = new ZlmCallError('MEDIA_ERR_UNREACHABLE', 'zlm-1 openRtpServer: connection refused', { nodeId: 'zlm-1', api: 'openRtpServer' });
    const t = setup(async () => {}, { nodes: [NODE, NODE_2], openError: (id) => (id === 'zlm-1' ? down : undefined) });
    const a = await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    assert.equal(a.mediaNodeId, 'zlm-2');
    assert.equal(t.calls.filter((c) => c.includes('open')).length, 2);
    assert.equal(await t.ssrcs.inUse('zlm-1'), 0, 'the SSRC allocated on the failed node is released');
    assert.equal(await t.ssrcs.inUse('zlm-2'), 1);
  });

  it('no other node: the play fails with what the node said (4609), nothing held', async () => {
    const down = new ZlmCallError('MEDIA_ERR_UNREACHABLE', 'zlm-1 openRtpServer: connection refused', { nodeId: 'zlm-1', api: 'openRtpServer' });
    const t = setup(async () => {}, { openError: () => down });
    await assert.rejects(t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' }), (e: MediaFailedError) => e instanceof MediaFailedError && /openRtpServer/.test(e.message));
    assert.equal(t.invites.length, 0);
    assert.equal(await t.ssrcs.inUse('zlm-1'), 0);
  });
});

describe('media session manager: device gone', () => {
  it('ends the streams of a device that went offline, without BYE, and frees the ports', async () => {
    const t = setup();
    await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    await t.manager.startLive({ deviceId: DEV, channelId: '34020000001310000002', mode: 'udp' });
    t.manager.onDeviceGone(DEV);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(t.manager.stats, { streams: 0, sessions: 0 });
    assert.deepEqual(t.dialogs.map((d) => d.bye), [0, 0]);
    assert.equal(t.calls.filter((c) => c.startsWith('close')).length, 2);
  });
});

describe('media session manager: session continuity (SPEC §11)', () => {
  const snapshotOf = (over: Partial<SessionSnapshot> = {}): SessionSnapshot => ({
    v: 1,
    holder: 'node-a',
    run: 'old-run',
    streamId: `${DEV}_${CH}`,
    purpose: 'live',
    deviceId: DEV,
    channelId: CH,
    nodeId: NODE.id,
    ssrc: '0200000042',
    allocatedSsrc: '0200000042',
    mode: 'udp',
    rtpPort: 30_123,
    dialog: savedDialog('old-call', 3),
    sessionIds: ['v1', 'v2'],
    createdAt: 900_000,
    expiresAt: 2_000_000,
    range: null,
    speed: 1,
    ...over,
  });

  it('journals an established stream with its viewers, rewrites it on each change, and tombstones it before the BYE', async () => {
    const events: string[] = [];
    let t!: ReturnType<typeof setup>;
    const journal: SessionJournal = {
      run: 'r',
      record: (e) => void events.push(`record ${e.dialog.callId} [${e.sessionIds.join(',')}]`),
      ended: async (callId) => void events.push(`ended ${callId} (byes so far ${t.dialogs[0]?.bye})`),
      has: () => false,
      handOff: async (callId, to) => void events.push(`handOff ${callId} ${to}`),
      close: async () => undefined,
    };
    t = setup(async () => {}, { journal });
    const a = await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    const b = await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    await t.manager.stop(a.sessionId);
    await t.manager.stop(b.sessionId);
    assert.deepEqual(events, [
      `record call-1 [${a.sessionId}]`,
      `record call-1 [${a.sessionId},${b.sessionId}]`,
      `record call-1 [${b.sessionId}]`,
      'ended call-1 (byes so far 0)',
    ]);
    assert.equal(t.dialogs[0]?.bye, 1);
  });

  it('the device moved to another live instance: its stream is handed off — no BYE, RTP server, SSRC, holder record and session ids kept for the new owner', async () => {
    const events: string[] = [];
    const journaled = new Set<string>();
    const journal: SessionJournal = {
      run: 'r',
      record: (e) => void journaled.add(e.dialog.callId),
      ended: async (callId) => void events.push(`ended ${callId}`),
      has: (callId) => journaled.has(callId),
      handOff: async (callId, to) => void events.push(`handOff ${callId} ${to}`),
      close: async () => undefined,
    };
    const t = setup(async () => {}, { journal });
    const a = await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    const callsBefore = t.calls.length;
    await t.manager.onDeviceMoved(DEV, 'node-b');
    assert.deepEqual(events, ['handOff call-1 node-b'], 'handed to the new owner, no tombstone');
    assert.equal(t.dialogs[0]?.bye, 0, 'no BYE from the old owner');
    assert.equal(t.dialogs[0]?.dropped, 1, 'the dialog is forgotten here');
    assert.equal(t.calls.length, callsBefore, 'the RTP server stays open');
    assert.equal(await t.ssrcs.reserve(NODE.id, a.ssrc), false, 'the SSRC stays held (the new owner adopts it)');
    assert.deepEqual([...t.held.keys()], [`${NODE.id}/${a.streamId}`], 'holder record kept');
    assert.equal(await t.directory.deviceOf(a.sessionId), DEV, 'the viewer session id stays routable');
    assert.equal(t.manager.holds(NODE.id, a.streamId), false);
    assert.equal(t.manager.stats.streams, 0);
    // the dropped dialog ending later (the new owner's BYE from the snapshot) changes nothing here
    for (const l of t.dialogs[0]?.ended ?? []) l('bye');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(events, ['handOff call-1 node-b']);
  });

  it('recover: BYE on the old dialog, then a new INVITE into the same RTP port and SSRC (no new RTP server); the viewers keep their session ids', async () => {
    const t = setup();
    const callId = await t.manager.recover(snapshotOf());
    assert.equal(callId, 'call-1');
    assert.deepEqual(t.restored, [{ callId: 'old-call', bye: 1 }]);
    assert.equal(t.calls.length, 0, 'the media node was not asked for a new RTP server');
    assert.match(t.invites[0]?.sdp ?? '', /m=video 30123 RTP\/AVP/);
    assert.match(t.invites[0]?.sdp ?? '', /\r\ny=0200000042\r\n/);
    assert.equal(t.invites[0]?.subject, `${CH}:0200000042,${SERVER}:0`);
    assert.equal(await t.ssrcs.reserve(NODE.id, '0200000042'), false, 'the SSRC is held here now');
    assert.equal(await t.directory.deviceOf('v1'), DEV);
    assert.equal(t.manager.holds(NODE.id, `${DEV}_${CH}`), true);
    // a new viewer shares the recovered stream; the old viewers' stops end it as before
    const c = await t.manager.startLive({ deviceId: DEV, channelId: CH, mode: 'udp' });
    assert.equal(c.viewers, 3);
    assert.equal(t.invites.length, 1);
    for (const id of ['v1', 'v2', c.sessionId]) await t.manager.stop(id);
    assert.equal(t.dialogs[0]?.bye, 1);
    assert.deepEqual(t.calls, [`close ${DEV}_${CH}`]);
    assert.equal(await t.ssrcs.inUse(NODE.id), 0);
  });

  it('recover of a playback resumes where it was: the INVITE range starts later by elapsed time × speed', async () => {
    const t = setup();
    const start = Date.UTC(2024, 0, 1, 0, 0, 0);
    await t.manager.recover(snapshotOf({ purpose: 'playback', streamId: `playback_${CH}_x`, ssrc: '1200000042', allocatedSsrc: '1200000042', range: { start, end: start + 3_600_000 }, speed: 1, createdAt: t.clock.now() - 60_000 }));
    const [, from] = /\r\nt=(\d+) (\d+)\r\n/.exec(t.invites[0]?.sdp ?? '') ?? [];
    assert.equal(Number(from), (start + 60_000) / 1000);
  });

  it('a failed recovery INVITE leaves nothing here and does not touch the media node (the caller retries or releases)', async () => {
    const t = setup(async () => {
      throw new DeviceRejectedError(DEV, 'INVITE', '486 Busy Here');
    });
    await assert.rejects(t.manager.recover(snapshotOf()), DeviceRejectedError);
    assert.equal(t.calls.length, 0);
    assert.equal(t.manager.holds(NODE.id, `${DEV}_${CH}`), false);
    assert.equal(t.manager.stats.streams, 0);
    await assert.rejects(t.manager.recover(snapshotOf({ nodeId: 'gone' })), MediaFailedError);
  });
});
