// The cluster SSRC allocator's local fallback: used only while the shared store is unavailable, each
// SSRC released to the allocator that gave it out, other errors passed through.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemorySsrcAllocator, MediaError, type SsrcAllocator } from '@vms/media';
import pino from 'pino';
import { withLocalSsrcFallback } from './ssrc-fallback.ts';

const SERVER = '34020000002000000001';

/** A shared allocator whose store can be switched off. */
function flaky(): { alloc: SsrcAllocator; down: (code?: 'MEDIA_ERR_STORE_UNAVAILABLE' | 'MEDIA_ERR_SSRC_EXHAUSTED') => void; up: () => void } {
  const inner = createMemorySsrcAllocator({ serverId: SERVER });
  let failure: MediaError | null = null;
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (failure !== null) throw failure;
    return fn();
  };
  return {
    alloc: {
      allocate: (n, p) => guard(() => inner.allocate(n, p)),
      reserve: (n, s) => guard(() => inner.reserve(n, s)),
      adopt: (n, s, h) => guard(() => inner.adopt(n, s, h)),
      release: (n, s) => guard(() => inner.release(n, s)),
      inUse: (n) => guard(() => inner.inUse(n)),
      close: () => inner.close(),
    },
    down: (code = 'MEDIA_ERR_STORE_UNAVAILABLE') => void (failure = new MediaError(code, 'x')),
    up: () => void (failure = null),
  };
}

describe('SSRC allocation with a local fallback', () => {
  it('shared while reachable, local while not; releases go back to where each SSRC came from', async () => {
    const shared = flaky();
    const local = createMemorySsrcAllocator({ serverId: SERVER });
    const lines: string[] = [];
    const a = withLocalSsrcFallback(shared.alloc, local, pino({ level: 'info' }, { write: (l: string) => void lines.push((JSON.parse(l) as { msg: string }).msg) }));
    const s1 = await a.allocate('zlm-a', 'live');
    shared.down();
    const s2 = await a.allocate('zlm-a', 'live');
    const s3 = await a.allocate('zlm-a', 'live');
    assert.deepEqual([await local.inUse('zlm-a'), await a.inUse('zlm-a')], [2, 2]);
    shared.up();
    assert.equal(await a.inUse('zlm-a'), 3);
    assert.equal(await a.release('zlm-a', s2), true);
    assert.equal(await local.inUse('zlm-a'), 1);
    assert.equal(await a.release('zlm-a', s1), true);
    assert.equal(await a.release('zlm-a', s3), true);
    assert.equal(await a.inUse('zlm-a'), 0);
    assert.equal(lines.filter((m) => m.startsWith('SSRC store unreachable')).length, 1, 'announced once per outage');
    assert.equal(lines.filter((m) => m.startsWith('SSRC store reachable again')).length, 0, 'no allocation since');
    await a.allocate('zlm-a', 'live');
    assert.equal(lines.filter((m) => m.startsWith('SSRC store reachable again')).length, 1);
  });

  it('exhaustion in the shared store is not hidden by the fallback', async () => {
    const shared = flaky();
    const a = withLocalSsrcFallback(shared.alloc, createMemorySsrcAllocator({ serverId: SERVER }), pino({ level: 'silent' }));
    shared.down('MEDIA_ERR_SSRC_EXHAUSTED');
    await assert.rejects(a.allocate('zlm-a', 'live'), { code: 'MEDIA_ERR_SSRC_EXHAUSTED' });
  });
});
