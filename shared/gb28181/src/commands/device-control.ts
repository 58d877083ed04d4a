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
  /** §A.2.3.1 drag-to-zoom: a rectangle drawn on the picture (pixels of a Length × Width frame). */
  | { type: 'DragZoom'; direction: 'in' | 'out'; zoom: DragZoomArea }
  /** 2022 §A.2.3.1 precise PTZ: absolute pan/tilt (degrees) and zoom (multiple). */
  | { type: 'PTZPreciseCtrl'; pan: string; tilt: string; zoom: string }
  /** 2022 §A.2.3.1 target tracking: Auto, Manual (with the target area) or Stop. */
  | { type: 'TargetTrack'; value: string; deviceId2?: string; targetArea?: DragZoomArea }
  /** 2022 §A.2.3.1 firmware upgrade; the result comes later as Notify/DeviceUpgradeResult. */
  | { type: 'DeviceUpgrade'; firmware: string; fileUrl: string; manufacturer: string; sessionId: string }
  /** 2022 §A.2.3.1 format the storage card number `index` (1-based). */
  | { type: 'FormatSDCard'; index: string }
  /** A control this package does not model (DragZoomIn, 2022 additions...): the raw fields. */
  | { type: 'Other'; fields: ManscdpNode };

export interface DragZoomArea {
  length: string;
  width: string;
  midPointX: string;
  midPointY: string;
  lengthX: string;
  lengthY: string;
}

const DRAG_ZOOM_FIELDS: FieldSpec<DragZoomArea> = [
  ['length', 'Length'],
  ['width', 'Width'],
  ['midPointX', 'MidPointX'],
  ['midPointY', 'MidPointY'],
  ['lengthX', 'LengthX'],
  ['lengthY', 'LengthY'],
];

type Upgrade = Extract<DeviceControlCommand, { type: 'DeviceUpgrade' }>;
const UPGRADE_FIELDS: FieldSpec<Upgrade> = [
  ['firmware', 'Firmware'],
  ['fileUrl', 'FileURL'],
  ['manufacturer', 'Manufacturer'],
  ['sessionId', 'SessionID'],
];

const areaOf = (node: ManscdpNode): DragZoomArea => {
  const r = readFields(node, DRAG_ZOOM_FIELDS);
  return { length: r.length ?? '', width: r.width ?? '', midPointX: r.midPointX ?? '', midPointY: r.midPointY ?? '', lengthX: r.lengthX ?? '', lengthY: r.lengthY ?? '' };
};

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
  for (const direction of ['in', 'out'] as const) {
    const drag = getNode(fields, direction === 'in' ? 'DragZoomIn' : 'DragZoomOut');
    if (drag !== undefined) return { type: 'DragZoom', direction, zoom: areaOf(drag) };
  }
  const precise = getNode(fields, 'PTZPreciseCtrl');
  if (precise !== undefined) return { type: 'PTZPreciseCtrl', pan: getText(precise, 'Pan') ?? '', tilt: getText(precise, 'Tilt') ?? '', zoom: getText(precise, 'Zoom') ?? '' };
  const track = getText(fields, 'TargetTrack');
  if (track !== undefined) {
    const out: DeviceControlCommand = { type: 'TargetTrack', value: track };
    const id2 = getText(fields, 'DeviceID2');
    if (id2 !== undefined) out.deviceId2 = id2;
    const area = getNode(fields, 'TargetArea');
    if (area !== undefined) out.targetArea = areaOf(area);
    return out;
  }
  const upgrade = getNode(fields, 'DeviceUpgrade');
  if (upgrade !== undefined) {
    const r = readFields(upgrade, UPGRADE_FIELDS);
    return { type: 'DeviceUpgrade', firmware: r.firmware ?? '', fileUrl: r.fileUrl ?? '', manufacturer: r.manufacturer ?? '', sessionId: r.sessionId ?? '' };
  }
  const format = getText(fields, 'FormatSDCard');
  if (format !== undefined) return { type: 'FormatSDCard', index: format };
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
    case 'DragZoom':
      return { [cmd.direction === 'in' ? 'DragZoomIn' : 'DragZoomOut']: writeFields({}, cmd.zoom, DRAG_ZOOM_FIELDS) };
    case 'PTZPreciseCtrl':
      return { PTZPreciseCtrl: { Pan: cmd.pan, Tilt: cmd.tilt, Zoom: cmd.zoom } };
    case 'TargetTrack': {
      const node: ManscdpNode = { TargetTrack: cmd.value };
      if (cmd.deviceId2 !== undefined) node['DeviceID2'] = cmd.deviceId2;
      if (cmd.targetArea !== undefined) node['TargetArea'] = writeFields({}, cmd.targetArea, DRAG_ZOOM_FIELDS);
      return node;
    }
    case 'DeviceUpgrade':
      return { DeviceUpgrade: writeFields({}, cmd, UPGRADE_FIELDS) };
    case 'FormatSDCard':
      return { FormatSDCard: cmd.index };
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
