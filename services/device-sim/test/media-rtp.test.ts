// RTP header bytes (RFC 3550 §5.1), frame packetisation, RFC 4571 framing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { frameRfc4571, packetizeFrame, parseRtpHeader, Rfc4571Deframer, rtpHeader } from '../src/media/rtp.ts';

describe('RTP', () => {
  it('header: V=2, marker + PT 96, sequence, timestamp, SSRC big-endian (340200001 = 0x14470A41)', () => {
    const h = rtpHeader({ payloadType: 96, marker: true, sequence: 0x1234, timestamp: 0x01020304, ssrc: 340200001 });
    assert.equal(h.toString('hex'), '80e0' + '1234' + '01020304' + '14470a41');
    assert.deepEqual(parseRtpHeader(h), { payloadType: 96, marker: true, sequence: 0x1234, timestamp: 0x01020304, ssrc: 340200001, payload: Buffer.alloc(0) });
  });

  it('a frame becomes ceil(size / max) packets, marker on the last, sequence wrapping at 16 bits', () => {
    const state = { ssrc: 1, payloadType: 96, sequence: 0xfffe };
    const packets = packetizeFrame(Buffer.alloc(3000, 7), 900, state, 1400);
    assert.equal(packets.length, 3);
    const headers = packets.map((p) => parseRtpHeader(p) ?? assert.fail('not RTP'));
    assert.deepEqual(headers.map((h) => [h.sequence, h.marker, h.timestamp, h.payload.length]), [
      [0xfffe, false, 900, 1400],
      [0xffff, false, 900, 1400],
      [0, true, 900, 200],
    ]);
    assert.equal(state.sequence, 1);
  });

  it('parseRtpHeader refuses short input and other versions', () => {
    assert.equal(parseRtpHeader(Buffer.alloc(11)), undefined);
    assert.equal(parseRtpHeader(Buffer.from('40e000000000000000000000', 'hex')), undefined);
  });
});

describe('RFC 4571', () => {
  it('2-byte big-endian length prefix; the deframer reassembles across arbitrary chunks', () => {
    const a = frameRfc4571(Buffer.from('aaaa', 'hex'));
    const b = frameRfc4571(Buffer.alloc(300, 0xbb));
    assert.equal(a.toString('hex'), '0002aaaa');
    const stream = Buffer.concat([a, b]);
    const d = new Rfc4571Deframer();
    const out = [stream.subarray(0, 1), stream.subarray(1, 5), stream.subarray(5, 100), stream.subarray(100)].flatMap((c) => d.push(c));
    assert.deepEqual(out.map((p) => p.length), [2, 300]);
  });
});
