/**
 * PTZCmd: the 8-byte front-end control command of GB/T 28181-2016 Annex A.3, carried in
 * DeviceControl as 16 hexadecimal characters.
 *
 *   byte1  A5H                                     (A.3.1 command header)
 *   byte2  high nibble version (0H), low nibble check = (A + 5 + version) % 16  -> 0FH
 *   byte3  address, low 8 bits
 *   byte4  instruction code
 *   byte5  data 1          byte6  data 2
 *   byte7  high nibble data 3, low nibble address high 4 bits
 *   byte8  check = (byte1 + ... + byte7) % 256
 *
 * Instruction families: A.3.2 PTZ (pan/tilt/zoom bits), A.3.3 FI (focus/iris), A.3.4 presets,
 * A.3.5 cruise, A.3.6 auto-scan, A.3.7 auxiliary switch.
 */
import { GbArgumentError, GbPtzError } from './errors.ts';

const HEADER = 0xa5; // A.3.1
const VERSION = 0x0; // A.3.1: version 1.0 of the command set is encoded as 0H
const MAX_ADDRESS = 0xfff; // 12 bits: byte3 + low nibble of byte7
const MAX_BYTE = 0xff;
const MAX_NIBBLE = 0xf;
const MAX_12BIT = 0xfff;

// A.3.2 PTZ instruction bits (byte4 bits 7-6 = 00)
const BIT_RIGHT = 0x01;
const BIT_LEFT = 0x02;
const BIT_DOWN = 0x04;
const BIT_UP = 0x08;
const BIT_ZOOM_IN = 0x10; // tele, "放大"
const BIT_ZOOM_OUT = 0x20; // wide, "缩小"
// A.3.3 FI instruction (byte4 bits 7-4 = 0100)
const FI_BASE = 0x40;
const BIT_FOCUS_FAR = 0x01;
const BIT_FOCUS_NEAR = 0x02;
const BIT_IRIS_OPEN = 0x04;
const BIT_IRIS_CLOSE = 0x08;
// A.3.4 - A.3.7 instruction codes
const PRESET_CODES = { set: 0x81, call: 0x82, delete: 0x83 } as const;
const CRUISE_CODES = { add: 0x84, remove: 0x85, speed: 0x86, dwell: 0x87, start: 0x88 } as const;
const SCAN_CODE = 0x89;
const SCAN_SPEED_CODE = 0x8a;
const SCAN_ACTIONS = { start: 0x00, left: 0x01, right: 0x02 } as const;
const AUX_CODES = { on: 0x8c, off: 0x8d } as const;

export type PtzDirection = 'left' | 'right' | 'up' | 'down' | 'upleft' | 'upright' | 'downleft' | 'downright';

export type PtzCommand =
  | { kind: 'stop' }
  /** Pan/tilt and/or zoom; speeds: pan, tilt 0-255, zoom 0-15. */
  | { kind: 'move'; direction?: PtzDirection; zoom?: 'in' | 'out'; panSpeed: number; tiltSpeed: number; zoomSpeed: number }
  /** Focus/iris; no focus and no iris = FI stop. Speeds 0-255. */
  | { kind: 'fi'; focus?: 'near' | 'far'; iris?: 'open' | 'close'; focusSpeed: number; irisSpeed: number }
  | { kind: 'preset'; action: 'set' | 'call' | 'delete'; preset: number }
  /** add/remove: value = preset number; speed/dwell: value 0-4095; start: value unused (0). */
  | { kind: 'cruise'; action: 'add' | 'remove' | 'speed' | 'dwell' | 'start'; group: number; value: number }
  | { kind: 'scan'; action: 'start' | 'left' | 'right' | 'speed'; group: number; speed?: number }
  | { kind: 'aux'; action: 'on' | 'off'; switchNo: number }
  /** Decoded only: a well-formed command with an instruction outside A.3.2-A.3.7. */
  | { kind: 'unknown'; instruction: number; data1: number; data2: number; data3: number };

export interface DecodedPtzCmd {
  address: number;
  command: PtzCommand;
}

const DIRECTION_BITS: Readonly<Record<PtzDirection, number>> = {
  left: BIT_LEFT,
  right: BIT_RIGHT,
  up: BIT_UP,
  down: BIT_DOWN,
  upleft: BIT_UP | BIT_LEFT,
  upright: BIT_UP | BIT_RIGHT,
  downleft: BIT_DOWN | BIT_LEFT,
  downright: BIT_DOWN | BIT_RIGHT,
};

/** The 16-hex-character PTZCmd (upper case) for `command` at device `address` (0-4095, usually 1). */
export function encodePtzCmd(command: PtzCommand, address = 1): string {
  checkRange('address', address, MAX_ADDRESS);
  const [instruction, data1, data2, data3] = instructionOf(command);
  const bytes = [
    HEADER,
    (VERSION << 4) | ((((HEADER >> 4) + (HEADER & 0xf) + VERSION) % 16) & 0xf),
    address & 0xff,
    instruction,
    data1,
    data2,
    ((data3 & 0xf) << 4) | (address >> 8),
  ];
  bytes.push(bytes.reduce((a, b) => a + b, 0) % 256);
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join('').toUpperCase();
}

function instructionOf(cmd: PtzCommand): [number, number, number, number] {
  switch (cmd.kind) {
    case 'stop':
      return [0, 0, 0, 0];
    case 'move': {
      checkRange('panSpeed', cmd.panSpeed, MAX_BYTE);
      checkRange('tiltSpeed', cmd.tiltSpeed, MAX_BYTE);
      checkRange('zoomSpeed', cmd.zoomSpeed, MAX_NIBBLE);
      const dir = cmd.direction === undefined ? 0 : DIRECTION_BITS[cmd.direction];
      const zoom = cmd.zoom === 'in' ? BIT_ZOOM_IN : cmd.zoom === 'out' ? BIT_ZOOM_OUT : 0;
      return [dir | zoom, cmd.panSpeed, cmd.tiltSpeed, cmd.zoomSpeed];
    }
    case 'fi': {
      checkRange('focusSpeed', cmd.focusSpeed, MAX_BYTE);
      checkRange('irisSpeed', cmd.irisSpeed, MAX_BYTE);
      const focus = cmd.focus === 'near' ? BIT_FOCUS_NEAR : cmd.focus === 'far' ? BIT_FOCUS_FAR : 0;
      const iris = cmd.iris === 'open' ? BIT_IRIS_OPEN : cmd.iris === 'close' ? BIT_IRIS_CLOSE : 0;
      return [FI_BASE | focus | iris, cmd.focusSpeed, cmd.irisSpeed, 0];
    }
    case 'preset':
      checkRange('preset', cmd.preset, MAX_BYTE, 1);
      return [PRESET_CODES[cmd.action], 0, cmd.preset, 0];
    case 'cruise': {
      checkRange('group', cmd.group, MAX_BYTE);
      const wide = cmd.action === 'speed' || cmd.action === 'dwell';
      checkRange('value', cmd.value, wide ? MAX_12BIT : MAX_BYTE);
      return [CRUISE_CODES[cmd.action], cmd.group, cmd.value & 0xff, wide ? cmd.value >> 8 : 0];
    }
    case 'scan': {
      checkRange('group', cmd.group, MAX_BYTE);
      if (cmd.action !== 'speed') return [SCAN_CODE, cmd.group, SCAN_ACTIONS[cmd.action], 0];
      const speed = cmd.speed ?? 0;
      checkRange('speed', speed, MAX_12BIT);
      return [SCAN_SPEED_CODE, cmd.group, speed & 0xff, speed >> 8];
    }
    case 'aux':
      checkRange('switchNo', cmd.switchNo, MAX_BYTE);
      return [AUX_CODES[cmd.action], cmd.switchNo, 0, 0];
    case 'unknown':
      checkRange('instruction', cmd.instruction, MAX_BYTE);
      checkRange('data1', cmd.data1, MAX_BYTE);
      checkRange('data2', cmd.data2, MAX_BYTE);
      checkRange('data3', cmd.data3, MAX_NIBBLE);
      return [cmd.instruction, cmd.data1, cmd.data2, cmd.data3];
  }
}

function checkRange(name: string, value: number, max: number, min = 0): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new GbArgumentError(`${name} must be an integer in ${min}..${max}`);
  }
}

/** Parses and verifies a PTZCmd (both check bytes); GB_ERR_PTZ when malformed. */
export function decodePtzCmd(hex: string): DecodedPtzCmd {
  const text = hex.trim();
  if (!/^[0-9A-Fa-f]{16}$/.test(text)) throw new GbPtzError('PTZCmd must be 16 hexadecimal characters');
  const b = Array.from({ length: 8 }, (_, i) => parseInt(text.slice(i * 2, i * 2 + 2), 16)) as [
    number, number, number, number, number, number, number, number,
  ];
  if (b[0] !== HEADER) throw new GbPtzError('PTZCmd must start with A5');
  const version = b[1] >> 4;
  if ((b[1] & 0xf) !== ((HEADER >> 4) + (HEADER & 0xf) + version) % 16) throw new GbPtzError('PTZCmd byte 2 check nibble mismatch');
  const sum = b.slice(0, 7).reduce((a, x) => a + x, 0) % 256;
  if (b[7] !== sum) throw new GbPtzError('PTZCmd checksum mismatch');
  const address = ((b[6] & 0xf) << 8) | b[2];
  return { address, command: commandOf(b[3], b[4], b[5], b[6] >> 4) };
}

function commandOf(instruction: number, d1: number, d2: number, d3: number): PtzCommand {
  const unknown: PtzCommand = { kind: 'unknown', instruction, data1: d1, data2: d2, data3: d3 };
  if (instruction === 0) return { kind: 'stop' };
  if (instruction < FI_BASE) {
    const direction = directionOf(instruction & 0x0f);
    const zoomBits = instruction & (BIT_ZOOM_IN | BIT_ZOOM_OUT);
    if (direction === null || zoomBits === (BIT_ZOOM_IN | BIT_ZOOM_OUT)) return unknown;
    const move: PtzCommand = { kind: 'move', panSpeed: d1, tiltSpeed: d2, zoomSpeed: d3 };
    if (direction !== undefined) move.direction = direction;
    if (zoomBits !== 0) move.zoom = zoomBits === BIT_ZOOM_IN ? 'in' : 'out';
    return move;
  }
  if (instruction < 0x80) {
    if ((instruction & 0xf0) !== FI_BASE) return unknown;
    const focusBits = instruction & (BIT_FOCUS_FAR | BIT_FOCUS_NEAR);
    const irisBits = instruction & (BIT_IRIS_OPEN | BIT_IRIS_CLOSE);
    if (focusBits === (BIT_FOCUS_FAR | BIT_FOCUS_NEAR) || irisBits === (BIT_IRIS_OPEN | BIT_IRIS_CLOSE)) return unknown;
    const fi: PtzCommand = { kind: 'fi', focusSpeed: d1, irisSpeed: d2 };
    if (focusBits !== 0) fi.focus = focusBits === BIT_FOCUS_NEAR ? 'near' : 'far';
    if (irisBits !== 0) fi.iris = irisBits === BIT_IRIS_OPEN ? 'open' : 'close';
    return fi;
  }
  const preset = keyOf(PRESET_CODES, instruction);
  if (preset !== undefined) return { kind: 'preset', action: preset, preset: d2 };
  const cruise = keyOf(CRUISE_CODES, instruction);
  if (cruise !== undefined) {
    const wide = cruise === 'speed' || cruise === 'dwell';
    return { kind: 'cruise', action: cruise, group: d1, value: cruise === 'start' ? 0 : wide ? (d3 << 8) | d2 : d2 };
  }
  if (instruction === SCAN_CODE) {
    const action = keyOf(SCAN_ACTIONS, d2);
    return action === undefined ? unknown : { kind: 'scan', action, group: d1 };
  }
  if (instruction === SCAN_SPEED_CODE) return { kind: 'scan', action: 'speed', group: d1, speed: (d3 << 8) | d2 };
  const aux = keyOf(AUX_CODES, instruction);
  if (aux !== undefined) return { kind: 'aux', action: aux, switchNo: d1 };
  return unknown;
}

/** undefined = no pan/tilt bits, null = contradictory bits (left+right or up+down). */
function directionOf(bits: number): PtzDirection | undefined | null {
  if (bits === 0) return undefined;
  for (const [dir, mask] of Object.entries(DIRECTION_BITS) as Array<[PtzDirection, number]>) if (mask === bits) return dir;
  return null;
}

function keyOf<K extends string>(table: Readonly<Record<K, number>>, value: number): K | undefined {
  return (Object.keys(table) as K[]).find((k) => table[k] === value);
}

/** Control API command names (SPEC §12 `/vms/ptz/control`). */
export type PtzControlName = PtzDirection | 'zoomin' | 'zoomout' | 'stop';
export const PTZ_CONTROL_NAMES: readonly PtzControlName[] = [
  'left', 'right', 'up', 'down', 'upleft', 'upright', 'downleft', 'downright', 'zoomin', 'zoomout', 'stop',
];

/**
 * The PtzCommand for an API command with one speed 0-255: pan speed for horizontal moves, tilt speed
 * for vertical ones, both for diagonals (as the SPVMN test tool does), and speed/16 for zoom, whose
 * speed field is only 4 bits wide.
 */
export function ptzForControl(name: PtzControlName, speed: number): PtzCommand {
  checkRange('speed', speed, MAX_BYTE);
  if (name === 'stop') return { kind: 'stop' };
  if (name === 'zoomin' || name === 'zoomout') {
    return { kind: 'move', zoom: name === 'zoomin' ? 'in' : 'out', panSpeed: 0, tiltSpeed: 0, zoomSpeed: speed >> 4 };
  }
  const bits = DIRECTION_BITS[name];
  const horizontal = (bits & (BIT_LEFT | BIT_RIGHT)) !== 0;
  const vertical = (bits & (BIT_UP | BIT_DOWN)) !== 0;
  return { kind: 'move', direction: name, panSpeed: horizontal ? speed : 0, tiltSpeed: vertical ? speed : 0, zoomSpeed: 0 };
}
