import type { Clock } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { NodeDirectory, NodeView } from './node-directory.port.ts';

export interface StandaloneNodeOptions {
  readonly nodeCode: string;
  readonly sipAddress: string;
  /** Read at listing time: the bound HTTP port is known only after start. */
  readonly internalBaseUrl: () => string;
  readonly cascadeNode: boolean;
  readonly version: string;
  readonly startedAt: number;
  readonly clock: Clock;
  readonly devices: DeviceRepository;
}

/** Single instance: the node table is this node, which is also the cascade leader (CASC-1, CASC-5). */
export function createStandaloneNodeDirectory(o: StandaloneNodeOptions): NodeDirectory {
  return {
    async listNodes() {
      const self: NodeView = {
        nodeCode: o.nodeCode,
        sipAddress: o.sipAddress,
        internalBaseUrl: o.internalBaseUrl(),
        cascadeNode: o.cascadeNode,
        online: true,
        onlineDeviceCount: await o.devices.countOnlineDevices(),
        startedAt: o.startedAt,
        lastHeartbeatAt: o.clock.now(),
        version: o.version,
        draining: false,
        drainedShare: 0,
        joinedShare: 1,
      };
      return { nodes: [self], cascadeLeader: o.nodeCode };
    },
    // One instance places every device on itself: nothing to drain to.
    setDraining: async () => null,
  } satisfies NodeDirectory;
}
