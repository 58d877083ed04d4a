// Node selection: least load per weight among healthy nodes, sticky per channel (SPEC §9).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MediaError,
  StreamLedger,
  buildCandidates,
  createLeastLoadSelector,
  createRoutingMediaSelector,
  type MediaCandidate,
  type MediaNode,
  type NodeHealthState,
} from '../src/index.ts';

const node = (id: string, over: Partial<MediaNode> = {}): MediaNode => ({
  id,
  apiBaseUrl: `http://${id}:80`,
  secret: 's',
  rtpPortRange: { min: 30000, max: 30500 },
  sdpIp: '10.0.0.1',
  streamIp: '10.0.0.1',
  hookBaseUrl: '',
  enabled: true,
  weight: 1,
  httpPort: 80,
  rtspPort: 554,
  rtmpPort: 1935,
  ...over,
});
const c = (n: MediaNode, streams: number, state: NodeHealthState = 'active'): MediaCandidate => ({ node: n, state, streams });
const CH = '34020000001320000001';
// The same expectations hold for the first selector and for the routing engine's built-in media table
// (SPEC §10: the default table reproduces today's behaviour).
for (const [name, selector] of [
  ['least-load selector', createLeastLoadSelector()],
  ['routing engine, built-in media table', createRoutingMediaSelector()],
] as const) {
  const pick = (candidates: MediaCandidate[], extra: { currentNodeId?: string; exclude?: string[]; purpose?: 'live' | 'playback' } = {}): string =>
    selector.select({ channelId: CH, purpose: extra.purpose ?? 'live', candidates, currentNodeId: extra.currentNodeId, exclude: extra.exclude }).id;

  describe(name, () => {
    it('picks the node with the fewest streams', () => {
      assert.equal(pick([c(node('a'), 5), c(node('b'), 2), c(node('c'), 9)]), 'b');
    });

    it('load is per unit of weight; ties go to the larger weight, then the smaller id', () => {
      assert.equal(pick([c(node('a'), 4, 'active'), c(node('b', { weight: 4 }), 12)]), 'b', '12/4 = 3 < 4/1');
      assert.equal(pick([c(node('a'), 2), c(node('b', { weight: 2 }), 4)]), 'b', 'equal load, larger weight');
      assert.equal(pick([c(node('b'), 1), c(node('a'), 1)]), 'a', 'full tie: smaller id, whatever the order');
    });

    it('skips disabled, drained (weight 0), inactive and excluded nodes', () => {
      const cs = [c(node('a', { enabled: false }), 0), c(node('b', { weight: 0 }), 0), c(node('c'), 0, 'inactive'), c(node('d'), 0), c(node('e'), 7)];
      assert.equal(pick(cs), 'd');
      assert.equal(pick(cs, { exclude: ['d'] }), 'e');
    });

    it('prefers active nodes; falls back to probing ones only when none is active', () => {
      assert.equal(pick([c(node('a'), 0, 'probing'), c(node('b'), 50)]), 'b');
      assert.equal(pick([c(node('a'), 3, 'probing'), c(node('b'), 1, 'probing'), c(node('c'), 0, 'inactive')]), 'b');
    });

    it('no usable node → MEDIA_ERR_NO_NODE', () => {
      assert.throws(() => pick([]), (e: MediaError) => e.code === 'MEDIA_ERR_NO_NODE' && e.transient);
      assert.throws(() => pick([c(node('a'), 0, 'inactive'), c(node('b', { enabled: false }), 0)]), MediaError);
    });

    it('sticky: a live channel stays on its node even when another is less loaded', () => {
      const cs = [c(node('a'), 10), c(node('b'), 0)];
      assert.equal(pick(cs, { currentNodeId: 'a' }), 'a');
      assert.equal(pick([c(node('a', { weight: 0 }), 10), c(node('b'), 0)], { currentNodeId: 'a' }), 'a', 'a draining node keeps existing streams');
      assert.equal(pick([c(node('a'), 10, 'probing'), c(node('b'), 0)], { currentNodeId: 'a' }), 'a', 'suspect but not dead: keep sharing');
    });

    it('stickiness yields when the node is inactive, disabled, excluded or unknown, and for history streams', () => {
      assert.equal(pick([c(node('a'), 1, 'inactive'), c(node('b'), 5)], { currentNodeId: 'a' }), 'b');
      assert.equal(pick([c(node('a', { enabled: false }), 1), c(node('b'), 5)], { currentNodeId: 'a' }), 'b');
      assert.equal(pick([c(node('a'), 1), c(node('b'), 5)], { currentNodeId: 'a', exclude: ['a'] }), 'b');
      assert.equal(pick([c(node('b'), 5)], { currentNodeId: 'gone' }), 'b');
      assert.equal(pick([c(node('a'), 9), c(node('b'), 5)], { currentNodeId: 'a', purpose: 'playback' }), 'b');
    });
  });

  describe(`stream ledger and candidates (${name})`, () => {
    it('counts own streams per node and remembers each channel\'s live stream', () => {
      const l = new StreamLedger();
      l.add({ streamId: 's1', nodeId: 'a', channelId: CH, purpose: 'live' });
      l.add({ streamId: 's2', nodeId: 'a', channelId: CH, purpose: 'playback' });
      l.add({ streamId: 's3', nodeId: 'b', channelId: 'other', purpose: 'live' });
      assert.deepEqual([l.streamsOn('a'), l.streamsOn('b'), l.size], [2, 1, 3]);
      assert.equal(l.liveStreamOf(CH)?.nodeId, 'a');
      assert.deepEqual(l.listOn('a').map((s) => s.streamId), ['s1', 's2']);
      l.remove('s1');
      assert.equal(l.liveStreamOf(CH), undefined);
      assert.equal(l.streamsOn('a'), 1);
      l.add({ streamId: 's2', nodeId: 'b', channelId: CH, purpose: 'playback' });
      assert.deepEqual([l.streamsOn('a'), l.streamsOn('b')], [0, 2], 're-adding a stream id moves it');
      assert.equal(l.remove('nope'), undefined);
    });

    it('load = max(keepalive report, own count); end to end the channel sticks', () => {
      const ledger = new StreamLedger();
      const nodes = [node('a'), node('b')];
      const reported: Record<string, number> = { a: 3, b: 1 };
      const candidates = (): MediaCandidate[] => buildCandidates(nodes, { state: () => 'active', reportedStreams: (id) => reported[id], ledger });
      const first = selector.select({ channelId: CH, purpose: 'live', candidates: candidates() });
      assert.equal(first.id, 'b');
      ledger.add({ streamId: 'st-1', nodeId: first.id, channelId: CH, purpose: 'live' });
      for (let i = 0; i < 4; i++) ledger.add({ streamId: `x${i}`, nodeId: 'b', channelId: `ch${i}`, purpose: 'live' });
      assert.deepEqual(candidates().map((x) => x.streams), [3, 5], 'own count exceeds the stale report');
      const again = selector.select({ channelId: CH, purpose: 'live', candidates: candidates(), currentNodeId: ledger.liveStreamOf(CH)?.nodeId });
      assert.equal(again.id, 'b', 'second viewer shares the stream on b');
      assert.equal(selector.select({ channelId: 'new', purpose: 'live', candidates: candidates() }).id, 'a');
    });
  });
}
