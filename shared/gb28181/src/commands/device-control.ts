/**
 * DeviceControl (GB/T 28181-2016 §9.3, §A.2.3): one control element per `<Control>` body.
 * PTZ moves and presets travel as an 8-byte `PTZCmd` (Annex A.3, see ptz.ts), the other controls
 * as keywords: TeleBoot=Boot, RecordCmd=Record|StopRecord, GuardCmd=SetGuard|ResetGuard,
 * AlarmCmd=ResetAlarm, IFameCmd=Send (the 2016 text's spelling; 2022 writes IFrameCmd, both read).
 * The device acknowledges with a Response carrying `<Result>` (common.ts).
 */
import { getNode, getText, readFields, writeFields, type FieldSpec } from '../fields.ts';
import type { BuildOptions, ManscdpMessage } from '../manscdp.ts';
import type { ManscdpNode } from '../xml.ts';
import { buildCommand, expectCommand, headerOf, type ManscdpHeader } from './common.ts';

export type DeviceControlCommand =
  | { type: 'PTZCmd'; ptzCmd: string; controlPriority?: string }
  | { type: 'TeleBoot' }
  | { type: 'RecordCmd'; value: string; streamNumber?: string }
  | { type: 'GuardCmd'; value: string }
  | { type: 'AlarmCmd'; value: string; alarmMethod?: string; alarmType?: string }
  | { type: 'IFrameCmd' }
  | { type: 'HomePosition'; enabled: string; resetTime?: string; presetIndex?: string }
  /** A control this package does not model (DragZoomIn, 2022 additions...): the raw fields. */
  | { type: 'Other'; fields: ManscdpNode };

export interface DeviceControl extends ManscdpHeader {
  command: DeviceControlCommand;
}

export const TELEBOOT_BOOT = 'Boot';
export const IFRAME_SEND = 'Send';
const KEYWORDS = ['Record', 'StopRecord', 'SetGuard', 'ResetGuard', 'ResetAlarm'] as const;

type HomePosition = Extract<DeviceControlCommand, { type: 'HomePosition' }>;
const HOME_POSITION_FIELDS: FieldSpec<HomePosition> = [
  ['enabled', 'Enabled'],
  ['resetTime', 'ResetTime'],
  ['presetIndex', 'PresetIndex'],
];

export function decodeDeviceControl(msg: ManscdpMessage): DeviceControl {
  expectCommand(msg, 'Control', 'DeviceControl');
  return { ...headerOf(msg), command: decodeCommand(msg.fields) };
}

function decodeCommand(fields: ManscdpNode): DeviceControlCommand {
  const info = getNode(fields, 'Info') ?? {};
  const ptzCmd = getText(fields, 'PTZCmd');
  if (ptzCmd !== undefined) {
    const priority = getText(info, 'ControlPriority');
    return priority === undefined ? { type: 'PTZCmd', ptzCmd } : { type: 'PTZCmd', ptzCmd, controlPriority: priority };
  }
  if (getText(fields, 'TeleBoot') !== undefined) return { type: 'TeleBoot' };
  const record = getText(fields, 'RecordCmd');
  if (record !== undefined) {
    const streamNumber = getText(fields, 'StreamNumber');
    const cmd = { type: 'RecordCmd', value: canonicalKeyword(record) } as const;
    return streamNumber === undefined ? cmd : { ...cmd, streamNumber };
  }
  const guard = getText(fields, 'GuardCmd');
  if (guard !== undefined) return { type: 'GuardCmd', value: canonicalKeyword(guard) };
  const alarm = getText(fields, 'AlarmCmd');
  if (alarm !== undefined) {
    const infoFields = readFields(info, [
      ['alarmMethod', 'AlarmMethod'],
      ['alarmType', 'AlarmType'],
    ] as FieldSpec<{ alarmMethod: string; alarmType: string }>);
    return { type: 'AlarmCmd', value: canonicalKeyword(alarm), ...infoFields };
  }
  if (getText(fields, 'IFameCmd') !== undefined || getText(fields, 'IFrameCmd') !== undefined) return { type: 'IFrameCmd' };
  const home = getNode(fields, 'HomePosition');
  if (home !== undefined) return { ...readFields(home, HOME_POSITION_FIELDS), type: 'HomePosition', enabled: getText(home, 'Enabled') ?? '' };
  return { type: 'Other', fields };
}

export function buildDeviceControl(control: DeviceControl, opts?: BuildOptions): Buffer {
  return buildCommand('Control', 'DeviceControl', control, encodeCommand(control.command), opts);
}

function encodeCommand(cmd: DeviceControlCommand): ManscdpNode {
  switch (cmd.type) {
    case 'PTZCmd':
      return cmd.controlPriority === undefined
        ? { PTZCmd: cmd.ptzCmd }
        : { PTZCmd: cmd.ptzCmd, Info: { ControlPriority: cmd.controlPriority } };
    case 'TeleBoot':
      return { TeleBoot: TELEBOOT_BOOT };
    case 'RecordCmd':
      return cmd.streamNumber === undefined ? { RecordCmd: cmd.value } : { RecordCmd: cmd.value, StreamNumber: cmd.streamNumber };
    case 'GuardCmd':
      return { GuardCmd: cmd.value };
    case 'AlarmCmd': {
      const info = writeFields({}, cmd, [
        ['alarmMethod', 'AlarmMethod'],
        ['alarmType', 'AlarmType'],
      ]);
      return Object.keys(info).length === 0 ? { AlarmCmd: cmd.value } : { AlarmCmd: cmd.value, Info: info };
    }
    case 'IFrameCmd':
      return { IFameCmd: IFRAME_SEND };
    case 'HomePosition':
      return { HomePosition: writeFields({}, cmd, HOME_POSITION_FIELDS) };
    case 'Other':
      return cmd.fields;
  }
}

/** Device-level actions of the control API (SPEC §12 `/vms/device/control`). */
export type DeviceControlAction = 'reboot' | 'guard' | 'unguard' | 'record' | 'stoprecord' | 'resetalarm';
export const DEVICE_CONTROL_ACTIONS: readonly DeviceControlAction[] = ['reboot', 'guard', 'unguard', 'record', 'stoprecord', 'resetalarm'];

export function deviceControlForAction(action: DeviceControlAction): DeviceControlCommand {
  switch (action) {
    case 'reboot':
      return { type: 'TeleBoot' };
    case 'guard':
      return { type: 'GuardCmd', value: 'SetGuard' };
    case 'unguard':
      return { type: 'GuardCmd', value: 'ResetGuard' };
    case 'record':
      return { type: 'RecordCmd', value: 'Record' };
    case 'stoprecord':
      return { type: 'RecordCmd', value: 'StopRecord' };
    case 'resetalarm':
      // §A.2.3 AlarmCmd: clears the device's alarm state (all alarm methods when Info names none)
      return { type: 'AlarmCmd', value: 'ResetAlarm' };
  }
}

function canonicalKeyword(value: string): string {
  const lower = value.toLowerCase();
  return KEYWORDS.find((k) => k.toLowerCase() === lower) ?? value;
}
