// PS muxing against hand-computed bytes (ISO/IEC 13818-1 §2.5.3.3, §2.4.3.7) and the CRC check value.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32Mpeg2, packHeader, pesPackets, programStreamMap, psFrame, readTimestamp, syntheticAccessUnit, systemHeader } from '../src/media/ps.ts';

describe('PS pack header', () => {
  it('SCR 0: the 00 00 01 BA 44 00 04 00 04 01 prefix every GB28181 PS stream starts with', () => {
    assert.equal(packHeader(0).toString('hex'), '000001ba' + '440004000401' + '00ffff' + 'f8');
  });
  it('SCR 3600 (one 25 fps frame): SCR[12..5] = 0x70, SCR[4..0] = 0x10 before the marker', () => {
    assert.equal(packHeader(3600).toString('hex'), '000001ba' + '440004708401' + '00ffff' + 'f8');
  });
  it('SCR above 2^32 keeps its top bits (33-bit field)', () => {
    const b = packHeader(2 ** 32 + 1);
    assert.equal((b[4] as number) & 0x38, 0x20, 'SCR[32..30] = 100');
  });
});

describe('system header and PSM', () => {
  it('system header: header_length 9, rate_bound 0x3FFF between markers, one video stream 0xE0 with a 128 KiB buffer bound', () => {
    assert.equal(systemHeader().toString('hex'), '000001bb' + '0009' + '807fff' + '00' + 'e1' + '7f' + 'e0' + 'e080');
  });
  it('PSM names stream 0xE0 as H.264 (stream_type 0x1B) and its CRC_32 checks', () => {
    const psm = programStreamMap();
    assert.equal(psm.subarray(0, 16).toString('hex'), '000001bc' + '000e' + 'e0ff' + '0000' + '0004' + '1be00000');
    assert.equal(psm.length, 20);
    assert.equal(crc32Mpeg2(psm), 0, 'a CRC-32/MPEG-2 over data + CRC is 0');
  });
  it('CRC-32/MPEG-2 check value', () => {
    assert.equal(crc32Mpeg2(Buffer.from('123456789', 'latin1')), 0x0376e6e7);
  });
});

describe('PES', () => {
  it('PTS 3600 after the 0010 prefix with markers: 21 00 01 1C 21', () => {
    const [header, payload] = pesPackets(Buffer.from([1, 2, 3]), 3600) as [Buffer, Buffer];
    assert.equal(header.toString('hex'), '000001e0' + '000b' + '80' + '80' + '05' + '2100011c21');
    assert.equal(payload.toString('hex'), '010203');
    assert.equal(readTimestamp(header, 9), 3600);
  });
  it('a payload above 65527 bytes spans PES packets; only the first has a PTS', () => {
    const parts = pesPackets(Buffer.alloc(70_000, 0x11), 90_000);
    assert.equal(parts.length, 4);
    const [h1, p1, h2, p2] = parts as [Buffer, Buffer, Buffer, Buffer];
    assert.deepEqual([h1.length, p1.length, h1.readUInt16BE(4)], [14, 65527, 65535]);
    assert.deepEqual([h2.length, p2.length, h2[7], h2.readUInt16BE(4)], [9, 70_000 - 65527, 0x00, 3 + 70_000 - 65527]);
  });
});

describe('frames', () => {
  it('key frame: pack + system header + PSM + PES(SPS, PPS, IDR); P frame: pack + PES(slice)', () => {
    const key = psFrame(syntheticAccessUnit(true, 0, 500), 0, true);
    assert.equal(key.readUInt32BE(0), 0x000001ba);
    assert.equal(key.readUInt32BE(14), 0x000001bb);
    assert.equal(key.readUInt32BE(29), 0x000001bc);
    assert.equal(key.readUInt32BE(49), 0x000001e0);
    assert.equal(key.subarray(63, 68).toString('hex'), '0000000167', 'SPS first');
    const p = psFrame(syntheticAccessUnit(false, 1, 300), 3600, false);
    assert.equal(p.readUInt32BE(14), 0x000001e0);
    assert.equal(p.subarray(28, 33).toString('hex'), '0000000141', 'non-IDR slice');
  });
  it('dummy access units are `size` bytes with no start code but their own', () => {
    for (const key of [true, false]) {
      const au = syntheticAccessUnit(key, 7, 4000);
      assert.equal(au.length, 4000);
      let codes = 0;
      for (let i = 0; i + 3 <= au.length; i++) if (au[i] === 0 && au[i + 1] === 0 && au[i + 2] === 1) codes++;
      assert.equal(codes, key ? 3 : 1);
    }
  });
});
