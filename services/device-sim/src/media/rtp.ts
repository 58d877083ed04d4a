// RTP (RFC 3550 §5.1) packetisation of PS frames, and RFC 4571 framing for RTP over TCP. Pure.

export const RTP_VERSION = 2;
export const RTP_HEADER_BYTES = 12;
/** GB/T 28181-2016 §9.2 / Annex C: PS over RTP, dynamic payload type 96, 90 kHz clock. */
export const PS_PAYLOAD_TYPE = 96;
export const RTP_VIDEO_CLOCK_HZ = 90_000;
/** RFC 4571 §2: 16-bit length prefix. */
export const RFC4571_MAX_PACKET = 0xffff;

export interface RtpHeader {
  payloadType: number;
  marker: boolean;
  sequence: number;
  timestamp: number;
  ssrc: number;
}

/** The state a sender carries from frame to frame. */
export interface RtpSequenceState {
  ssrc: number;
  payloadType: number;
  /** Next sequence number (16 bits, wraps). */
  sequence: number;
}

export function rtpHeader(h: RtpHeader): Buffer {
  const b = Buffer.alloc(RTP_HEADER_BYTES);
  b[0] = RTP_VERSION << 6; // no padding, no extension, CC = 0
  b[1] = (h.marker ? 0x80 : 0) | (h.payloadType & 0x7f);
  b.writeUInt16BE(h.sequence & 0xffff, 2);
  b.writeUInt32BE(h.timestamp >>> 0, 4);
  b.writeUInt32BE(h.ssrc >>> 0, 8);
  return b;
}

/**
 * Splits one frame into RTP packets of at most `maxPayload` bytes, all with the frame's timestamp,
 * the marker bit on the last (RFC 3551 §4.1 for video: end of frame). Advances `state.sequence`.
 */
export function packetizeFrame(frame: Buffer, timestamp: number, state: RtpSequenceState, maxPayload: number): Buffer[] {
  const out: Buffer[] = [];
  for (let off = 0; off < frame.length; off += maxPayload) {
    const payload = frame.subarray(off, off + maxPayload);
    const marker = off + maxPayload >= frame.length;
    out.push(Buffer.concat([rtpHeader({ payloadType: state.payloadType, marker, sequence: state.sequence, timestamp, ssrc: state.ssrc }), payload]));
    state.sequence = (state.sequence + 1) & 0xffff;
  }
  return out;
}

/** RFC 4571 §2: LENGTH (16 bits, big-endian) then the RTP packet. */
export function frameRfc4571(packet: Buffer): Buffer {
  if (packet.length > RFC4571_MAX_PACKET) throw new RangeError('RTP packet too large for RFC 4571 framing');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(packet.length, 0);
  return Buffer.concat([len, packet]);
}

/** Parses the fixed RTP header; undefined when `b` is not an RTP version 2 packet. */
export function parseRtpHeader(b: Buffer): (RtpHeader & { payload: Buffer }) | undefined {
  if (b.length < RTP_HEADER_BYTES || b[0] === undefined || b[0] >> 6 !== RTP_VERSION) return undefined;
  const cc = b[0] & 0x0f;
  const start = RTP_HEADER_BYTES + cc * 4;
  if (b.length < start) return undefined;
  return {
    payloadType: (b[1] ?? 0) & 0x7f,
    marker: ((b[1] ?? 0) & 0x80) !== 0,
    sequence: b.readUInt16BE(2),
    timestamp: b.readUInt32BE(4),
    ssrc: b.readUInt32BE(8),
    payload: b.subarray(start),
  };
}

/** Reassembles RFC 4571 frames from TCP chunks. */
export class Rfc4571Deframer {
  #buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: Buffer[] = [];
    while (this.#buf.length >= 2) {
      const len = this.#buf.readUInt16BE(0);
      if (this.#buf.length < 2 + len) break;
      out.push(this.#buf.subarray(2, 2 + len));
      this.#buf = this.#buf.subarray(2 + len);
    }
    return out;
  }
}
