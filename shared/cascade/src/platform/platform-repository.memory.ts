/** PlatformRepository kept in process memory: standalone mode without MySQL, and tests. */
import { CascadeError } from '../errors.ts';
import type { ChannelKey, ChannelShare, SharedChannel, UpstreamPlatform } from './platform.ts';
import type { PlatformRepository } from './platform-repository.port.ts';
import { freezePlatform, validateSharedChannel, validateUpstreamPlatform } from './platform.validate.ts';

const key = (c: ChannelKey): string => `${c.deviceId}\u0000${c.channelId}`;
const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byChannel = (a: ChannelKey, b: ChannelKey): number => byCode(a.deviceId, b.deviceId) || byCode(a.channelId, b.channelId);

export function createMemoryPlatformRepository(initial: readonly UpstreamPlatform[] = []): PlatformRepository {
  const platforms = new Map<string, UpstreamPlatform>();
  const shares = new Map<string, Map<string, SharedChannel>>();
  for (const p of initial) platforms.set(p.serverId, freezePlatform(validateUpstreamPlatform(p)));
  let closed = false;
  const open = (): void => {
    if (closed) throw new CascadeError('CASCADE_ERR_CLOSED', 'platform repository is closed');
  };
  const sorted = (): UpstreamPlatform[] => [...platforms.values()].sort((a, b) => byCode(a.serverId, b.serverId));
  const sharesFor = (serverId: string): Map<string, SharedChannel> => {
    if (!platforms.has(serverId)) throw new CascadeError('CASCADE_ERR_PLATFORM_NOT_FOUND', `no upstream platform ${serverId}`);
    let m = shares.get(serverId);
    if (m === undefined) shares.set(serverId, (m = new Map()));
    return m;
  };
  const copy = (c: SharedChannel): SharedChannel =>
    Object.freeze({ deviceId: c.deviceId, channelId: c.channelId, catalogGroupId: c.catalogGroupId, parentId: c.parentId });

  return {
    listEnabled: async () => (open(), sorted().filter((p) => p.enabled)),
    listAll: async () => (open(), sorted()),
    get: async (serverId) => (open(), platforms.get(serverId) ?? null),
    async upsert(platform) {
      open();
      platforms.set(platform.serverId, freezePlatform(validateUpstreamPlatform(platform)));
    },
    async remove(serverId) {
      open();
      shares.delete(serverId);
      return platforms.delete(serverId);
    },
    async listChannels(serverId) {
      open();
      return [...(shares.get(serverId)?.values() ?? [])].sort(byChannel);
    },
    async shareChannels(serverId, channels) {
      open();
      const valid = channels.map((c) => copy(validateSharedChannel(c))); // all or nothing
      const m = sharesFor(serverId);
      for (const c of valid) m.set(key(c), c);
    },
    async replaceChannels(serverId, channels) {
      open();
      const valid = channels.map((c) => copy(validateSharedChannel(c)));
      const m = sharesFor(serverId);
      m.clear();
      for (const c of valid) m.set(key(c), c);
    },
    async unshareChannels(serverId, channels) {
      open();
      const m = shares.get(serverId);
      let removed = 0;
      for (const c of channels) if (m?.delete(key(c)) === true) removed++;
      return removed;
    },
    async sharesOf(deviceId, channelId) {
      open();
      const out: ChannelShare[] = [];
      for (const [platformId, m] of shares) {
        const c = m.get(key({ deviceId, channelId }));
        if (c !== undefined) out.push({ ...c, platformId });
      }
      return out.sort((a, b) => byCode(a.platformId, b.platformId));
    },
    async sharesOfDevice(deviceId, limit) {
      open();
      const out: ChannelShare[] = [];
      for (const [platformId, m] of shares) for (const c of m.values()) if (c.deviceId === deviceId) out.push({ ...c, platformId });
      return out.sort((a, b) => byCode(a.channelId, b.channelId) || byCode(a.platformId, b.platformId)).slice(0, limit);
    },
    async forgetChannels(deviceId, channelId) {
      open();
      let removed = 0;
      for (const m of shares.values()) {
        for (const [k, c] of m) {
          if (c.deviceId === deviceId && (channelId === undefined || c.channelId === channelId)) {
            m.delete(k);
            removed++;
          }
        }
      }
      return removed;
    },
    async close() {
      closed = true;
    },
  } satisfies PlatformRepository;
}
