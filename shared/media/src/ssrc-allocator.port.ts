/**
 * SSRCs for the SDP `y=` field, unique per media node (GB/T 28181-2016 Annex F; 2022 Annex G):
 * 10 decimal digits — digit 1: 0 live, 1 history (playback and download); digits 2-6: digits 4-8 of
 * the platform's SIP domain (the 20-digit server id's realm); digits 7-10: a sequence.
 *
 * Per node because a media node demultiplexes incoming RTP by SSRC; two nodes may reuse the same
 * values. Sequence 0000 is never handed out: openRtpServer treats ssrc=0 as "accept any".
 * Allocation continues after the last value given out instead of reusing the lowest free one, so a
 * just-released SSRC is not reassigned while late packets of the old stream may still arrive.
 *
 * Two adapters behind this port: in process memory (a single instance, ssrc-allocator.memory.ts)
 * and Redis (several instances sharing media nodes, ssrc-allocator.redis.ts), run through one
 * contract suite.
 */
import type { MediaPurpose } from './media-selector.port.ts';

export interface SsrcAllocator {
  /**
   * A free SSRC on that node, now in use. Rejects with MediaError MEDIA_ERR_SSRC_EXHAUSTED when none
   * is left, MEDIA_ERR_STORE_UNAVAILABLE when the shared store cannot be reached, MEDIA_ERR_CLOSED.
   */
  allocate(nodeId: string, purpose: MediaPurpose): Promise<string>;
  /** Marks an SSRC in use (a stream restored after a restart, SPEC §11); false if it already was. */
  reserve(nodeId: string, ssrc: string): Promise<boolean>;
  /**
   * Takes over an SSRC that `fromHolder` (an instance that crashed, SPEC §11 RECOVER) held, or that is free:
   * it is now this allocator's, renewed and released like its own. False when a third holder has it.
   */
  adopt(nodeId: string, ssrc: string, fromHolder: string): Promise<boolean>;
  /** Frees an SSRC this allocator handed out when its stream stops; false if it did not hold it. */
  release(nodeId: string, ssrc: string): Promise<boolean>;
  /** SSRCs in use on the node, by every allocator sharing the store. */
  inUse(nodeId: string): Promise<number>;
  /** Idempotent; later calls reject with MEDIA_ERR_CLOSED. Held SSRCs are left to expire. */
  close(): Promise<void>;
}

export const SSRC_SEQUENCE_MIN = 1;
export const SSRC_SEQUENCE_MAX = 9999;
const SSRC_RE = /^[01]\d{9}$/;

/** Digits 2-6 of every SSRC: digits 4-8 of the 20-digit server id (or of its 10-digit realm). */
export function ssrcDomainPart(serverIdOrRealm: string): string {
  if (!/^\d{10}(\d{10})?$/.test(serverIdOrRealm)) {
    throw new RangeError('server id must be a 20-digit GB28181 code (or its 10-digit realm)');
  }
  return serverIdOrRealm.slice(3, 8);
}

/** Digit 1: 0 live, 1 history. */
export function ssrcHistoryDigit(purpose: MediaPurpose): '0' | '1' {
  return purpose === 'live' ? '0' : '1';
}

/** A caller bug, not a store condition: thrown synchronously as RangeError. */
export function assertSsrc(ssrc: string): void {
  if (!SSRC_RE.test(ssrc)) throw new RangeError('SSRC must be 10 digits starting with 0 or 1');
}
