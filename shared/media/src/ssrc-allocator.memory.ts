/**
 * SsrcAllocator in process memory: the single instance (standalone), and the fallback of the Redis
 * adapter. Unique among the streams of this process only.
 */
import { MediaError } from './errors.ts';
import {
  assertSsrc,
  ssrcDomainPart,
  ssrcHistoryDigit,
  SSRC_SEQUENCE_MAX,
  SSRC_SEQUENCE_MIN,
  type SsrcAllocator,
} from './ssrc-allocator.port.ts';

interface NodePool {
  used: Set<string>;
  /** Last sequence handed out, per first digit. */
  cursor: [number, number];
}

export function createMemorySsrcAllocator(opts: { serverId: string }): SsrcAllocator {
  const domain = ssrcDomainPart(opts.serverId);
  const nodes = new Map<string, NodePool>();
  let closed = false;
  const open = (): void => {
    if (closed) throw new MediaError('MEDIA_ERR_CLOSED', 'SSRC allocator is closed');
  };
  const poolOf = (nodeId: string): NodePool => {
    let p = nodes.get(nodeId);
    if (p === undefined) {
      p = { used: new Set(), cursor: [SSRC_SEQUENCE_MAX, SSRC_SEQUENCE_MAX] };
      nodes.set(nodeId, p);
    }
    return p;
  };
  return {
    async allocate(nodeId, purpose) {
      open();
      const digit = ssrcHistoryDigit(purpose);
      const history = digit === '0' ? 0 : 1;
      const p = poolOf(nodeId);
      const span = SSRC_SEQUENCE_MAX - SSRC_SEQUENCE_MIN + 1;
      for (let i = 1; i <= span; i++) {
        const seq = SSRC_SEQUENCE_MIN + ((p.cursor[history] - SSRC_SEQUENCE_MIN + i) % span);
        const ssrc = `${digit}${domain}${String(seq).padStart(4, '0')}`;
        if (!p.used.has(ssrc)) {
          p.used.add(ssrc);
          p.cursor[history] = seq;
          return ssrc;
        }
      }
      throw new MediaError('MEDIA_ERR_SSRC_EXHAUSTED', `all ${span} ${purpose} SSRCs of media node ${nodeId} are in use`);
    },
    async reserve(nodeId, ssrc) {
      assertSsrc(ssrc);
      open();
      const p = poolOf(nodeId);
      if (p.used.has(ssrc)) return false;
      p.used.add(ssrc);
      return true;
    },
    async adopt(nodeId, ssrc) {
      // one process, one holder: whoever held it before was this instance (an earlier run's stream)
      assertSsrc(ssrc);
      open();
      poolOf(nodeId).used.add(ssrc);
      return true;
    },
    async release(nodeId, ssrc) {
      open();
      const p = nodes.get(nodeId);
      // the pool (and its cursor) stays: forgetting it would restart at 0001 and reuse recent values
      return p !== undefined && p.used.delete(ssrc);
    },
    async inUse(nodeId) {
      open();
      return nodes.get(nodeId)?.used.size ?? 0;
    },
    async close() {
      closed = true;
    },
  } satisfies SsrcAllocator;
}
