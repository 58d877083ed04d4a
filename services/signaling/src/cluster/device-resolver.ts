// SPEC ROUTE-1: how each routed request finds its device, one entry per `routedBy` kind of the route
// table. A request whose key is missing, malformed or unknown resolves to null: the hook then lets the
// local handler answer (400 bad parameter / 404 unknown), exactly as a single instance would.
import { isGbId } from '../core/gb-id.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { DeviceId } from '../devices/device.types.ts';
import { routingKeyOf, type RoutedBy, type RouteSpec } from '../http/route-table.ts';
import type { ChannelMemory } from './channel-memory.ts';
import type { SessionDirectory, SnDirectory } from './device-index.port.ts';

export interface DeviceResolver {
  /**
   * The device the request is about, or null. Rejects with a transient ClusterError when an index in
   * Redis is unreachable (the hook answers "device offline", FAIL-3).
   */
  deviceOf(route: RouteSpec, query: Readonly<Record<string, unknown>>): Promise<DeviceId | null>;
}

export interface DeviceResolverDeps {
  readonly devices: Pick<DeviceRepository, 'findChannelDevice'>;
  readonly sessions: SessionDirectory;
  readonly sns: SnDirectory;
  /** Channel lookups are remembered here for the HTTP edge (channel-memory.ts). */
  readonly channelMemory?: ChannelMemory;
}

export function createDeviceResolver(deps: DeviceResolverDeps): DeviceResolver {
  const byKind: { readonly [K in RoutedBy]: (key: string) => Promise<DeviceId | null> } = {
    device: async (deviceId) => (isGbId(deviceId) ? deviceId : null),
    channel: async (channelId) => {
      if (!isGbId(channelId)) return null;
      const deviceId = await deps.devices.findChannelDevice(channelId);
      if (deviceId !== null) deps.channelMemory?.remember(channelId, deviceId);
      return deviceId;
    },
    session: (sessionId) => deps.sessions.deviceOf(sessionId),
    sn: (sn) => deps.sns.deviceOf(sn),
  };
  return {
    async deviceOf(route, query) {
      if (route.routedBy === null) return null;
      const key = routingKeyOf(route, query)?.trim();
      if (key === undefined || key === '') return null;
      return byKind[route.routedBy](key);
    },
  };
}
