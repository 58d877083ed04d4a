import type {
  Channel,
  ChannelId,
  ChannelInput,
  Device,
  DeviceFilter,
  DeviceId,
  DeviceInfoUpdate,
  DeviceProvision,
  DeviceRegistration,
  Page,
  PageRequest,
} from './device.types.ts';

/**
 * Channels one device may hold (SPEC SEC-3). Lower platforms registered as devices legitimately carry
 * tens of thousands; a device over the cap is refused (ChannelLimitError, SIP 403), nothing stored.
 */
export const DEFAULT_MAX_CHANNELS_PER_DEVICE = 50_000;

/** Options every implementation takes. */
export interface DeviceRepositoryLimits {
  /** Default DEFAULT_MAX_CHANNELS_PER_DEVICE. */
  readonly maxChannelsPerDevice?: number;
}

/**
 * Durable device and channel records (not ownership: that is runtime state, SPEC OWN-1).
 * Implementations: `device-repository.sqlite.ts` (the embedded store of a single instance),
 * `device-repository.mysql.ts` and `device-repository.memory.ts` (tests); all pass
 * `test/devices/device-repository.contract.ts`.
 *
 * Errors: `DeviceNotFoundError` where a method needs an existing device, `StorageError` for store
 * failures. Times are epoch milliseconds passed in by the caller.
 *
 * Catalog operations cost what their input costs, never what the device already holds (SPEC SEC-3: a
 * device that sends large catalogs must not make each message slower): `upsertChannels`,
 * `removeChannels` and `getChannels` touch only the channels they name (keyed by (device, channel)),
 * and keep `channelCount` by difference, not by recounting; `replaceChannels` costs the new list plus
 * deleting the old one. `upsertChannels` and `replaceChannels` throw `ChannelLimitError` and store
 * nothing when the device would hold more than `maxChannelsPerDevice` channels.
 */
export interface DeviceRepository {
  /**
   * Upsert on a successful REGISTER: an unknown device is created in DEFAULT_TENANT; a known one keeps
   * its tenant, name, password and charset. Sets address, transport, expiry, registeredAt = keepaliveAt
   * = `at`, online = true.
   */
  registerDevice(registration: DeviceRegistration): Promise<Device>;

  /** Operator provisioning: creates the (offline) device or updates the given fields. */
  provisionDevice(provision: DeviceProvision, at: number): Promise<Device>;

  /** Stores what a DeviceInfo response reported. Throws DeviceNotFoundError. */
  updateDeviceInfo(deviceId: DeviceId, info: DeviceInfoUpdate, at: number): Promise<void>;

  getDevice(deviceId: DeviceId): Promise<Device | null>;

  /** Ordered by device id. */
  listDevices(filter: DeviceFilter): Promise<Page<Device>>;

  countOnlineDevices(): Promise<number>;

  /**
   * Records a Keepalive: keepaliveAt = max(keepaliveAt, at). Does not change the online flag (see
   * `markOnline`). Synchronous and O(1): the MySQL adapter buffers and writes in batches (OWN-5), and
   * its reads and scans see buffered values. Unknown devices are ignored.
   */
  touchKeepalive(deviceId: DeviceId, at: number): void;

  /** Marks devices online (keepaliveAt = max(keepaliveAt, at)); returns those that were offline. */
  markOnline(deviceIds: readonly DeviceId[], at: number): Promise<DeviceId[]>;

  /**
   * Marks devices offline; returns those that were online. With `onlyIfKeepaliveBefore`, a device
   * whose keepalive is at or after that time is left online (a keepalive raced the offline scan).
   */
  markOffline(deviceIds: readonly DeviceId[], options?: { readonly onlyIfKeepaliveBefore?: number }): Promise<DeviceId[]>;

  /** Offline scan query (OWN-2): online devices whose last keepalive is before `keepaliveBefore`, oldest first. */
  findSilentDevices(keepaliveBefore: number, limit: number): Promise<DeviceId[]>;

  /**
   * Catalog sync finished: the device's channels become exactly `channels` (an id given twice: the
   * later item). Throws DeviceNotFoundError, ChannelLimitError.
   */
  replaceChannels(deviceId: DeviceId, channels: readonly ChannelInput[], at: number): Promise<void>;

  /**
   * Catalog notification ADD/UPDATE or unsolicited catalog: insert or update by (device, channel id).
   * Throws DeviceNotFoundError, ChannelLimitError (counting only the ids not stored yet).
   */
  upsertChannels(deviceId: DeviceId, channels: readonly ChannelInput[], at: number): Promise<void>;

  /** Catalog notification DEL. Unknown ids are ignored. */
  removeChannels(deviceId: DeviceId, channelIds: readonly ChannelId[], at: number): Promise<void>;

  /** Ordered by channel id (the operator API's numbered pages). */
  listChannels(deviceId: DeviceId, page: PageRequest): Promise<Page<Channel>>;

  /**
   * Keyset page: up to `limit` channels with id > `after` (null: from the first), ordered by channel
   * id. Reading a whole catalog this way costs the catalog once, whatever its size.
   */
  listChannelsAfter(deviceId: DeviceId, after: ChannelId | null, limit: number): Promise<Channel[]>;

  /** The stored channels among `channelIds` (unknown ids left out; any order). Costs the ids given. */
  getChannels(deviceId: DeviceId, channelIds: readonly ChannelId[]): Promise<Channel[]>;

  getChannel(deviceId: DeviceId, channelId: ChannelId): Promise<Channel | null>;

  /**
   * The device a channel belongs to (routing by channelId). If several devices report the same
   * channel id, the most recently updated wins (ties: smallest device id).
   */
  findChannelDevice(channelId: ChannelId): Promise<DeviceId | null>;

  /** Writes buffered state and stops timers. Idempotent. Does not close a pool it was given. */
  close(): Promise<void>;
}
