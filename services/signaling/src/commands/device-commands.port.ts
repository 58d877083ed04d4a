// PTZ beyond moves, device configuration and the GB/T 28181-2022 commands (SPEC §8 "Also"), for the
// devices the local instance owns. HTTP handlers only see this port; sip/sip-device-commands.ts is
// the SIP implementation. Errors: DeviceOfflineError (4601), DeviceTimeoutError (4606),
// DeviceRejectedError (4607), ControlUnavailableError (4608), GbVersionUnsupportedError (4610).
import type { ManscdpNode } from '@vms/gb28181';
import type { ChannelRef } from '../control/device-control.port.ts';
import type { DeviceId } from '../devices/device.types.ts';

export const PRESET_ACTIONS = ['set', 'goto', 'delete'] as const;
export type PresetAction = (typeof PRESET_ACTIONS)[number];
/** Annex A.3.4: preset numbers are one byte, 1-255. */
export const PRESET_MIN = 1;
export const PRESET_MAX = 255;

/** Annex A.3.5; `stop` is the PTZ stop command (the standard has no cruise-stop code). */
export const CRUISE_ACTIONS = ['add', 'remove', 'speed', 'dwell', 'start', 'stop'] as const;
export type CruiseAction = (typeof CRUISE_ACTIONS)[number];
/** Annex A.3.6; `left`/`right` set the scan's bounds at the current position; `stop` as for cruise. */
export const SCAN_ACTIONS = ['start', 'left', 'right', 'speed', 'stop'] as const;
export type ScanAction = (typeof SCAN_ACTIONS)[number];
/** Cruise speed and dwell time, scan speed: 12 bits (Annex A.3.5, A.3.6). */
export const PTZ_VALUE_MAX = 4095;

export const TRACK_MODES = ['auto', 'manual', 'stop'] as const;
export type TrackMode = (typeof TRACK_MODES)[number];

export interface Preset {
  readonly presetId: string;
  readonly presetName: string | null;
}

export interface HomePositionSetting {
  readonly enabled: boolean;
  /** Seconds of idle before the camera returns home. */
  readonly resetTimeSec?: number;
  readonly presetIndex?: number;
}

/** §A.2.3.1 drag-to-zoom rectangle, in pixels of a `length` × `width` picture. */
export interface ZoomArea {
  readonly length: number;
  readonly width: number;
  readonly midPointX: number;
  readonly midPointY: number;
  readonly lengthX: number;
  readonly lengthY: number;
}

export interface BasicParamSetting {
  readonly name?: string;
  readonly expirationSec?: number;
  readonly heartBeatIntervalSec?: number;
  readonly heartBeatCount?: number;
}

/** A Response as the device sent it: its elements after CmdType/SN/DeviceID, as JSON. */
export interface DeviceAnswer {
  readonly deviceId: string;
  readonly fields: ManscdpNode;
}

export interface SnapshotRequest {
  readonly sessionId: string;
  readonly uploadUrl: string;
  readonly count: number;
}

export interface StoredSnapshot {
  readonly name: string;
  readonly deviceId: DeviceId;
  readonly channelId: string;
  readonly sessionId: string;
  readonly size: number;
  readonly storedAt: number;
}

export interface SnapshotPicture {
  readonly contentType: 'image/jpeg';
  readonly size: number;
  readonly base64: string;
}

export interface UpgradeState {
  readonly deviceId: DeviceId;
  readonly sessionId: string;
  readonly firmware: string;
  readonly state: 'running' | 'done' | 'failed';
  readonly startedAt: number;
  readonly finishedAt: number | null;
  /** Firmware the device reports after the upgrade. */
  readonly runningFirmware: string | null;
  readonly reason: string | null;
}

export interface DeviceCommandService {
  // PTZ beyond moves (GB/T 28181-2016 Annex A.3.4-A.3.6, §A.2.3.1) and device configuration
  preset(target: ChannelRef, action: PresetAction, presetId: number): Promise<void>;
  presets(target: ChannelRef): Promise<readonly Preset[]>;
  cruise(target: ChannelRef, action: CruiseAction, group: number, value: number): Promise<void>;
  scan(target: ChannelRef, action: ScanAction, group: number, speed: number): Promise<void>;
  homePosition(target: ChannelRef, setting: HomePositionSetting): Promise<void>;
  dragZoom(target: ChannelRef, direction: 'in' | 'out', area: ZoomArea): Promise<void>;
  configureBasic(deviceId: DeviceId, setting: BasicParamSetting): Promise<void>;
  downloadConfig(deviceId: DeviceId, configType: string): Promise<DeviceAnswer>;
  // GB/T 28181-2022 only: GbVersionUnsupportedError for other devices
  snapshot(target: ChannelRef, count: number, intervalSec: number): Promise<SnapshotRequest>;
  snapshots(deviceId: DeviceId): Promise<readonly StoredSnapshot[]>;
  snapshotPicture(deviceId: DeviceId, name: string): Promise<SnapshotPicture>;
  /** An upload from a device: `token` is the one in the UploadURL handed out (UploadNotFoundError). */
  receiveSnapshot(token: string, picture: Buffer): Promise<StoredSnapshot>;
  upgrade(deviceId: DeviceId, firmware: string, fileUrl: string, manufacturer: string): Promise<UpgradeState>;
  upgradeState(deviceId: DeviceId): Promise<UpgradeState | null>;
  sdCardStatus(deviceId: DeviceId): Promise<DeviceAnswer>;
  formatSdCard(deviceId: DeviceId, index: number): Promise<void>;
  ptzPrecise(target: ChannelRef, pan: string, tilt: string, zoom: string): Promise<void>;
  ptzPosition(target: ChannelRef): Promise<DeviceAnswer>;
  targetTrack(target: ChannelRef, mode: TrackMode): Promise<void>;
  cruiseTracks(target: ChannelRef): Promise<DeviceAnswer>;
  cruiseTrack(target: ChannelRef, number: number): Promise<DeviceAnswer>;
  homePositionQuery(target: ChannelRef): Promise<DeviceAnswer>;
}
