import { randomBytes } from 'node:crypto';
import { getTopVia } from '../message/accessors.ts';
import type { SipRequest } from '../message/types.ts';

/** Per-process salt: tags stay unpredictable to peers while equal for the same request. */
const SALT = randomBytes(8).toString('hex');

/**
 * RFC 3261 §8.2.7: a stateless UAS must generate the same To-tag for the same request (that is, for
 * its retransmissions). Hashes the top Via's branch (the transaction, §17.2.3), Call-ID and CSeq (the
 * request for a client without RFC 3261 branches), which a retransmission repeats byte for byte:
 * 64-bit FNV-1a in two lanes over `salt|branch|callId|cseq`, salted per process (unpredictable to
 * peers); 16 hex digits like generateTag(). No header is parsed for it, and the parts are hashed in turn
 * rather than concatenated (no string is built). The rest of the Via (sent-by, rport, received) and
 * From are left out: with the branch, Call-ID and CSeq they tell no request apart (Kamailio's sl hashes
 * less: Via host, port and branch), and their ~130 bytes were ~1.4k of the ~2.6k instructions the hash
 * cost per keepalive (docs/benchmarks.md). `branch` is the parameter's value as the parser reads it
 * ('' without one).
 */
export function statelessTagOf(branch: string, callId: string, cseq: string): string {
  lanes[0] = SALTED[0] as number;
  lanes[1] = SALTED[1] as number;
  mix(branch, true);
  mix(callId, true);
  mix(cseq, false);
  return hex8(lanes[0] as number) + hex8(lanes[1] as number);
}

/**
 * statelessTagOf() over byte ranges of `b` read as latin1 text (one char per byte, so the same hash
 * as over the strings), its 16 hex digits written into `b` at `at`. For the datagram shortcut, which
 * hashes the parts where it has just written them into the response: indexed byte reads cost less
 * than charCodeAt over sliced and concatenated strings.
 */
export function writeStatelessTag(b: Uint8Array, branch0: number, branch1: number, callId0: number, callId1: number, cseq0: number, cseq1: number, at: number): void {
  // mix() over the three ranges in one loop, the lanes in locals (int32 here: the same 32 bits): three
  // calls of a helper each loading and storing the lanes cost ~0.3k instructions more per answer
  let x = (SALTED[0] as number) | 0;
  let y = (SALTED[1] as number) | 0;
  for (let part = 0; part < 3; part++) {
    let i = part === 0 ? branch0 : part === 1 ? callId0 : cseq0;
    const to = part === 0 ? branch1 : part === 1 ? callId1 : cseq1;
    for (const last = to - 4; i <= last; i += 4) {
      const c0 = b[i] as number;
      const c1 = b[i + 1] as number;
      const c2 = b[i + 2] as number;
      const c3 = b[i + 3] as number;
      x = Math.imul(Math.imul(Math.imul(Math.imul(x ^ c0, 0x01000193) ^ c1, 0x01000193) ^ c2, 0x01000193) ^ c3, 0x01000193);
      y = Math.imul(Math.imul(Math.imul(Math.imul(y ^ c0, 0x0100019d) ^ c1, 0x0100019d) ^ c2, 0x0100019d) ^ c3, 0x0100019d);
    }
    for (; i < to; i++) {
      const c = b[i] as number;
      x = Math.imul(x ^ c, 0x01000193);
      y = Math.imul(y ^ c, 0x0100019d);
    }
    if (part < 2) {
      // the `|` between parts
      x = Math.imul(x ^ 124, 0x01000193);
      y = Math.imul(y ^ 124, 0x0100019d);
    }
  }
  writeHex8(b, at, x >>> 0);
  writeHex8(b, at + 8, y >>> 0);
}

/**
 * hex8() as bytes, by straight-line stores: a loop over the eight digits cost ~24 instructions a digit
 * under callgrind (its checks redone every iteration), the stores ~8 (docs/benchmarks.md).
 */
function writeHex8(out: Uint8Array, at: number, x: number): void {
  out[at] = hexDigit(x >>> 28);
  out[at + 1] = hexDigit((x >>> 24) & 15);
  out[at + 2] = hexDigit((x >>> 20) & 15);
  out[at + 3] = hexDigit((x >>> 16) & 15);
  out[at + 4] = hexDigit((x >>> 12) & 15);
  out[at + 5] = hexDigit((x >>> 8) & 15);
  out[at + 6] = hexDigit((x >>> 4) & 15);
  out[at + 7] = hexDigit(x & 15);
}

/** The lower-case hex digit of 0-15 as a char code: 0-9, a-f. */
const hexDigit = (d: number): number => (d < 10 ? 48 + d : 87 + d);

/** The two FNV-1a lanes; one hash at a time (synchronous). */
const lanes = new Uint32Array(2);

function mix(text: string, separator: boolean): void {
  let a = lanes[0] as number;
  let b = lanes[1] as number;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0; // FNV-1a 32-bit prime
    b = Math.imul(b ^ c, 0x0100019d) >>> 0; // second lane: another start, another odd multiplier
  }
  if (separator) {
    a = Math.imul(a ^ 124 /* | */, 0x01000193) >>> 0;
    b = Math.imul(b ^ 124, 0x0100019d) >>> 0;
  }
  lanes[0] = a;
  lanes[1] = b;
}

const HEX = '0123456789abcdef';
/** 8 lower-case hex digits; Number#toString(16) goes through V8's generic radix conversion (fmod). */
function hex8(x: number): string {
  let out = '';
  for (let shift = 28; shift >= 0; shift -= 4) out += HEX[(x >>> shift) & 15] as string;
  return out;
}

/** Lane states after `salt|`, computed once. */
const SALTED = ((): Uint32Array => {
  lanes[0] = 0x811c9dc5; // FNV-1a 32-bit offset basis
  lanes[1] = 0x050c5d1f;
  mix(SALT, true);
  return lanes.slice();
})();

/** statelessTagOf() over a parsed request. */
export function statelessToTag(req: SipRequest): string {
  const h = req.headers;
  return statelessTagOf(getTopVia(req).params.get('branch') ?? '', h.get('Call-ID') ?? '', h.get('CSeq') ?? '');
}
