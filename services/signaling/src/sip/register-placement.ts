// Device placement at REGISTER (issue 14, GB/T 28181-2022 §9.1.2.3 register redirect). Pure: the node
// table's shards come in through `shards()` (this instance's last read), the decision is the routing
// engine's placeDevice, the same on every instance and on the SIP edge.
//
// Only devices known to follow a redirect are redirected: a REGISTER carrying `X-GB-ver: 3.0` (a 2022
// device announces its version so, §附录 J) or a device id / prefix on the allow-list. Every other device is
// served wherever it registers (a 2016 device that received a 302 would just fail to register).
import { compilePlacementRules, placeDevice, type Shard } from '@vms/routing';
import type { PlacementSettings } from '../config/config.types.ts';

export type PlacementVerdict =
  /** Serve here: placement picks this instance, nothing to place on (standalone, no table yet, empty group). */
  | { readonly kind: 'here' }
  | { readonly kind: 'elsewhere'; readonly shard: Shard };

export interface RegisterPlacement {
  /** Whether this REGISTER's device follows a 302 (X-GB-ver: 3.0 or allow-listed) and redirect is on. */
  redirects(deviceId: string, gbVersion: string | undefined): boolean;
  place(deviceId: string): PlacementVerdict;
}

export interface RegisterPlacementOptions {
  readonly settings: PlacementSettings;
  readonly selfCode: string;
  /** The node table as last read (null standalone / before the first read). */
  readonly shards: () => readonly Shard[] | null;
}

const HERE: PlacementVerdict = { kind: 'here' };

/** `X-GB-ver: 3.0` (GB/T 28181-2022); 2.0 is 2016. Anything else is not a 2022 device. */
export const isGb2022 = (version: string | undefined): boolean => version !== undefined && /^\s*3\.\d+\s*$/.test(version);

export function createRegisterPlacement(o: RegisterPlacementOptions): RegisterPlacement {
  const policy = compilePlacementRules(o.settings.rules);
  const allow = o.settings.redirectAllow;
  return {
    redirects(deviceId, gbVersion) {
      if (!o.settings.redirect) return false;
      return isGb2022(gbVersion) || allow.some((p) => deviceId.startsWith(p));
    },
    place(deviceId) {
      const shards = o.shards();
      if (shards === null) return HERE;
      const shard = placeDevice(policy, shards, deviceId);
      return shard === null || shard.code === o.selfCode ? HERE : { kind: 'elsewhere', shard };
    },
  };
}
