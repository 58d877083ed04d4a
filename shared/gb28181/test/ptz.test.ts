// PTZCmd (GB/T 28181-2016 A.3). Every expected hex string was computed by hand:
// byte2 = 0F (version 0, check (A+5+0)%16 = F); byte8 = (sum of bytes 1-7) % 256,
// e.g. right at pan speed 80H: A5+0F+01+01+80+00+00 = 136H -> 36.
import assert from 'node:assert/strict';
import { decodePtzCmd, encodePtzCmd, ptzForControl, type PtzCommand } from '../src/index.ts';
import { test, throwsGb } from './support.ts';

const move = (direction: Extract<PtzCommand, { kind: 'move' }>['direction'], panSpeed: number, tiltSpeed: number): PtzCommand => ({
  kind: 'move',
  ...(direction === undefined ? {} : { direction }),
  panSpeed,
  tiltSpeed,
  zoomSpeed: 0,
});

const CASES: Array<[string, PtzCommand, number, string]> = [
  ['right 80H (sample 11)', move('right', 0x80, 0), 1, 'A50F010180000036'],
  ['left 1FH (SPVMN PTZ_Left)', move('left', 0x1f, 0), 1, 'A50F01021F0000D6'],
  ['right 1FH (SPVMN PTZ_Right)', move('right', 0x1f, 0), 1, 'A50F01011F0000D5'],
  ['stop (SPVMN PTZ_Stop)', { kind: 'stop' }, 1, 'A50F0100000000B5'],
  ['up tilt 1FH', move('up', 0, 0x1f), 1, 'A50F0108001F00DC'],
  ['down tilt 80H', move('down', 0, 0x80), 1, 'A50F010400800039'],
  ['upleft 20H/20H', move('upleft', 0x20, 0x20), 1, 'A50F010A202000FF'],
  ['downright 10H/10H', move('downright', 0x10, 0x10), 1, 'A50F0105101000DA'],
  ['zoom in speed 5', { kind: 'move', zoom: 'in', panSpeed: 0, tiltSpeed: 0, zoomSpeed: 5 }, 1, 'A50F011000005015'],
  ['zoom out speed F', { kind: 'move', zoom: 'out', panSpeed: 0, tiltSpeed: 0, zoomSpeed: 15 }, 1, 'A50F01200000F0C5'],
  ['preset set 1', { kind: 'preset', action: 'set', preset: 1 }, 1, 'A50F018100010037'],
  ['preset call 3', { kind: 'preset', action: 'call', preset: 3 }, 1, 'A50F01820003003A'],
  ['preset delete 255', { kind: 'preset', action: 'delete', preset: 255 }, 1, 'A50F018300FF0037'],
  ['stop at address 123H', { kind: 'stop' }, 0x123, 'A50F2300000001D8'],
  ['focus near 40H', { kind: 'fi', focus: 'near', focusSpeed: 0x40, irisSpeed: 0 }, 1, 'A50F014240000037'],
  ['focus far 10H', { kind: 'fi', focus: 'far', focusSpeed: 0x10, irisSpeed: 0 }, 1, 'A50F014110000006'],
  ['iris open 30H', { kind: 'fi', iris: 'open', focusSpeed: 0, irisSpeed: 0x30 }, 1, 'A50F014400300029'],
  ['iris close 30H', { kind: 'fi', iris: 'close', focusSpeed: 0, irisSpeed: 0x30 }, 1, 'A50F01480030002D'],
  ['cruise speed group 1 = 123H', { kind: 'cruise', action: 'speed', group: 1, value: 0x123 }, 1, 'A50F01860123106F'],
  ['aux switch 1 on', { kind: 'aux', action: 'on', switchNo: 1 }, 1, 'A50F018C01000042'],
  ['scan start group 1', { kind: 'scan', action: 'start', group: 1 }, 1, 'A50F01890100003F'],
];

test('encodePtzCmd produces the hand-computed bytes', () => {
  for (const [name, command, address, hex] of CASES) assert.equal(encodePtzCmd(command, address), hex, name);
});

test('decodePtzCmd inverts them (address and command)', () => {
  for (const [name, command, address, hex] of CASES) assert.deepEqual(decodePtzCmd(hex), { address, command }, name);
  assert.deepEqual(decodePtzCmd('a50f0100000000b5'), { address: 1, command: { kind: 'stop' } }); // lower case accepted
});

test('API command names map to Annex A.3 moves', () => {
  assert.equal(encodePtzCmd(ptzForControl('left', 0x80)), 'A50F010280000037');
  assert.equal(encodePtzCmd(ptzForControl('upright', 0x40)), 'A50F01094040003E');
  assert.equal(encodePtzCmd(ptzForControl('zoomin', 255)), 'A50F01100000F0B5'); // 255 >> 4 = F
  assert.equal(encodePtzCmd(ptzForControl('stop', 0)), 'A50F0100000000B5');
});

test('malformed PTZCmd strings are refused with GB_ERR_PTZ', () => {
  throwsGb(() => decodePtzCmd('A50F010180000037'), 'GB_ERR_PTZ'); // checksum off by one
  throwsGb(() => decodePtzCmd('A51F0100000000C5'), 'GB_ERR_PTZ'); // byte 2 check nibble should be 0 for version 1
  throwsGb(() => decodePtzCmd('A40F0100000000B4'), 'GB_ERR_PTZ'); // header not A5
  throwsGb(() => decodePtzCmd('A50F01000000B5'), 'GB_ERR_PTZ'); // 7 bytes
  throwsGb(() => decodePtzCmd('A50F01000000G0B5'), 'GB_ERR_PTZ'); // not hex
  // another version with a consistent check nibble is accepted: version 1 -> byte2 10H
  assert.deepEqual(decodePtzCmd('A5100100000000B6'), { address: 1, command: { kind: 'stop' } });
});

test('contradictory bits decode as unknown, not as a move', () => {
  // left+right (03H): A5+0F+01+03 = B8
  assert.deepEqual(decodePtzCmd('A50F0103000000B8').command, { kind: 'unknown', instruction: 3, data1: 0, data2: 0, data3: 0 });
});

test('out-of-range arguments are refused with GB_ERR_ARGUMENT', () => {
  throwsGb(() => encodePtzCmd(move('left', 256, 0)), 'GB_ERR_ARGUMENT');
  throwsGb(() => encodePtzCmd({ kind: 'move', zoom: 'in', panSpeed: 0, tiltSpeed: 0, zoomSpeed: 16 }), 'GB_ERR_ARGUMENT');
  throwsGb(() => encodePtzCmd({ kind: 'preset', action: 'call', preset: 0 }), 'GB_ERR_ARGUMENT');
  throwsGb(() => encodePtzCmd({ kind: 'stop' }, 0x1000), 'GB_ERR_ARGUMENT');
  throwsGb(() => ptzForControl('left', -1), 'GB_ERR_ARGUMENT');
});
