import type { DeviceId } from '../devices/device.types.ts';

/** Read side of device ownership for listings (SPEC §12 "lists with owner node"). */
export interface OwnerDirectory {
  /** Owner node code per device; devices without an owner are absent from the map. */
  ownersOf(deviceIds: readonly DeviceId[]): Promise<ReadonlyMap<DeviceId, string>>;
}
