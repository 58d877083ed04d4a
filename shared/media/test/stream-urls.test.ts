// Play URLs per ZLMediaKit's URL rules, checked against hand-written expectations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { streamUrls } from '../src/index.ts';

describe('stream URLs', () => {
  it('every protocol for app rtp', () => {
    const node = { streamIp: '192.168.1.20', httpPort: 8080, rtspPort: 554, rtmpPort: 1935 };
    assert.deepEqual(streamUrls(node, '34020000001320000001_34020000001310000001'), {
      flv: 'http://192.168.1.20:8080/rtp/34020000001320000001_34020000001310000001.live.flv',
      wsFlv: 'ws://192.168.1.20:8080/rtp/34020000001320000001_34020000001310000001.live.flv',
      hls: 'http://192.168.1.20:8080/rtp/34020000001320000001_34020000001310000001/hls.m3u8',
      fmp4: 'http://192.168.1.20:8080/rtp/34020000001320000001_34020000001310000001.live.mp4',
      rtsp: 'rtsp://192.168.1.20:554/rtp/34020000001320000001_34020000001310000001',
      rtmp: 'rtmp://192.168.1.20:1935/rtp/34020000001320000001_34020000001310000001',
      webrtc: 'http://192.168.1.20:8080/index/api/webrtc?app=rtp&stream=34020000001320000001_34020000001310000001&type=play',
    });
  });

  it('IPv6 hosts are bracketed; odd stream ids are escaped; other apps', () => {
    const u = streamUrls({ streamIp: 'fd00::20', httpPort: 80, rtspPort: 8554, rtmpPort: 1935 }, 'a b/c', 'live');
    assert.equal(u.flv, 'http://[fd00::20]:80/live/a%20b%2Fc.live.flv');
    assert.equal(u.rtsp, 'rtsp://[fd00::20]:8554/live/a%20b%2Fc');
    assert.equal(u.webrtc, 'http://[fd00::20]:80/index/api/webrtc?app=live&stream=a+b%2Fc&type=play');
  });
});
