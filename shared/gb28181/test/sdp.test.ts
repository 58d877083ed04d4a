// SDP offers, SSRC / Subject helpers and SDP refusals. Expected texts are written out by hand.
import assert from 'node:assert/strict';
import {
  buildDownloadOffer,
  buildSdp,
  buildPlayOffer,
  buildPlaybackOffer,
  buildSubject,
  describeSdp,
  formatMediaFormat,
  parseMediaFormat,
  parseSdp,
  parseSubject,
  ssrcIsValid,
  ssrcToHex,
  ssrcToRtp,
} from '../src/index.ts';
import { sample, test, throwsGb } from './support.ts';

const crlf = (lines: string[]): string => lines.map((l) => `${l}\r\n`).join('');
// 2024-01-01T00:00:00+08:00 = 2023-12-31T16:00:00Z = 1704038400 s
const START = new Date(Date.UTC(2023, 11, 31, 16, 0, 0));
const END = new Date(Date.UTC(2023, 11, 31, 17, 0, 0)); // 1704042000 s

test('Play offer over UDP reproduces the platform offer captured in sample 12, plus the f= line SPEC §8 asks for', () => {
  const text = buildPlayOffer({ ownerId: '34020000001310000001', address: '127.0.0.1', port: 30000, ssrc: '0100000001' });
  // The captured platform sent no f=; ours always does (the full syntax with no field stated by default).
  assert.equal(text, crlf([...sample('12', 0).body.split('\n').filter((l) => l !== ''), 'f=v/////a///']));
});

test('every offer carries f= (live, playback, download), and an explicit empty one stays empty', () => {
  const base = { ownerId: '34020000002000000001', address: '10.0.0.5', port: 10000, ssrc: '0200000007' };
  const history = { ...base, channelId: '34020000001310000001', start: START, end: END };
  for (const text of [buildPlayOffer(base), buildPlaybackOffer(history), buildDownloadOffer({ ...history, downloadSpeed: 2 })]) {
    const sdp = parseSdp(text);
    assert.equal(sdp.format, 'v/////a///');
    assert.deepEqual(parseMediaFormat(sdp.format ?? ''), {
      video: { codec: '', resolution: '', frameRate: '', rateType: '', bitRate: '' },
      audio: { codec: '', bitRate: '', sampleRate: '' },
    });
  }
  assert.match(buildPlayOffer({ ...base, format: '' }), /\r\nf=\r\n$/);
});

test('Play offer, TCP passive (platform listens), with f=', () => {
  const text = buildPlayOffer({
    ownerId: '34020000002000000001',
    address: '10.0.0.5',
    port: 10000,
    ssrc: '0200000007',
    transport: 'tcp-passive',
    payloads: [{ payloadType: 96, encoding: 'PS', clockRate: 90000 }],
    format: 'v/2/6///a///',
  });
  assert.equal(
    text,
    crlf([
      'v=0',
      'o=34020000002000000001 0 0 IN IP4 10.0.0.5',
      's=Play',
      'c=IN IP4 10.0.0.5',
      't=0 0',
      'm=video 10000 TCP/RTP/AVP 96',
      'a=recvonly',
      'a=rtpmap:96 PS/90000',
      'a=setup:passive',
      'a=connection:new',
      'y=0200000007',
      'f=v/2/6///a///',
    ]),
  );
});

test('Playback offer: s=Playback, u=<channel>:0, t= in epoch seconds, TCP active', () => {
  const text = buildPlaybackOffer({
    ownerId: '34020000002000000001',
    address: '192.168.1.10',
    port: 30002,
    ssrc: '1200000002',
    transport: 'tcp-active',
    channelId: '34020000001310000001',
    start: START,
    end: END,
  });
  assert.equal(
    text,
    crlf([
      'v=0',
      'o=34020000002000000001 0 0 IN IP4 192.168.1.10',
      's=Playback',
      'u=34020000001310000001:0',
      'c=IN IP4 192.168.1.10',
      't=1704038400 1704042000',
      'm=video 30002 TCP/RTP/AVP 96 97 98',
      'a=recvonly',
      'a=rtpmap:96 PS/90000',
      'a=rtpmap:97 MPEG4/90000',
      'a=rtpmap:98 H264/90000',
      'a=setup:active',
      'a=connection:new',
      'y=1200000002',
      'f=v/////a///',
    ]),
  );
});

test('Download offer: s=Download and a=downloadspeed', () => {
  const text = buildDownloadOffer({
    ownerId: '34020000002000000001',
    address: '192.168.1.10',
    port: 30004,
    ssrc: '1200000003',
    channelId: '34020000001310000001',
    start: START,
    end: END,
    downloadSpeed: 4,
  });
  assert.equal(
    text,
    crlf([
      'v=0',
      'o=34020000002000000001 0 0 IN IP4 192.168.1.10',
      's=Download',
      'u=34020000001310000001:0',
      'c=IN IP4 192.168.1.10',
      't=1704038400 1704042000',
      'm=video 30004 RTP/AVP 96 97 98',
      'a=recvonly',
      'a=rtpmap:96 PS/90000',
      'a=rtpmap:97 MPEG4/90000',
      'a=rtpmap:98 H264/90000',
      'a=downloadspeed:4',
      'y=1200000003',
      'f=v/////a///',
    ]),
  );
  assert.equal(describeSdp(parseSdp(text)).downloadSpeed, '4');
});

test('offer builders refuse bad arguments', () => {
  const base = { ownerId: '34020000002000000001', address: '10.0.0.5', port: 10000, ssrc: '0200000007' };
  throwsGb(() => buildPlayOffer({ ...base, ssrc: '34020000001320000001' }), 'GB_ERR_ARGUMENT');
  throwsGb(() => buildPlayOffer({ ...base, port: 70000 }), 'GB_ERR_ARGUMENT');
  const hist = { ...base, ssrc: '1200000002', channelId: '34020000001310000001', start: END, end: START };
  throwsGb(() => buildPlaybackOffer(hist), 'GB_ERR_ARGUMENT');
  throwsGb(() => buildDownloadOffer({ ...hist, start: START, end: END, downloadSpeed: 0 }), 'GB_ERR_ARGUMENT');
});

test('describeSdp of a TCP answer reports transport and setup', () => {
  const answer = crlf([
    'v=0',
    'o=34020000001320000001 0 0 IN IP4 10.0.0.9',
    's=Play',
    'c=IN IP4 10.0.0.9',
    't=0 0',
    'm=video 15060 TCP/RTP/AVP 96',
    'a=sendonly',
    'a=rtpmap:96 PS/90000',
    'a=setup:active',
    'a=connection:new',
    'y=0200000007',
  ]);
  const d = describeSdp(parseSdp(answer));
  assert.deepEqual([d.transport, d.setup, d.direction, d.address, d.port], ['tcp', 'active', 'sendonly', '10.0.0.9', 15060]);
});

test('y= and f= are captured at media level too; unknown lines survive a round trip', () => {
  const sdp = parseSdp('v=0\no=a 1 1 IN IP4 1.2.3.4\ns=Play\ni=info\nt=0 0\nm=video 9 RTP/AVP 96\nb=AS:2048\nc=IN IP4 1.2.3.4\ny=0000000001\nf=\n');
  assert.equal(sdp.ssrc, '0000000001');
  assert.equal(sdp.format, '');
  assert.deepEqual(sdp.lines, [{ type: 'i', value: 'info' }]);
  assert.deepEqual(sdp.media[0]?.lines, [{ type: 'b', value: 'AS:2048' }]);
  assert.deepEqual(sdp.media[0]?.connection, { netType: 'IN', addrType: 'IP4', address: '1.2.3.4' });
  assert.deepEqual(parseSdp(buildSdp(sdp)), sdp);
});

test('malformed SDP is refused with GB_ERR_SDP', () => {
  const ok = ['v=0', 'o=a 0 0 IN IP4 1.2.3.4', 's=Play', 't=0 0', 'm=video 9 RTP/AVP 96'];
  const without = (prefix: string): string => ok.filter((l) => !l.startsWith(prefix)).join('\n');
  throwsGb(() => parseSdp(without('o=')), 'GB_ERR_SDP');
  throwsGb(() => parseSdp(without('s=')), 'GB_ERR_SDP');
  throwsGb(() => parseSdp(without('m=')), 'GB_ERR_SDP');
  throwsGb(() => parseSdp([...ok.slice(0, 4), 'm=video 70000 RTP/AVP 96'].join('\n')), 'GB_ERR_SDP');
  throwsGb(() => parseSdp([...ok, 'y=1', 'y=2'].join('\n')), 'GB_ERR_SDP');
  throwsGb(() => parseSdp([...ok, 'garbage'].join('\n')), 'GB_ERR_SDP');
  throwsGb(() => parseSdp(['v=0', 'o=a 0 0 IN IP4', 's=Play', 'm=video 9 RTP/AVP 96'].join('\n')), 'GB_ERR_SDP');
  throwsGb(() => parseSdp([...ok.slice(0, 3), 't=now later', ok[4] as string].join('\n')), 'GB_ERR_SDP');
  throwsGb(() => parseSdp('v=0\n'.repeat(5000)), 'GB_ERR_TOO_LARGE');
});

test('SSRC helpers', () => {
  assert.equal(ssrcIsValid('0100000001'), true);
  assert.equal(ssrcIsValid('100000001'), false); // 9 digits
  assert.equal(ssrcIsValid('9999999999'), false); // > 2^32 - 1
  assert.equal(ssrcIsValid(undefined), false);
  assert.equal(ssrcToRtp('0100000001'), 100000001);
  assert.equal(ssrcToHex('0100000001'), '05F5E101'); // 100000001 = 0x05F5E101
  throwsGb(() => ssrcToRtp('34020000001320000001'), 'GB_ERR_SDP');
});

test('Subject header value (sample 12, 16)', () => {
  assert.deepEqual(parseSubject('34020000001310000001:0100000001,34020000002000000001:0'), {
    senderId: '34020000001310000001',
    senderStream: '0100000001',
    receiverId: '34020000002000000001',
    receiverStream: '0',
  });
  const s = { senderId: '34020000001310000001', senderStream: '0000120000', receiverId: '34020000002000000001', receiverStream: '0' };
  assert.equal(buildSubject(s), '34020000001310000001:0000120000,34020000002000000001:0');
  throwsGb(() => parseSubject('nonsense'), 'GB_ERR_SDP');
});

test('f= line format and parse', () => {
  const f = { video: { codec: '2', resolution: '6', frameRate: '25', rateType: '1', bitRate: '4096' }, audio: { codec: '1', bitRate: '64', sampleRate: '8' } };
  assert.equal(formatMediaFormat(f), 'v/2/6/25/1/4096a/1/64/8');
  assert.deepEqual(parseMediaFormat('v/2/6/25/1/4096a/1/64/8'), f);
  throwsGb(() => parseMediaFormat('v/2/6'), 'GB_ERR_SDP');
});
