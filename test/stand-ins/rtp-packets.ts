/**
 * Just enough RTP (RFC 3550 §5.1), RFC 4571 framing and MPEG-2 PS (ISO/IEC 13818-1 §2.5.3.3) for the
 * stand-in media node and the tests that feed it: GB/T 28181 carries PS over RTP, over UDP or over
 * TCP with a 2-byte length prefix per packet.
 */
export const RTP_VERSION = 2;
export const RTP_HEADER_BYTES = 12;
/** MPEG-2 PS pack_start_code: every PS pack (and so the first RTP packet of a frame) starts with it. */
export const PS_PACK_START = Buffer.from([0x00, 0x00, 0x01, 0xba]);
/** Dynamic payload type GB/T 28181 uses for PS (SDP `a=rtpmap:96 PS/90000`). */
export const PT_PS = 96;

export interface RtpPacketFields {
  ssrc: number;
  seq: number;
  timestamp: number;
  payloadType?: number;
  marker?: boolean;
  payload: Buffer;
}

export interface RtpHeader {
  payloadType: number;
  marker: boolean;
  seq: number;
  timestamp: number;
  ssrc: number;
  /** Offset of the payload after CSRCs and header extension. */
  payloadOffset: number;
}

export function buildRtpPacket(f: RtpPacketFields): Buffer {
  const h = Buffer.alloc(RTP_HEADER_BYTES);
  h[0] = RTP_VERSION << 6;
  h[1] = ((f.marker ?? false) ? 0x80 : 0) | ((f.payloadType ?? PT_PS) & 0x7f);
  h.writeUInt16BE(f.seq & 0xffff, 2);
  h.writeUInt32BE(f.timestamp >>> 0, 4);
  h.writeUInt32BE(f.ssrc >>> 0, 8);
  return Buffer.concat([h, f.payload]);
}

/** The header of an RTP packet, or undefined when the bytes are not RTP version 2. */
export function parseRtpHeader(b: Buffer): RtpHeader | undefined {
  if (b.length < RTP_HEADER_BYTES || b[0]! >> 6 !== RTP_VERSION) return undefined;
  const csrcCount = b[0]! & 0x0f;
  let offset = RTP_HEADER_BYTES + 4 * csrcCount;
  if ((b[0]! & 0x10) !== 0) {
    if (b.length < offset + 4) return undefined;
    offset += 4 + 4 * b.readUInt16BE(offset + 2); // RFC 3550 §5.3.1 header extension
  }
  if (offset > b.length) return undefined;
  return {
    payloadType: b[1]! & 0x7f,
    marker: (b[1]! & 0x80) !== 0,
    seq: b.readUInt16BE(2),
    timestamp: b.readUInt32BE(4),
    ssrc: b.readUInt32BE(8),
    payloadOffset: offset,
  };
}

/** A copy of the packet with another SSRC (what a media server does when it re-sends a stream). */
export function withSsrc(packet: Buffer, ssrc: number): Buffer {
  const copy = Buffer.from(packet);
  copy.writeUInt32BE(ssrc >>> 0, 8);
  return copy;
}

export function startsWithPsPack(payload: Buffer): boolean {
  return payload.length >= 4 && payload.subarray(0, 4).equals(PS_PACK_START);
}

/**
 * An MPEG-2 PS pack header (14 bytes, SCR = 0, mux rate 1, no stuffing) followed by `body`: the
 * start of a PS frame as a camera would put it in the first RTP packet of a video frame.
 */
export function psPack(body: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.from([0x00, 0x00, 0x01, 0xba, 0x44, 0x00, 0x04, 0x00, 0x04, 0x01, 0x00, 0x00, 0x03, 0xf8]);
  return Buffer.concat([h, body]);
}

/** RFC 4571 §2: each RTP packet on a TCP stream is preceded by its length as 16 bits. */
export function frameRfc4571(packet: Buffer): Buffer {
  if (packet.length > 0xffff) throw new RangeError('RTP packet too large for RFC 4571 framing');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(packet.length, 0);
  return Buffer.concat([len, packet]);
}

/** Reassembles RFC 4571 frames from TCP chunks split anywhere. */
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
