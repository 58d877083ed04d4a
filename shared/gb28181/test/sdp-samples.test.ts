// Conformance on every captured SDP body: offers and the three device answers of 12, the SPVMN
// templates of 14 (placeholders filled by hand, y=/f= appended as the tool does), VAG's f= line (16),
// SPVMN's own SSRC (17) and its empty f= (18). Expectations read off the captures by hand.
import assert from 'node:assert/strict';
import { buildSdp, describeSdp, makeSsrc, parseMediaFormat, parseSdp, parseSsrc, ssrcIsValid, type GbSdp } from '../src/index.ts';
import { fillTemplate } from './samples.ts';
import { allSamples, sample, test } from './support.ts';

const sdpOf = (prefix: string, index: number): GbSdp => parseSdp(sample(prefix, index).bytes);
const IN_LOCAL = { netType: 'IN', addrType: 'IP4', address: '127.0.0.1' };
const RTPMAPS_96_97_98 = [
  { name: 'rtpmap', value: '96 PS/90000' },
  { name: 'rtpmap', value: '97 MPEG4/90000' },
  { name: 'rtpmap', value: '98 H264/90000' },
];
/** index.js of the SPVMN tool appends these to its RealTime / History templates (header of 14). */
const SPVMN_TAIL = '\ny=0100000001\nf=';

test('every captured SDP body parses, and build -> parse is the identity on it', () => {
  const bodies = allSamples().filter((s) => s.kind === 'sdp');
  assert.equal(bodies.length, 10);
  for (const s of bodies) {
    const text = s.file.startsWith('14-') ? fillTemplate(s.body) + SPVMN_TAIL : s.body;
    const sdp = parseSdp(text);
    assert.deepEqual(parseSdp(buildSdp(sdp)), sdp, `${s.file} #${s.index}`);
    assert.deepEqual(parseSdp(text.replace(/\n/g, '\r\n')), sdp, `${s.file} #${s.index} with CRLF`);
  }
});

test('12 platform offer: y= SSRC kept as a 10-digit string, attributes in order', () => {
  assert.deepEqual(sdpOf('12', 0), {
    version: '0',
    origin: { username: '34020000001310000001', sessionId: '0', sessionVersion: '0', ...IN_LOCAL },
    sessionName: 'Play',
    connection: IN_LOCAL,
    timing: { start: '0', stop: '0' },
    attributes: [],
    media: [
      { type: 'video', port: 30000, protocol: 'RTP/AVP', formats: ['96', '97', '98'], attributes: [{ name: 'recvonly' }, ...RTPMAPS_96_97_98] },
    ],
    ssrc: '0100000001',
  });
});

test('12 Ellean answer: its own device id in y= (invalid SSRC), a=recvonly in an answer', () => {
  const d = describeSdp(sdpOf('12', 1));
  assert.equal(d.ssrc, '34020000001320000001');
  assert.equal(d.ssrcValid, false);
  assert.equal(d.direction, 'recvonly');
  assert.deepEqual(
    d.payloads.map((p) => p.payloadType),
    [96, 98, 97],
  );
});

test('12 sbgb28181 answer: sendonly, a=filesize:0, SSRC echoed', () => {
  const d = describeSdp(sdpOf('12', 2));
  assert.deepEqual(d, {
    ownerId: '34020000001320000009',
    sessionName: 'Play',
    address: '127.0.0.1',
    port: 30000,
    protocol: 'RTP/AVP',
    transport: 'udp',
    direction: 'sendonly',
    payloads: [{ payloadType: 96, encoding: 'PS', clockRate: 90000 }],
    ssrc: '0100000001',
    ssrcValid: true,
    fileSize: '0',
    start: '0',
    stop: '0',
  });
});

test('12 445990772 answer: blank lines between fields, m=video 0 (no stream)', () => {
  const sdp = sdpOf('12', 3);
  assert.equal(sdp.media[0]?.port, 0);
  assert.deepEqual(sdp.media[0]?.attributes, [{ name: 'rtpmap', value: '96 PS/90000' }, { name: 'sendonly' }]);
  assert.equal(sdp.ssrc, '0100000001');
});

test('14 SPVMN History template: s=Playback, u=<channel>:3, t= range, y= and empty f=', () => {
  const sdp = parseSdp(fillTemplate(sample('14', 16).body) + SPVMN_TAIL);
  assert.equal(sdp.sessionName, 'Playback');
  assert.equal(sdp.uri, '34020000001310000001:3');
  assert.deepEqual(sdp.timing, { start: '1289475977', stop: '1289562377' });
  assert.equal(sdp.ssrc, '0100000001');
  assert.equal(sdp.format, '');
  const d = describeSdp(sdp);
  assert.equal(d.channelId, '34020000001310000001');
  assert.equal(d.port, 30002);
  const realtime = parseSdp(fillTemplate(sample('14', 15).body) + SPVMN_TAIL);
  assert.deepEqual(realtime.media[0]?.formats, ['96', '98', '97']);
  assert.deepEqual(realtime.media[0]?.attributes[0], { name: 'recvonly' });
});

test('16 VAG offer: f=v/2/4///a/// = H.264, D1, nothing else stated', () => {
  const sdp = sdpOf('16', 7);
  assert.equal(sdp.ssrc, '0000120000');
  assert.equal(sdp.format, 'v/2/4///a///');
  assert.deepEqual(parseMediaFormat(sdp.format ?? ''), {
    video: { codec: '2', resolution: '4', frameRate: '', rateType: '', bitRate: '' },
    audio: { codec: '', bitRate: '', sampleRate: '' },
  });
});

test('17 SPVMN answer uses its own SSRC, derived from domain 3402000000 as the standard says', () => {
  const offer = sdpOf('17', 7);
  const answer = sdpOf('17', 8);
  assert.equal(offer.ssrc, '0100000001');
  assert.equal(answer.ssrc, '0200000001');
  assert.equal(answer.origin.username, '64010000002020000001');
  assert.equal(answer.media[0]?.port, 5000);
  assert.deepEqual(parseSsrc('0200000001'), { history: false, domainPart: '20000', sequence: 1 });
  // digits 4-8 of 3402000000 are 2,0,0,0,0
  assert.equal(makeSsrc({ history: false, domain: '3402000000', sequence: 1 }), '0200000001');
  assert.ok(ssrcIsValid(answer.ssrc));
});

test('18 SPVMN offer: o= media server id 34020000002020000001, y= then empty f=', () => {
  const sdp = sdpOf('18', 6);
  assert.equal(sdp.origin.username, '34020000002020000001');
  assert.equal(sdp.ssrc, '0100000001');
  assert.equal(sdp.format, '');
  assert.equal(parseMediaFormat(''), undefined);
  assert.ok(buildSdp(sdp).endsWith('y=0100000001\r\nf=\r\n'));
});
