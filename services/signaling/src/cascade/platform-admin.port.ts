// What the platform administration API needs from the cascade side (SPEC CASC-2): the store, the id
// this platform presents upstream, and the hook that restarts a registration after an edit.
import type { PlatformRepository } from '@vms/cascade';

export interface PlatformAdmin {
  readonly platforms: PlatformRepository;
  /** Our server id: the default `localId` of a new platform. */
  readonly localId: string;
  /** After a create / edit / delete on this instance: refresh, and restart its registration when leading. */
  platformChanged(serverId: string): Promise<void>;
}
