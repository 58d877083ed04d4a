// The upstream's live-view offer (GB/T 28181-2016 §9.2) and our answer. Offers are written by hand
// the way upstream platforms send them (sample-style CRLF SDP); expectations are hand-checked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSdp } from '@vms/gb28181';
import { CascadeError } from '../errors.ts';
import { buildUpstreamAnswer, readUpstreamOffer } from './upstream-offer.ts';

const sdp = (lines: string[]): string => lines.map((l) => `${l}\r\n`).join('');
const UDP_OFFER = sdp([
  'v=0',
  'o=34010000002000000001 0 0 IN IP4 192.168.1.20',
  's=Play',
  'c=IN IP4 192.168.1.20',
  't=0 0',
  'm=video 30000 RTP/AVP 96 98 97',
  'a=recvonly',
  'a=rtpmap:96 PS/90000',
  'a=rtpmap:98 H264/90000',
  'a=rtpmap:97 MPEG4/90000',
  'y=0100000001',
]);

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CascadeError, String(err));
    return err.code;
  }
  assert.fail('did not throw');
}

describe('upstream live-view offer', () => {
  it('UDP: address, port, SSRC and the PS payload type', () => {
    assert.deepEqual(readUpstreamOffer(UDP_OFFER), { purpose: 'live', address: '192.168.1.20', port: 30000, transport: 'udp', ssrc: '0100000001', payloadType: 96 });
  });

  it('TCP with the upstream listening (setup:passive) → tcp; media-level c= wins', () => {
    const offer = sdp([
      'v=0',
      'o=34010000002000000001 0 0 IN IP4 10.0.0.1',
      's=Play',
      'c=IN IP4 10.0.0.1',
      't=0 0',
      'm=video 40002 TCP/RTP/AVP 100',
      'c=IN IP4 10.0.0.9',
      'a=recvonly',
      'a=rtpmap:100 PS/90000',
      'a=setup:passive',
      'a=connection:new',
      'y=0340100002',
    ]);
    assert.deepEqual(readUpstreamOffer(offer), { purpose: 'live', address: '10.0.0.9', port: 40002, transport: 'tcp', ssrc: '0340100002', payloadType: 100 });
  });

  it('Playback and Download (§9.8, §9.9): the t= range and a=downloadspeed; the answer echoes s= and t=', () => {
    // 1704038400 = 2024-01-01T00:00:00+08:00
    const playback = UDP_OFFER.replace('s=Play', 's=Playback\r\nu=34020000001310000001:0').replace('t=0 0', 't=1704038400 1704042000').replace('y=0100000001', 'y=1100000001');
    const p = readUpstreamOffer(playback);
    assert.deepEqual([p.purpose, p.range?.start.toISOString(), p.range?.end.toISOString(), p.ssrc], ['playback', '2023-12-31T16:00:00.000Z', '2023-12-31T17:00:00.000Z', '1100000001']);
    const answer = parseSdp(buildUpstreamAnswer({ channelId: '34020000001310000001', address: '10.1.1.5', port: 10002, offer: p }));
    assert.deepEqual([answer.sessionName, answer.timing], ['Playback', { start: '1704038400', stop: '1704042000' }]);
    const download = readUpstreamOffer(playback.replace('s=Playback', 's=Download').replace('a=recvonly', 'a=recvonly\r\na=downloadspeed:4'));
    assert.deepEqual([download.purpose, download.downloadSpeed], ['download', 4]);
    assert.equal(codeOf(() => readUpstreamOffer(playback.replace('t=1704038400 1704042000', 't=0 0'))), 'CASCADE_ERR_BAD_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer(playback.replace('t=1704038400 1704042000', 't=1704042000 1704038400'))), 'CASCADE_ERR_BAD_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer(playback.replace('s=Playback', 's=Download').replace('a=recvonly', 'a=recvonly\r\na=downloadspeed:99'))), 'CASCADE_ERR_BAD_OFFER');
  });

  it('refuses what cannot be read (400) and what is not served (488)', () => {
    assert.equal(codeOf(() => readUpstreamOffer('')), 'CASCADE_ERR_BAD_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer('garbage')), 'CASCADE_ERR_BAD_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer(UDP_OFFER.replace('y=0100000001', 'y=34010000002000000001'))), 'CASCADE_ERR_BAD_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer(UDP_OFFER.replace('y=0100000001\r\n', ''))), 'CASCADE_ERR_BAD_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer(UDP_OFFER.replace('m=video 30000', 'm=video 0'))), 'CASCADE_ERR_BAD_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer(UDP_OFFER.replaceAll('IN IP4 192.168.1.20', 'IN IP4 0.0.0.0'))), 'CASCADE_ERR_BAD_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer(UDP_OFFER.replace('s=Play', 's=Talk'))), 'CASCADE_ERR_UNSUPPORTED_OFFER');
    assert.equal(codeOf(() => readUpstreamOffer(UDP_OFFER.replace('a=recvonly', 'a=sendonly'))), 'CASCADE_ERR_UNSUPPORTED_OFFER');
    assert.equal(
      codeOf(() => readUpstreamOffer(UDP_OFFER.replace('RTP/AVP 96 98 97', 'TCP/RTP/AVP 96').replace('a=recvonly', 'a=recvonly\r\na=setup:active'))),
      'CASCADE_ERR_UNSUPPORTED_OFFER',
    );
    assert.equal(codeOf(() => readUpstreamOffer(UDP_OFFER.replace('a=rtpmap:96 PS/90000\r\n', '').replace(' 96 98 97', ' 98 97'))), 'CASCADE_ERR_UNSUPPORTED_OFFER');
  });

  it('answer: s=Play from the media node, sendonly PS, the upstream y=; TCP answers setup:active', () => {
    const offer = readUpstreamOffer(UDP_OFFER);
    const answer = buildUpstreamAnswer({ channelId: '34020000001310000001', address: '10.1.1.5', port: 10002, offer });
    assert.equal(
      answer,
      sdp([
        'v=0',
        'o=34020000001310000001 0 0 IN IP4 10.1.1.5',
        's=Play',
        'c=IN IP4 10.1.1.5',
        't=0 0',
        'm=video 10002 RTP/AVP 96',
        'a=sendonly',
        'a=rtpmap:96 PS/90000',
        'y=0100000001',
      ]),
    );
    const tcp = buildUpstreamAnswer({ channelId: '34020000001310000001', address: '10.1.1.5', port: 10004, offer: { ...offer, transport: 'tcp' } });
    const parsed = parseSdp(tcp);
    assert.equal(parsed.media[0]?.protocol, 'TCP/RTP/AVP');
    assert.deepEqual(parsed.media[0]?.attributes.map((a) => `${a.name}:${a.value ?? ''}`), ['sendonly:', 'rtpmap:96 PS/90000', 'setup:active', 'connection:new']);
  });
});
