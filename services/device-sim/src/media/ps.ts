// MPEG-2 Program Stream muxing (ISO/IEC 13818-1 §2.5.3), the stream format GB/T 28181 carries in RTP
// (Annex C): every frame is a pack header; key frames add a system header and a program stream map
// naming H.264 (stream_type 0x1B) as stream 0xE0; then PES packets with the frame's Annex-B NAL units.
// Pure functions: the bytes depend only on the arguments.

export const PACK_START_CODE = 0x000001ba;
export const SYSTEM_HEADER_START_CODE = 0x000001bb;
export const PSM_START_CODE = 0x000001bc;
/** §2.4.3.7 Table 2-22: video stream number 0. */
export const VIDEO_STREAM_ID = 0xe0;
/** §2.4.4.9 Table 2-34 (amended): AVC video (ITU-T H.264). */
export const STREAM_TYPE_H264 = 0x1b;
/** program_mux_rate in units of 50 bytes/s (§2.5.3.4): 0x3fff ≈ 6.5 Mbit/s, comfortably above our bit rate. */
const MUX_RATE = 0x3fff;
/** PES_packet_length is 16 bits; 8 header bytes follow it (flags 3 + PTS 5) before the payload. */
const PES_HEADER_AFTER_LENGTH = 8;
const MAX_PES_PAYLOAD = 0xffff - PES_HEADER_AFTER_LENGTH;
const TWO_POW_30 = 2 ** 30;
const MAX_33_BITS = 2 ** 33;

/** §2.5.3.3: 14 bytes, SCR = `scr90k` (33 bits, 90 kHz), SCR extension 0, no stuffing. */
export function packHeader(scr90k: number): Buffer {
  const b = Buffer.alloc(14);
  b.writeUInt32BE(PACK_START_CODE, 0);
  const scr = scr90k % MAX_33_BITS;
  const hi = Math.floor(scr / TWO_POW_30) & 0x07; // SCR[32..30]
  const lo = scr % TWO_POW_30; // SCR[29..0]
  const ext = 0;
  b[4] = 0x40 | (hi << 3) | 0x04 | ((lo >>> 28) & 0x03);
  b[5] = (lo >>> 20) & 0xff;
  b[6] = (((lo >>> 15) & 0x1f) << 3) | 0x04 | ((lo >>> 13) & 0x03);
  b[7] = (lo >>> 5) & 0xff;
  b[8] = ((lo & 0x1f) << 3) | 0x04 | ((ext >>> 7) & 0x03);
  b[9] = ((ext & 0x7f) << 1) | 0x01;
  b[10] = (MUX_RATE >>> 14) & 0xff;
  b[11] = (MUX_RATE >>> 6) & 0xff;
  b[12] = ((MUX_RATE & 0x3f) << 2) | 0x03;
  b[13] = 0xf8; // reserved 11111, pack_stuffing_length 0
  return b;
}

/** §2.5.3.5: one video stream, no audio, rate_bound = the mux rate. 15 bytes. */
export function systemHeader(): Buffer {
  const b = Buffer.alloc(15);
  b.writeUInt32BE(SYSTEM_HEADER_START_CODE, 0);
  b.writeUInt16BE(b.length - 6, 4); // header_length: bytes after this field
  b[6] = 0x80 | ((MUX_RATE >>> 15) & 0x7f); // marker, rate_bound[21..15]
  b[7] = (MUX_RATE >>> 7) & 0xff;
  b[8] = ((MUX_RATE & 0x7f) << 1) | 0x01; // rate_bound[6..0], marker
  b[9] = 0x00; // audio_bound 0, fixed_flag 0, CSPS_flag 0
  b[10] = 0xe1; // system_audio_lock, system_video_lock, marker, video_bound 1
  b[11] = 0x7f; // packet_rate_restriction_flag 0, reserved
  b[12] = VIDEO_STREAM_ID;
  b[13] = 0xe0; // '11', P-STD_buffer_bound_scale 1 (1024-byte units), P-STD_buffer_size_bound[12..8] = 0
  b[14] = 0x80; // P-STD_buffer_size_bound[7..0]: 128 × 1024 bytes
  return b;
}

/** §2.5.4: a PSM listing stream 0xE0 as H.264, no descriptors, with its CRC_32. */
export function programStreamMap(): Buffer {
  const body = Buffer.from([
    0xe0, // current_next_indicator 1, reserved 11, program_stream_map_version 0
    0xff, // reserved 7 bits, marker
    0x00, 0x00, // program_stream_info_length
    0x00, 0x04, // elementary_stream_map_length
    STREAM_TYPE_H264, VIDEO_STREAM_ID, 0x00, 0x00, // stream_type, elementary_stream_id, elementary_stream_info_length
  ]);
  const head = Buffer.alloc(6);
  head.writeUInt32BE(PSM_START_CODE, 0);
  head.writeUInt16BE(body.length + 4, 4); // program_stream_map_length includes the CRC
  const withoutCrc = Buffer.concat([head, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32Mpeg2(withoutCrc), 0);
  return Buffer.concat([withoutCrc, crc]);
}

/** §2.4.3.6: PES packets of `streamId` carrying `payload`, PTS on the first one (others without). */
export function pesPackets(payload: Buffer, pts90k: number, streamId = VIDEO_STREAM_ID): Buffer[] {
  const out: Buffer[] = [];
  for (let off = 0, first = true; first || off < payload.length; first = false) {
    const chunk = payload.subarray(off, off + MAX_PES_PAYLOAD);
    off += chunk.length;
    const withPts = first;
    const header = Buffer.alloc(withPts ? 14 : 9);
    header.writeUInt32BE(0x00000100 | streamId, 0);
    header.writeUInt16BE(header.length - 6 + chunk.length, 4);
    header[6] = 0x80; // '10', not scrambled, no priority, no alignment, no copyright, copy
    header[7] = withPts ? 0x80 : 0x00; // PTS_DTS_flags
    header[8] = withPts ? 5 : 0; // PES_header_data_length
    if (withPts) writeTimestamp(header, 9, 0x2, pts90k);
    out.push(header, chunk);
  }
  return out;
}

/** One PS frame: pack header [+ system header + PSM on key frames] + PES. */
export function psFrame(accessUnit: Buffer, pts90k: number, keyframe: boolean): Buffer {
  const parts = [packHeader(pts90k)];
  if (keyframe) parts.push(systemHeader(), programStreamMap());
  parts.push(...pesPackets(accessUnit, pts90k));
  return Buffer.concat(parts);
}

/**
 * A dummy H.264 access unit in Annex-B form: key frames SPS + PPS + IDR slice, others a non-IDR
 * slice; `size` bytes in total, the slice filled with a frame-dependent pattern free of start codes.
 */
export function syntheticAccessUnit(keyframe: boolean, frameIndex: number, size: number): Buffer {
  const startCode = Buffer.from([0, 0, 0, 1]);
  const parts: Buffer[] = [];
  if (keyframe) {
    // Baseline profile 3.1, as an IPC sub-stream would announce; contents are not decoded by the tests.
    parts.push(startCode, Buffer.from([0x67, 0x42, 0x00, 0x1f, 0x96, 0x54, 0x05, 0x01, 0xed, 0x00, 0xf0, 0x88, 0x45, 0x80]));
    parts.push(startCode, Buffer.from([0x68, 0xce, 0x3c, 0x80]));
  }
  const header = Buffer.concat([...parts, startCode, Buffer.from([keyframe ? 0x65 : 0x41, 0x88])]);
  const fill = Math.max(0, size - header.length);
  const slice = Buffer.alloc(fill);
  for (let i = 0; i < fill; i++) slice[i] = 0x10 + ((frameIndex + i) % 0xe0); // never 0x00: no start-code emulation
  return Buffer.concat([header, slice]);
}

/** PTS/DTS field (§2.4.3.7): 4-bit prefix, 33-bit value split 3/15/15 with marker bits. */
function writeTimestamp(b: Buffer, at: number, prefix: number, ts90k: number): void {
  const ts = ts90k % MAX_33_BITS;
  const hi = Math.floor(ts / TWO_POW_30) & 0x07;
  const lo = ts % TWO_POW_30;
  b[at] = (prefix << 4) | (hi << 1) | 0x01;
  b[at + 1] = (lo >>> 22) & 0xff;
  b[at + 2] = (((lo >>> 15) & 0x7f) << 1) | 0x01;
  b[at + 3] = (lo >>> 7) & 0xff;
  b[at + 4] = ((lo & 0x7f) << 1) | 0x01;
}

/** The 33-bit value of a PTS field written by writeTimestamp (for tests and receivers). */
export function readTimestamp(b: Buffer, at: number): number {
  const hi = ((b[at] ?? 0) >>> 1) & 0x07;
  const lo = ((b[at + 1] ?? 0) << 22) | (((b[at + 2] ?? 0) >>> 1) << 15) | ((b[at + 3] ?? 0) << 7) | ((b[at + 4] ?? 0) >>> 1);
  return hi * TWO_POW_30 + (lo >>> 0);
}

/** CRC-32/MPEG-2 (§2.4.4.10 Annex A): polynomial 0x04C11DB7, initial 0xFFFFFFFF, no reflection, no final XOR. */
export function crc32Mpeg2(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte << 24;
    for (let i = 0; i < 8; i++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
}
