// Live operations on a device the local instance owns (SPEC §8, §12). The SIP-backed implementation
// arrives with the SIP stack; HTTP handlers only see this port. Errors: DeviceOfflineError,
// DeviceTimeoutError, DeviceRejectedError, RecordQueryNotFoundError, ControlUnavailableError.
import type { GbLocalTime } from '../core/gb-time.ts';
import type { ChannelId, DeviceId } from '../devices/device.types.ts';

/** SPEC §12 PTZ commands. */
export const PTZ_COMMANDS = ['left', 'right', 'up', 'down', 'upleft', 'upright', 'downleft', 'downright', 'zoomin', 'zoomout', 'stop'] as const;
export type PtzCommand = (typeof PTZ_COMMANDS)[number];

/** SPEC §12 device control actions. */
export const DEVICE_ACTIONS = ['reboot', 'guard', 'unguard', 'record', 'stoprecord', 'resetalarm'] as const;
export type DeviceAction = (typeof DEVICE_ACTIONS)[number];

/** PTZ speed, one byte of PTZCmd (GB/T 28181 Annex A.3); zoom uses the upper 4 bits. */
export const PTZ_SPEED_MIN = 0;
export const PTZ_SPEED_MAX = 255;
export const PTZ_SPEED_DEFAULT = 128;

export interface ChannelRef {
  readonly deviceId: DeviceId;
  readonly channelId: ChannelId;
}

export interface TimeRange {
  readonly start: GbLocalTime;
  readonly end: GbLocalTime;
}

export interface DeviceInfo {
  readonly deviceId: DeviceId;
  readonly deviceName: string | null;
  readonly manufacturer: string | null;
  readonly model: string | null;
  readonly firmware: string | null;
  readonly channelCount: number | null;
}

export interface DeviceStatus {
  readonly deviceId: DeviceId;
  /** `Online` element: the device's own view. */
  readonly online: boolean;
  /** `Status` element: OK / ERROR. */
  readonly status: 'OK' | 'ERROR';
  readonly encoding: boolean | null;
  readonly recording: boolean | null;
  readonly deviceTime: GbLocalTime | null;
  readonly alarms: readonly { readonly deviceId: string; readonly status: string }[];
}

export type CatalogSyncState = 'idle' | 'running' | 'done' | 'failed';

export interface CatalogProgress {
  readonly deviceId: DeviceId;
  readonly state: CatalogSyncState;
  /** SumNum announced by the device; null until the first response. */
  readonly total: number | null;
  readonly received: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
  /** State `done` with a partial catalog: the wait ended before all `total` items arrived (kept, not replacing). */
  readonly partial: boolean;
  readonly error: string | null;
}

export interface RecordItem {
  readonly deviceId: string;
  readonly name: string | null;
  readonly filePath: string | null;
  readonly address: string | null;
  readonly startTime: GbLocalTime;
  readonly endTime: GbLocalTime;
  readonly secrecy: number | null;
  readonly type: string | null;
  readonly recorderId: string | null;
  readonly fileSize: number | null;
}

export interface RecordQueryResult {
  readonly sn: string;
  readonly deviceId: DeviceId;
  readonly channelId: ChannelId;
  /** SumNum announced by the device; null until the first response. */
  readonly total: number | null;
  /** `running` while MESSAGEs are awaited; `done` once complete or when the wait ended with items; `failed`: nothing came. */
  readonly state: 'running' | 'done' | 'failed';
  /** Every announced item arrived. */
  readonly complete: boolean;
  readonly items: readonly RecordItem[];
  readonly error: string | null;
}

export interface DeviceControlService {
  queryDeviceInfo(deviceId: DeviceId): Promise<DeviceInfo>;
  queryDeviceStatus(deviceId: DeviceId): Promise<DeviceStatus>;
  /** Starts a catalog query (or joins the running one) and returns its progress at once. */
  syncCatalog(deviceId: DeviceId): Promise<CatalogProgress>;
  /** Progress of the latest catalog sync; state `idle` if none ran. */
  catalogProgress(deviceId: DeviceId): Promise<CatalogProgress>;
  ptz(target: ChannelRef, command: PtzCommand, speed: number): Promise<void>;
  deviceControl(deviceId: DeviceId, action: DeviceAction): Promise<void>;
  /** Sends a RecordInfo query; the result is collected under the returned SN (SPEC §12 `{sn}`). */
  queryRecords(target: ChannelRef, range: TimeRange): Promise<{ readonly sn: string }>;
  /** Throws RecordQueryNotFoundError for an unknown or expired SN. */
  recordResult(sn: string): Promise<RecordQueryResult>;
}
