// Which tenant a device belongs to, for the tenant check that comes before any routing answer (SPEC
// SEC-2): the instance a request enters must refuse another tenant's device before it says anything
// about its owner (4601..4604 would tell whether the device is online and which node holds it). The
// routing hook reads the device's row; the answer is remembered for DEVICE_TENANT_TTL_MS, and the HTTP
// edge (edge-routing.ts) checks the tenant from that memory without I/O. Concurrent lookups of one
// device share one read.
//
// Why a device's tenant may be remembered longer than an owner (1 s): it changes only when an operator
// re-provisions the device, and the owner checks the tenant again from the database before it acts
// (http/access.ts). A stale entry can therefore only, for at most the ttl after a re-provisioning, send
// the old tenant's request on to the owner (which refuses it, 403) or answer it with a routing failure,
// and refuse the new tenant (403). Meanwhile the entry instance costs no database read per burst of
// requests for a device, which matters when the database is the loaded part (a burst of 4603s after an
// owner crash must stay as fast as /healthz). Bounded: the oldest entry goes first.
import type { Clock } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { DeviceId, TenantId } from '../devices/device.types.ts';
import { BoundedTtlMap } from './bounded-ttl-map.ts';
import { OWNER_CACHE_MAX_ENTRIES } from './owner-cache.ts';

/** How long a device's tenant is remembered (see above). */
export const DEVICE_TENANT_TTL_MS = 30_000;

/** The tenant of a device, or `null` when there is no such device. */
export type DeviceTenant = TenantId | null;

export class DeviceTenants {
  readonly #devices: Pick<DeviceRepository, 'getDevice'>;
  readonly #entries: BoundedTtlMap<TenantId>;
  /** Reads in flight: concurrent requests for one device share one read (a burst is one query). */
  readonly #reading = new Map<DeviceId, Promise<DeviceTenant>>();

  constructor(o: { readonly devices: Pick<DeviceRepository, 'getDevice'>; readonly clock: Clock; readonly ttlMs?: number; readonly maxEntries?: number }) {
    this.#devices = o.devices;
    this.#entries = new BoundedTtlMap(o.clock, o.ttlMs ?? DEVICE_TENANT_TTL_MS, o.maxEntries ?? OWNER_CACHE_MAX_ENTRIES);
  }

  /** From memory only: the tenant if read less than ttlMs ago, else undefined (unknown devices are not remembered). */
  peek(deviceId: DeviceId): TenantId | undefined {
    return this.#entries.get(deviceId);
  }

  /** The tenant of `deviceId` (null: no such device); reads the device store on a miss. Rejects with its errors. */
  async tenantOf(deviceId: DeviceId): Promise<DeviceTenant> {
    const known = this.#entries.get(deviceId);
    if (known !== undefined) return known;
    const pending = this.#reading.get(deviceId);
    if (pending !== undefined) return pending;
    const read = (async (): Promise<DeviceTenant> => {
      try {
        const device = await this.#devices.getDevice(deviceId);
        if (device === null) return null; // not remembered: a device that registers now is known at once
        this.#entries.set(deviceId, device.tenantId);
        return device.tenantId;
      } finally {
        this.#reading.delete(deviceId);
      }
    })();
    this.#reading.set(deviceId, read);
    return read;
  }
}
