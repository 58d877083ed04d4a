import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { streamUrls } from '@vms/media';
import type { MediaStream } from './media-session.types.ts';
import { MediaSessionTable } from './media-sessions.ts';

const node = { streamIp: '10.0.0.5', httpPort: 80, rtspPort: 554, rtmpPort: 1935 };
const stream = (streamId: string, purpose: MediaStream['purpose'], channelId = '34020000001310000001'): MediaStream => ({
  streamId,
  purpose,
  deviceId: '34020000001320000001',
  channelId,
  nodeId: 'zlm-1',
  ssrc: '0200000001',
  allocatedSsrc: '0200000001',
  mode: 'udp',
  rtpPort: 30000,
  urls: streamUrls(node, streamId),
  state: 'established',
  callId: null,
  createdAt: 0,
  range: null,
  speed: 1,
  rtspSeq: 0,
  endOfFile: false,
});

describe('MediaSessionTable', () => {
  it('shares a live stream between sessions; the stream is last-detached with its final session', () => {
    const t = new MediaSessionTable();
    t.addStream(stream('s1', 'live'));
    assert.equal(t.attach({ sessionId: 'a', streamId: 's1', createdAt: 1 }), 1);
    assert.equal(t.attach({ sessionId: 'b', streamId: 's1', createdAt: 2 }), 2);
    assert.equal(t.liveStreamOf('34020000001310000001')?.streamId, 's1');
    assert.deepEqual([t.detach('a')?.last, t.viewers('s1')], [false, 1]);
    assert.equal(t.detach('a'), null, 'a session stops once');
    assert.deepEqual(t.detach('b')?.last, true);
    assert.deepEqual(t.removeStream('s1'), []);
    assert.equal(t.liveStreamOf('34020000001310000001'), undefined);
    assert.deepEqual([t.streamCount, t.sessionCount], [0, 0]);
  });

  it('finds streams by Call-ID and ends every session of a removed stream', () => {
    const t = new MediaSessionTable();
    t.addStream(stream('pb', 'playback'));
    t.attach({ sessionId: 'x', streamId: 'pb', createdAt: 0 });
    t.setCallId('pb', 'call-1@h');
    assert.equal(t.streamByCallId('call-1@h')?.streamId, 'pb');
    assert.equal(t.liveStreamOf('34020000001310000001'), undefined, 'playback is never the live stream');
    assert.deepEqual(t.removeStream('pb'), ['x']);
    assert.equal(t.streamByCallId('call-1@h'), undefined);
    assert.equal(t.session('x'), undefined);
  });

  it('refuses a duplicate stream id and sessions on unknown streams', () => {
    const t = new MediaSessionTable();
    t.addStream(stream('s1', 'live'));
    assert.throws(() => t.addStream(stream('s1', 'live')));
    assert.throws(() => t.attach({ sessionId: 'a', streamId: 'nope', createdAt: 0 }));
  });
});
