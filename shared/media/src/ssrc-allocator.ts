/**
 * SSRCs for the SDP `y=` field, unique per media node (GB/T 28181-2016 Annex F; 2022 Annex G):
 * 10 decimal digits — digit 1: 0 live, 1 history (playback and download); digits 2-6: digits 4-8 of
 * the platform's SIP domain (the 20-digit server id's realm); digits 7-10: a sequence.
 *
 * Per node because a media node demultiplexes incoming RTP by SSRC, two nodes may reuse the same
 * values. Sequence 0000 is never handed out: openRtpServer treats ssrc=0 as "accept any".
 * Allocation continues after the last value given out instead of reusing the lowest free one, so a
 * just-released SSRC is not reassigned while late packets of the old stream may still arrive.
 *
 * In-memory, per signaling instance: with several instances sharing one media node, uniqueness
 * across instances needs a shared store (a later issue); each stream also gets its own port from
 * openRtpServer, which keeps streams apart even if two SSRCs collide.
 */
import { MediaError } from './errors.ts';
import type { MediaPurpose } from './media-selector.port.ts';

const SEQUENCE_MIN = 1;
const SEQUENCE_MAX = 9999;
const SSRC_RE = /^[01]\d{9}$/;

export interface SsrcAllocator {
  /** A free SSRC on that node, now in use; MEDIA_ERR_SSRC_EXHAUSTED when none is left. */
  allocate(nodeId: string, purpose: MediaPurpose): string;
  /** Marks an SSRC in use (a stream restored after a restart, SPEC §11); false if it already was. */
  reserve(nodeId: string, ssrc: string): boolean;
  /** Frees an SSRC when its stream stops; false if it was not in use. */
  release(nodeId: string, ssrc: string): boolean;
  inUse(nodeId: string): number;
}

/** Digits 2-6 of every SSRC: digits 4-8 of the 20-digit server id (or of its 10-digit realm). */
export function ssrcDomainPart(serverIdOrRealm: string): string {
  if (!/^\d{10}(\d{10})?$/.test(serverIdOrRealm)) {
    throw new RangeError('server id must be a 20-digit GB28181 code (or its 10-digit realm)');
  }
  return serverIdOrRealm.slice(3, 8);
}

interface NodePool {
  used: Set<string>;
  /** Last sequence handed out, per first digit. */
  cursor: [number, number];
}

export function createSsrcAllocator(opts: { serverId: string }): SsrcAllocator {
  const domain = ssrcDomainPart(opts.serverId);
  const nodes = new Map<string, NodePool>();
  const poolOf = (nodeId: string): NodePool => {
    let p = nodes.get(nodeId);
    if (p === undefined) {
      p = { used: new Set(), cursor: [SEQUENCE_MAX, SEQUENCE_MAX] };
      nodes.set(nodeId, p);
    }
    return p;
  };
  return {
    allocate(nodeId, purpose) {
      const history = purpose === 'live' ? 0 : 1;
      const p = poolOf(nodeId);
      const span = SEQUENCE_MAX - SEQUENCE_MIN + 1;
      for (let i = 1; i <= span; i++) {
        const seq = SEQUENCE_MIN + ((p.cursor[history] - SEQUENCE_MIN + i) % span);
        const ssrc = `${history}${domain}${String(seq).padStart(4, '0')}`;
        if (!p.used.has(ssrc)) {
          p.used.add(ssrc);
          p.cursor[history] = seq;
          return ssrc;
        }
      }
      throw new MediaError('MEDIA_ERR_SSRC_EXHAUSTED', `all ${span} ${purpose} SSRCs of media node ${nodeId} are in use`);
    },
    reserve(nodeId, ssrc) {
      if (!SSRC_RE.test(ssrc)) throw new RangeError('SSRC must be 10 digits starting with 0 or 1');
      const p = poolOf(nodeId);
      if (p.used.has(ssrc)) return false;
      p.used.add(ssrc);
      return true;
    },
    release(nodeId, ssrc) {
      const p = nodes.get(nodeId);
      // the pool (and its cursor) stays: forgetting it would restart at 0001 and reuse recent values
      return p !== undefined && p.used.delete(ssrc);
    },
    inUse: (nodeId) => nodes.get(nodeId)?.used.size ?? 0,
  } satisfies SsrcAllocator;
}
