// SSRCs in a cluster: the shared Redis allocator, with this instance's in-memory one as a fallback
// while Redis is unreachable (SPEC FAIL-3: a play landing on the device's owner still runs). SSRCs
// handed out by the fallback are unique on this instance only; each stream also gets its own RTP port
// from openRtpServer, which keeps streams apart if two instances' fallback SSRCs meet. Each SSRC is
// released to the allocator that gave it out. The fallback is announced once per outage.
import { isMediaError, type SsrcAllocator } from '@vms/media';
import type { Logger } from 'pino';

export function withLocalSsrcFallback(shared: SsrcAllocator, local: SsrcAllocator, log: Logger): SsrcAllocator {
  /** `${nodeId}/${ssrc}` handed out by the local allocator. */
  const fromLocal = new Set<string>();
  let degraded = false;

  const unavailable = (err: unknown): boolean => isMediaError(err) && err.code === 'MEDIA_ERR_STORE_UNAVAILABLE';
  const onShared = <T>(value: T): T => {
    if (degraded) log.info('SSRC store reachable again: SSRCs are unique across instances again');
    degraded = false;
    return value;
  };
  const onFallback = (err: unknown): void => {
    if (!degraded) log.warn({ err }, 'SSRC store unreachable: SSRCs come from this instance alone until it is back');
    degraded = true;
  };

  return {
    async allocate(nodeId, purpose) {
      try {
        return onShared(await shared.allocate(nodeId, purpose));
      } catch (err) {
        if (!unavailable(err)) throw err;
        onFallback(err);
        const ssrc = await local.allocate(nodeId, purpose);
        fromLocal.add(`${nodeId}/${ssrc}`);
        return ssrc;
      }
    },
    async reserve(nodeId, ssrc) {
      try {
        return onShared(await shared.reserve(nodeId, ssrc));
      } catch (err) {
        if (!unavailable(err)) throw err;
        onFallback(err);
        const ok = await local.reserve(nodeId, ssrc);
        if (ok) fromLocal.add(`${nodeId}/${ssrc}`);
        return ok;
      }
    },
    async adopt(nodeId, ssrc, fromHolder) {
      // no local fallback: an SSRC of another instance is only known to the shared store
      return onShared(await shared.adopt(nodeId, ssrc, fromHolder));
    },
    async release(nodeId, ssrc) {
      if (fromLocal.delete(`${nodeId}/${ssrc}`)) return local.release(nodeId, ssrc);
      return shared.release(nodeId, ssrc);
    },
    async inUse(nodeId) {
      const mine = await local.inUse(nodeId);
      try {
        return (await shared.inUse(nodeId)) + mine;
      } catch (err) {
        if (!unavailable(err)) throw err;
        return mine;
      }
    },
    async close() {
      await Promise.all([shared.close(), local.close()]);
    },
  } satisfies SsrcAllocator;
}
