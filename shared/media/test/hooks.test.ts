// Hook bodies as ZLMediaKit sends them (field names per its web hook documentation, written by hand
// here, not produced by the parser), authentication by node secret, and the replies.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHookHandler, parseHookBody, secretMatches, type HookResult } from '../src/index.ts';

const NODE = 'zlm-a';
const SECRET = '035c73f7-bb6b-4889-a715-d9eb2d1925cc';
const handle = createHookHandler({ lookupNode: (id) => (id === NODE ? { secret: SECRET } : undefined) });
const q = { secret: SECRET };

function ok(r: HookResult): Extract<HookResult, { ok: true }> {
  assert.ok(r.ok, `expected success, got ${r.ok ? '' : r.error.code}`);
  return r;
}

describe('hook parsing', () => {
  it('on_stream_changed regist=true with media info', () => {
    const body = {
      regist: true,
      aliveSecond: 0,
      app: 'rtp',
      bytesSpeed: 0,
      createStamp: 1700000000,
      mediaServerId: NODE,
      originType: 3,
      originTypeStr: 'rtp_push',
      originUrl: '',
      readerCount: 0,
      schema: 'rtsp',
      stream: '34020000001320000001_34020000001310000001',
      totalReaderCount: 2,
      tracks: [{ codec_id: 0, codec_id_name: 'H264', codec_type: 0, ready: true }],
      vhost: '__defaultVhost__',
      hook_index: 7,
    };
    assert.deepEqual(ok(handle('on_stream_changed', body, q)), {
      ok: true,
      httpStatus: 200,
      reply: { code: 0, msg: 'success' },
      event: {
        kind: 'stream_changed',
        mediaServerId: NODE,
        regist: true,
        vhost: '__defaultVhost__',
        app: 'rtp',
        stream: '34020000001320000001_34020000001310000001',
        schema: 'rtsp',
        totalReaderCount: 2,
        originType: 3,
      },
    });
  });

  it('on_stream_changed regist=false carries only the key', () => {
    const e = parseHookBody('on_stream_changed', { regist: false, app: 'rtp', schema: 'rtmp', stream: 's1', vhost: '__defaultVhost__', mediaServerId: NODE });
    assert.deepEqual(e, { kind: 'stream_changed', mediaServerId: NODE, regist: false, vhost: '__defaultVhost__', app: 'rtp', stream: 's1', schema: 'rtmp', totalReaderCount: undefined, originType: undefined });
  });

  it('on_stream_none_reader: reply lets ZLM close by default; the option can refuse', () => {
    const body = { app: 'rtp', mediaServerId: NODE, schema: 'rtsp', stream: 's1', vhost: '__defaultVhost__' };
    const r = ok(handle('on_stream_none_reader', body, q));
    assert.deepEqual(r.reply, { code: 0, msg: 'success', close: true });
    assert.equal(r.event.kind, 'stream_none_reader');
    const keep = createHookHandler({ lookupNode: () => ({ secret: SECRET }), closeWhenNoReader: (e) => e.stream !== 's1' });
    assert.deepEqual(ok(keep('on_stream_none_reader', body, q)).reply, { code: 0, msg: 'success', close: false });
  });

  it('on_rtp_server_timeout: numeric SSRC becomes the 10-digit y= string, 0 means none', () => {
    const body = { local_port: 30012, re_use_port: true, ssrc: 200000001, stream_id: 's1', tcp_mode: 1, mediaServerId: NODE };
    assert.deepEqual(ok(handle('on_rtp_server_timeout', body, q)).event, {
      kind: 'rtp_server_timeout',
      mediaServerId: NODE,
      streamId: 's1',
      localPort: 30012,
      tcpMode: 1,
      reUsePort: true,
      ssrc: '0200000001',
    });
    const any = parseHookBody('on_rtp_server_timeout', { ...body, ssrc: 0 });
    assert.equal(any.kind === 'rtp_server_timeout' && any.ssrc, undefined);
  });

  it('on_server_keepalive: numeric stats kept, stream count from MultiMediaSourceMuxer', () => {
    const body = { data: { Buffer: 12, MediaSource: 8, MultiMediaSourceMuxer: 4, RtpPacket: 90, Socket: 66, note: 'x' }, mediaServerId: NODE };
    const e = ok(handle('on_server_keepalive', body, q)).event;
    assert.deepEqual(e, { kind: 'server_keepalive', mediaServerId: NODE, stats: { Buffer: 12, MediaSource: 8, MultiMediaSourceMuxer: 4, RtpPacket: 90, Socket: 66 }, streams: 4 });
  });

  it('on_publish: reply accepts with stream options (default, then caller-chosen)', () => {
    const body = { app: 'rtp', id: '140259799100960', ip: '10.0.0.50', params: '', port: 55040, schema: 'rtp', stream: 's1', vhost: '__defaultVhost__', mediaServerId: NODE };
    const r = ok(handle('on_publish', body, q));
    assert.deepEqual(r.reply, { code: 0, msg: 'success', enable_audio: true, enable_mp4: false });
    assert.deepEqual(r.event, { kind: 'publish', mediaServerId: NODE, vhost: '__defaultVhost__', app: 'rtp', stream: 's1', schema: 'rtp', ip: '10.0.0.50', port: 55040, params: '', id: '140259799100960' });
    const custom = createHookHandler({ lookupNode: () => ({ secret: SECRET }), publishReply: () => ({ enable_hls: true, code: 99 }) });
    assert.deepEqual(ok(custom('on_publish', body, q)).reply, { enable_hls: true, code: 0, msg: 'success' }, 'code cannot be overridden');
  });

  it('on_server_started: configuration dictionary; sender id from general.mediaServerId', () => {
    const body = { 'general.mediaServerId': NODE, 'http.port': '80', 'rtp_proxy.port_range': '30000-35000', 'api.apiDebug': 1 };
    assert.deepEqual(ok(handle('on_server_started', body, q)).event, {
      kind: 'server_started',
      mediaServerId: NODE,
      config: { 'general.mediaServerId': NODE, 'http.port': '80', 'rtp_proxy.port_range': '30000-35000', 'api.apiDebug': '1' },
    });
  });

  it('accepts the string forms some ZLM versions send', () => {
    const e = parseHookBody('on_rtp_server_timeout', { local_port: '30000', re_use_port: '0', ssrc: '1200000009', stream_id: 's', tcp_mode: '2', mediaServerId: NODE });
    assert.deepEqual(e, { kind: 'rtp_server_timeout', mediaServerId: NODE, streamId: 's', localPort: 30000, tcpMode: 2, reUsePort: false, ssrc: '1200000009' });
  });
});

describe('hook authentication and refusals', () => {
  const body = { regist: true, app: 'rtp', stream: 's', schema: 'rtsp', vhost: '__defaultVhost__', mediaServerId: NODE };

  const refused = (r: HookResult, status: number, code: string, zlmCode: number): void => {
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.deepEqual([r.httpStatus, r.error.code, r.reply.code, r.event], [status, code, zlmCode, null]);
  };

  it('unknown hook name → 404 MEDIA_ERR_HOOK_UNKNOWN', () => refused(handle('on_play', body, q), 404, 'MEDIA_ERR_HOOK_UNKNOWN', -1));
  it('unknown node → 401', () => refused(handle('on_stream_changed', { ...body, mediaServerId: 'other' }, q), 401, 'MEDIA_ERR_HOOK_AUTH', -100));
  it('missing secret → 401', () => refused(handle('on_stream_changed', body, {}), 401, 'MEDIA_ERR_HOOK_AUTH', -100));
  it('wrong secret → 401', () => refused(handle('on_stream_changed', body, { secret: `${SECRET}x` }), 401, 'MEDIA_ERR_HOOK_AUTH', -100));
  it('repeated secret (array) → 401', () => refused(handle('on_stream_changed', body, { secret: [SECRET, SECRET] }), 401, 'MEDIA_ERR_HOOK_AUTH', -100));
  it('no mediaServerId → 400', () => refused(handle('on_stream_changed', { ...body, mediaServerId: undefined }, q), 400, 'MEDIA_ERR_HOOK_BODY', -300));
  it('authenticated but malformed → 400', () => refused(handle('on_stream_changed', { ...body, regist: 'maybe' }, q), 400, 'MEDIA_ERR_HOOK_BODY', -300));
  it('auth is checked before the body (bad secret and bad body → 401)', () =>
    refused(handle('on_stream_changed', { mediaServerId: NODE }, { secret: 'nope' }), 401, 'MEDIA_ERR_HOOK_AUTH', -100));
  it('a publish from an unauthenticated sender is refused (non-zero code)', () =>
    refused(handle('on_publish', { app: 'live', stream: 'x', mediaServerId: NODE }, { secret: 'guess' }), 401, 'MEDIA_ERR_HOOK_AUTH', -100));

  it('secretMatches never accepts an empty configured secret or non-strings', () => {
    assert.equal(secretMatches('', ''), false);
    assert.equal(secretMatches('s', undefined), false);
    assert.equal(secretMatches('s', 1), false);
    assert.equal(secretMatches('s', 's'), true);
  });
});
