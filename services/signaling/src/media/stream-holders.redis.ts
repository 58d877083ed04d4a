// StreamHolderDirectory on Redis: one key per stream, `vms:media:holder:<nodeId>:<streamId>` → node
// code. Claim is SET … PX, release a Lua compare-and-delete (only the holder removes it, STYLE §4).
// Failures reject with MediaError MEDIA_ERR_STORE_UNAVAILABLE; callers log and carry on (a hook then
// runs where it landed). The client stays the caller's.
import type { RedisClient } from '@vms/cluster';
import { MediaError } from '@vms/media';
import type { StreamHolderDirectory } from './stream-holders.port.ts';

const RELEASE_IF_HOLDER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

export function streamHolderKey(nodeId: string, streamId: string, prefix = 'vms:media:holder:'): string {
  return `${prefix}${nodeId}:${streamId}`;
}

export function createRedisStreamHolders(client: RedisClient, self: string, prefix?: string): StreamHolderDirectory {
  const key = (nodeId: string, streamId: string): string => streamHolderKey(nodeId, streamId, prefix);
  const run = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new MediaError('MEDIA_ERR_STORE_UNAVAILABLE', `stream holder ${what}: Redis unavailable`, { cause: err });
    }
  };
  return {
    claim: (nodeId, streamId, ttlMs) =>
      run('claim', async () => {
        await client.set(key(nodeId, streamId), self, 'PX', ttlMs);
      }),
    holderOf: (nodeId, streamId) => run('lookup', () => client.get(key(nodeId, streamId))),
    release: (nodeId, streamId) =>
      run('release', async () => {
        await client.eval(RELEASE_IF_HOLDER, 1, key(nodeId, streamId), self);
      }),
  } satisfies StreamHolderDirectory;
}
