/**
 * The store of upstream platforms and of the channels each one receives (SPEC CASC-2). Domain
 * verbs only; adapters: memory (standalone mode, tests) and MySQL (deploy/sql/V004).
 */
import type { ChannelKey, ChannelShare, SharedChannel, UpstreamPlatform } from './platform.ts';

export interface PlatformRepository {
  /** Enabled platforms, ordered by server id: the ones the cascade leader registers to. */
  listEnabled(): Promise<UpstreamPlatform[]>;
  /** Every platform, ordered by server id (administration). */
  listAll(): Promise<UpstreamPlatform[]>;
  get(serverId: string): Promise<UpstreamPlatform | null>;
  /** Validates (CASCADE_ERR_INVALID_PLATFORM), then inserts or replaces the platform with this server id. */
  upsert(platform: UpstreamPlatform): Promise<void>;
  /** Removes the platform and its channel list; true when it existed. */
  remove(serverId: string): Promise<boolean>;

  /** The channels the platform receives, ordered by device id then channel id. */
  listChannels(serverId: string): Promise<SharedChannel[]>;
  /** Adds channels or updates their placement; CASCADE_ERR_PLATFORM_NOT_FOUND for an unknown platform. */
  shareChannels(serverId: string, channels: readonly SharedChannel[]): Promise<void>;
  /** Replaces the platform's whole channel list in one step. */
  replaceChannels(serverId: string, channels: readonly SharedChannel[]): Promise<void>;
  /** Stops sharing these channels with the platform; resolves with how many were shared. */
  unshareChannels(serverId: string, channels: readonly ChannelKey[]): Promise<number>;
  /**
   * Which platforms (enabled or not) receive this channel, ordered by platform id: the targets of a
   * catalog or alarm NOTIFY about it.
   */
  sharesOf(deviceId: string, channelId: string): Promise<ChannelShare[]>;
  /**
   * The shares of a device's channels, at most `limit` rows, ordered by channel id then platform id: the
   * targets of its channels' ON/OFF when it comes online or goes offline. One indexed lookup, so a device
   * nothing upstream receives (the usual case in a registration storm) costs one empty query.
   */
  sharesOfDevice(deviceId: string, limit: number): Promise<ChannelShare[]>;
  /**
   * A channel (or, without `channelId`, every channel of a device) was deleted: drop its shares on
   * every platform. Call it after the DEL notify went out — sharesOf must still find the targets.
   */
  forgetChannels(deviceId: string, channelId?: string): Promise<number>;

  /** Idempotent; later calls reject with CASCADE_ERR_CLOSED. Does not close a pool it was given. */
  close(): Promise<void>;
}
