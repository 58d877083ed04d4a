import { randomBytes } from 'node:crypto';
import type { SipRequest } from '../message/types.ts';

/** Per-process salt: tags stay unpredictable to peers while equal for the same request. */
const SALT = randomBytes(8).toString('hex');

/**
 * RFC 3261 §8.2.7: a stateless UAS must generate the same To-tag for the same request (that is, for
 * its retransmissions). Hashes the raw top Via line as stamped (branch and sent-by), Call-ID, From
 * (with its tag) and CSeq, which a retransmission repeats byte for byte: 64-bit FNV-1a in two lanes,
 * salted per process; 16 hex digits like generateTag(). No header is parsed for it.
 */
export function statelessTagOf(topVia: string, callId: string, from: string, cseq: string): string {
  const text = `${SALT}|${topVia}|${callId}|${from}|${cseq}`;
  let a = 0x811c9dc5; // FNV-1a 32-bit offset basis
  let b = 0x050c5d1f; // second lane: another start, another odd multiplier
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x0100019d) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

/** statelessTagOf() over a parsed request (whose top Via the transport has already stamped). */
export function statelessToTag(req: SipRequest): string {
  const h = req.headers;
  return statelessTagOf(h.get('Via') ?? '', h.get('Call-ID') ?? '', h.get('From') ?? '', h.get('CSeq') ?? '');
}
