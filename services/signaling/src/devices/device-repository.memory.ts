// Device store in process memory (tests, and callers that pass it in `AppDeps.devices`). Devices re-appear at
// their next REGISTER after a restart; provisioning done through the API is lost on restart. Keepalive
// is O(1): one Map lookup and two field writes.
import { ChannelLimitError, DeviceNotFoundError } from '../errors/catalog.ts';
import { DEFAULT_MAX_CHANNELS_PER_DEVICE, type DeviceRepository, type DeviceRepositoryLimits } from './device-repository.port.ts';
import {
  DEFAULT_TENANT,
  type Channel,
  type ChannelId,
  type ChannelInput,
  type Device,
  type DeviceFilter,
  type DeviceId,
  type DeviceInfoUpdate,
  type DeviceProvision,
  type DeviceRegistration,
  type Page,
  type PageRequest,
} from './device.types.ts';
import { normalizePage, offsetOf, pageOf } from './paging.ts';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function newDevice(deviceId: DeviceId, at: number): Mutable<Device> {
  return {
    deviceId,
    tenantId: DEFAULT_TENANT,
    name: null,
    manufacturer: null,
    model: null,
    firmware: null,
    transport: 'UDP',
    charset: 'GB2312',
    password: null,
    remoteIp: null,
    remotePort: null,
    registeredAt: null,
    keepaliveAt: null,
    expiresSec: null,
    online: false,
    channelCount: 0,
    createdAt: at,
    updatedAt: at,
  };
}

const snapshot = <T extends object>(record: T): T => Object.freeze({ ...record });

/** First index in sorted `ids` whose id is > `after`. */
function firstAfter(ids: readonly ChannelId[], after: ChannelId): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ids[mid] as ChannelId) <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function createMemoryDeviceRepository(options: DeviceRepositoryLimits = {}): DeviceRepository {
  const maxChannels = options.maxChannelsPerDevice ?? DEFAULT_MAX_CHANNELS_PER_DEVICE;
  const devices = new Map<DeviceId, Mutable<Device>>();
  const channels = new Map<DeviceId, Map<ChannelId, Channel>>();
  /**
   * A device's channel ids in order, built when first paged and dropped when an id is added or
   * removed (an update keeps it): pages are slices, not a sort per page (SPEC SEC-3).
   */
  const sortedIds = new Map<DeviceId, ChannelId[]>();

  const orderedIds = (deviceId: DeviceId): ChannelId[] => {
    let ids = sortedIds.get(deviceId);
    if (ids === undefined) {
      ids = [...(channels.get(deviceId)?.keys() ?? [])].sort(byKey);
      sortedIds.set(deviceId, ids);
    }
    return ids;
  };
  /** channelId → devices that report it (routing by channel id). */
  const channelIndex = new Map<ChannelId, Set<DeviceId>>();

  const requireDevice = (deviceId: DeviceId): Mutable<Device> => {
    const d = devices.get(deviceId);
    if (d === undefined) throw new DeviceNotFoundError(deviceId);
    return d;
  };

  const channelMap = (deviceId: DeviceId): Map<ChannelId, Channel> => {
    let m = channels.get(deviceId);
    if (m === undefined) channels.set(deviceId, (m = new Map()));
    return m;
  };

  const indexAdd = (channelId: ChannelId, deviceId: DeviceId): void => {
    let s = channelIndex.get(channelId);
    if (s === undefined) channelIndex.set(channelId, (s = new Set()));
    s.add(deviceId);
  };

  const indexRemove = (channelId: ChannelId, deviceId: DeviceId): void => {
    const s = channelIndex.get(channelId);
    s?.delete(deviceId);
    if (s?.size === 0) channelIndex.delete(channelId);
  };

  const putChannels = (device: Mutable<Device>, inputs: readonly ChannelInput[], at: number): void => {
    const m = channelMap(device.deviceId);
    const added = new Set<ChannelId>();
    for (const input of inputs) if (!m.has(input.channelId)) added.add(input.channelId);
    if (m.size + added.size > maxChannels) throw new ChannelLimitError(device.deviceId, maxChannels);
    if (added.size > 0) sortedIds.delete(device.deviceId);
    for (const input of inputs) {
      m.set(input.channelId, Object.freeze({ ...input, extra: Object.freeze({ ...input.extra }), deviceId: device.deviceId, updatedAt: at }));
      indexAdd(input.channelId, device.deviceId);
    }
    device.channelCount = m.size;
    device.updatedAt = at;
  };

  return {
    async registerDevice(r: DeviceRegistration) {
      const d = devices.get(r.deviceId) ?? newDevice(r.deviceId, r.at);
      devices.set(r.deviceId, d);
      Object.assign(d, {
        transport: r.transport,
        remoteIp: r.remoteIp,
        remotePort: r.remotePort,
        expiresSec: r.expiresSec,
        registeredAt: r.at,
        keepaliveAt: r.at,
        online: true,
        updatedAt: r.at,
      });
      return snapshot(d);
    },

    async provisionDevice(p: DeviceProvision, at: number) {
      const d = devices.get(p.deviceId) ?? newDevice(p.deviceId, at);
      devices.set(p.deviceId, d);
      if (p.tenantId !== undefined) d.tenantId = p.tenantId;
      if (p.name !== undefined) d.name = p.name;
      if (p.password !== undefined) d.password = p.password;
      if (p.charset !== undefined) d.charset = p.charset;
      if (p.transport !== undefined) d.transport = p.transport;
      d.updatedAt = at;
      return snapshot(d);
    },

    async updateDeviceInfo(deviceId: DeviceId, info: DeviceInfoUpdate, at: number) {
      const d = requireDevice(deviceId);
      if (info.name !== undefined) d.name = info.name;
      if (info.manufacturer !== undefined) d.manufacturer = info.manufacturer;
      if (info.model !== undefined) d.model = info.model;
      if (info.firmware !== undefined) d.firmware = info.firmware;
      d.updatedAt = at;
    },

    async getDevice(deviceId: DeviceId) {
      const d = devices.get(deviceId);
      return d === undefined ? null : snapshot(d);
    },

    async listDevices(filter: DeviceFilter): Promise<Page<Device>> {
      const matching = [...devices.values()]
        .filter(
          (d) =>
            (filter.tenantId === undefined || d.tenantId === filter.tenantId) &&
            (filter.online === undefined || d.online === filter.online) &&
            (filter.idPrefix === undefined || d.deviceId.startsWith(filter.idPrefix)),
        )
        .sort((a, b) => byKey(a.deviceId, b.deviceId));
      const page = pageOf(matching, filter);
      return { ...page, items: page.items.map(snapshot) };
    },

    async countOnlineDevices() {
      let n = 0;
      for (const d of devices.values()) if (d.online) n++;
      return n;
    },

    touchKeepalive(deviceId: DeviceId, at: number) {
      const d = devices.get(deviceId);
      if (d !== undefined && (d.keepaliveAt === null || at > d.keepaliveAt)) {
        d.keepaliveAt = at;
        d.updatedAt = at;
      }
    },

    async markOnline(deviceIds: readonly DeviceId[], at: number) {
      const changed: DeviceId[] = [];
      for (const id of new Set(deviceIds)) {
        const d = devices.get(id);
        // Only devices that flip are touched (the owner re-asserts its devices every scan).
        if (d === undefined || d.online) continue;
        changed.push(id);
        d.online = true;
        d.keepaliveAt = Math.max(d.keepaliveAt ?? at, at);
        d.updatedAt = at;
      }
      return changed.sort(byKey);
    },

    async markOffline(deviceIds: readonly DeviceId[], options?: { readonly onlyIfKeepaliveBefore?: number }) {
      const before = options?.onlyIfKeepaliveBefore;
      const changed: DeviceId[] = [];
      for (const id of new Set(deviceIds)) {
        const d = devices.get(id);
        if (d === undefined || !d.online) continue;
        if (before !== undefined && d.keepaliveAt !== null && d.keepaliveAt >= before) continue;
        d.online = false;
        changed.push(id);
      }
      return changed.sort(byKey);
    },

    async findSilentDevices(keepaliveBefore: number, limit: number) {
      return [...devices.values()]
        .filter((d) => d.online && (d.keepaliveAt === null || d.keepaliveAt < keepaliveBefore))
        .sort((a, b) => (a.keepaliveAt ?? 0) - (b.keepaliveAt ?? 0) || byKey(a.deviceId, b.deviceId))
        .slice(0, Math.max(0, limit))
        .map((d) => d.deviceId);
    },

    async replaceChannels(deviceId: DeviceId, inputs: readonly ChannelInput[], at: number) {
      const d = requireDevice(deviceId);
      if (new Set(inputs.map((c) => c.channelId)).size > maxChannels) throw new ChannelLimitError(deviceId, maxChannels);
      for (const channelId of channelMap(deviceId).keys()) indexRemove(channelId, deviceId);
      channels.set(deviceId, new Map());
      sortedIds.delete(deviceId);
      putChannels(d, inputs, at);
    },

    async upsertChannels(deviceId: DeviceId, inputs: readonly ChannelInput[], at: number) {
      putChannels(requireDevice(deviceId), inputs, at);
    },

    async removeChannels(deviceId: DeviceId, channelIds: readonly ChannelId[], at: number) {
      const d = devices.get(deviceId);
      const m = channels.get(deviceId);
      if (d === undefined || m === undefined) return;
      for (const id of channelIds) {
        if (!m.delete(id)) continue;
        indexRemove(id, deviceId);
        sortedIds.delete(deviceId);
      }
      d.channelCount = m.size;
      d.updatedAt = at;
    },

    async listChannels(deviceId: DeviceId, request: PageRequest): Promise<Page<Channel>> {
      const p = normalizePage(request);
      const m = channels.get(deviceId);
      if (m === undefined) return { items: [], total: 0, page: p.page, size: p.size };
      const start = offsetOf(p);
      const items = orderedIds(deviceId)
        .slice(start, start + p.size)
        .map((id) => m.get(id) as Channel);
      return { items, total: m.size, page: p.page, size: p.size };
    },

    async listChannelsAfter(deviceId: DeviceId, after: ChannelId | null, limit: number) {
      const m = channels.get(deviceId);
      if (m === undefined || limit <= 0) return [];
      const ids = orderedIds(deviceId);
      const start = after === null ? 0 : firstAfter(ids, after);
      return ids.slice(start, start + limit).map((id) => m.get(id) as Channel);
    },

    async getChannels(deviceId: DeviceId, channelIds: readonly ChannelId[]) {
      const m = channels.get(deviceId);
      if (m === undefined) return [];
      const out: Channel[] = [];
      for (const id of new Set(channelIds)) {
        const c = m.get(id);
        if (c !== undefined) out.push(c);
      }
      return out;
    },

    async getChannel(deviceId: DeviceId, channelId: ChannelId) {
      return channels.get(deviceId)?.get(channelId) ?? null;
    },

    async findChannelDevice(channelId: ChannelId) {
      let best: Channel | null = null;
      for (const deviceId of channelIndex.get(channelId) ?? []) {
        const c = channels.get(deviceId)?.get(channelId);
        if (c === undefined) continue;
        if (best === null || c.updatedAt > best.updatedAt || (c.updatedAt === best.updatedAt && c.deviceId < best.deviceId)) best = c;
      }
      return best?.deviceId ?? null;
    },

    async close() {},
  } satisfies DeviceRepository;
}
