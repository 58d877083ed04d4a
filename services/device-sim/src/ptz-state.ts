// What a PTZ camera remembers between commands, so its answers follow what the platform did: presets
// set and deleted by PTZCmd (Annex A.3.4), cruise tracks built by cruise add/remove (A.3.5), the home
// position (§A.2.3.1), the precise position (2022 PTZPreciseCtrl), the BasicParam settings
// (DeviceConfig), the firmware (DeviceUpgrade) and the SD cards (FormatSDCard). Per device, in memory.
import type { DecodedPtzCmd, DeviceControlCommand } from '@vms/gb28181';

export interface PtzPosition {
  pan: string;
  tilt: string;
  zoom: string;
}

export interface HomePositionState {
  enabled: string;
  resetTime: string;
  presetIndex: string;
}

export interface BasicParamState {
  name: string;
  expiration: string;
  heartBeatInterval: string;
  heartBeatCount: string;
}

export interface SdCardState {
  id: string;
  /** §A.2.6.16 values (ok, formatting, unformatted, idle, error); the simulator uses the first two. */
  status: 'ok' | 'formatting';
  formatCount: number;
}

/** Bounds a misbehaving platform cannot grow past (presets are one byte; tracks too). */
const MAX_PRESETS = 255;
const MAX_TRACK_POINTS = 64;

export class PtzState {
  /** channel id → preset number → name */
  readonly presets = new Map<string, Map<number, string>>();
  /** channel id → cruise group → preset numbers */
  readonly cruiseTracks = new Map<string, Map<number, number[]>>();
  readonly home = new Map<string, HomePositionState>();
  readonly positions = new Map<string, PtzPosition>();
  readonly sdCards: SdCardState[] = [{ id: '1', status: 'ok', formatCount: 0 }];
  basic: BasicParamState;
  firmware: string;

  constructor(init: { name: string; firmware: string; expiration: number; heartBeatInterval: number; heartBeatCount: number }) {
    this.basic = { name: init.name, expiration: String(init.expiration), heartBeatInterval: String(init.heartBeatInterval), heartBeatCount: String(init.heartBeatCount) };
    this.firmware = init.firmware;
  }

  /** Applies a DeviceControl the way a camera would; returns false for commands it ignores. */
  apply(targetId: string, command: DeviceControlCommand, ptz: DecodedPtzCmd | undefined): void {
    if (ptz !== undefined) this.#applyPtz(targetId, ptz);
    if (command.type === 'HomePosition') this.home.set(targetId, { enabled: command.enabled, resetTime: command.resetTime ?? '', presetIndex: command.presetIndex ?? '' });
    if (command.type === 'PTZPreciseCtrl') this.positions.set(targetId, { pan: command.pan, tilt: command.tilt, zoom: command.zoom });
    if (command.type === 'FormatSDCard') {
      const card = this.sdCards.find((c) => c.id === command.index);
      if (card !== undefined) card.formatCount++;
    }
  }

  #applyPtz(channelId: string, { command: c }: DecodedPtzCmd): void {
    if (c.kind === 'preset') {
      const presets = this.presets.get(channelId) ?? new Map<number, string>();
      this.presets.set(channelId, presets);
      if (c.action === 'set' && (presets.has(c.preset) || presets.size < MAX_PRESETS)) presets.set(c.preset, `预置点${c.preset}`);
      if (c.action === 'delete') presets.delete(c.preset);
    }
    if (c.kind === 'cruise' && (c.action === 'add' || c.action === 'remove')) {
      const tracks = this.cruiseTracks.get(channelId) ?? new Map<number, number[]>();
      this.cruiseTracks.set(channelId, tracks);
      const points = tracks.get(c.group) ?? [];
      if (c.action === 'add' && points.length < MAX_TRACK_POINTS) points.push(c.value);
      if (c.action === 'remove') points.splice(0, points.length, ...points.filter((p) => p !== c.value));
      if (points.length === 0) tracks.delete(c.group);
      else tracks.set(c.group, points);
    }
  }
}
