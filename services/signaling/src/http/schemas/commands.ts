// Schemas of the PTZ-beyond-moves, device configuration and GB/T 28181-2022 routes (route-table.ts),
// and of the devices' snapshot upload endpoint registered beside the table.
import {
  CRUISE_ACTIONS,
  PRESET_ACTIONS,
  PRESET_MAX,
  PRESET_MIN,
  PTZ_VALUE_MAX,
  SCAN_ACTIONS,
  TRACK_MODES,
} from '../../commands/device-commands.port.ts';
import type { RouteId } from '../route-table.ts';
import { anyData, answers, booleanParam, enumParam, gbIdParam, intParam, query, type JsonSchema, type RouteSchema } from './common.ts';

const channel = gbIdParam('channel id');
const device = gbIdParam('device id');
const byChannel = query({ channelId: channel }, ['channelId']);
const byDevice = query({ deviceId: device }, ['deviceId']);
const CHANNEL = 'Owner-routed by channelId: runs on the instance owning the channel’s device (forwarded there from any other).';
const DEVICE = 'Owner-routed by deviceId: runs on the instance owning the device.';
const V2022 = ' GB/T 28181-2022 only: 4610 for a device that registered without X-GB-ver 3.0 and is not listed in vms.gb28181.sip.gb2022-devices.';
const group = intParam(0, 255, 'cruise or scan group number (default 1)');
const px = (what: string): JsonSchema => intParam(0, 65_535, what, false);
const decimalParam = (what: string): JsonSchema => ({ type: 'string', pattern: '^\\s*-?\\d{1,3}(\\.\\d{1,4})?\\s*$', description: what });
const text = (what: string, max: number): JsonSchema => ({ type: 'string', maxLength: max + 16, description: `${what}: at most ${max} characters` });
const answer = (what: string): Readonly<Record<string, JsonSchema>> => answers(anyData(what), what);
const DEVICE_ANSWER = '{deviceId, fields}: the elements of the device’s Response after CmdType/SN/DeviceID, as JSON';

type Ids =
  | 'ptz.preset' | 'ptz.presets' | 'ptz.cruise' | 'ptz.scan' | 'ptz.home' | 'ptz.dragzoom' | 'device.config' | 'device.config.download'
  | 'snapshot.take' | 'snapshot.list' | 'snapshot.picture' | 'device.upgrade' | 'device.upgrade.state' | 'device.sdcard' | 'device.sdcard.format'
  | 'ptz.precise' | 'ptz.position' | 'ptz.track' | 'ptz.cruise.tracks' | 'ptz.cruise.track' | 'ptz.home.query';

export const COMMAND_SCHEMAS: { readonly [K in Ids & RouteId]: RouteSchema } = {
  'ptz.preset': {
    summary: 'Set, go to or delete a preset (PTZCmd 81H/82H/83H)',
    description: CHANNEL,
    tags: ['ptz'],
    querystring: query({ channelId: channel, action: enumParam(PRESET_ACTIONS, 'what to do'), presetId: intParam(PRESET_MIN, PRESET_MAX, 'preset number', false) }, ['channelId', 'action', 'presetId']),
    response: answer('command sent (the device’s SIP 200)'),
  },
  'ptz.presets': { summary: 'The channel’s presets (PresetQuery)', description: CHANNEL, tags: ['ptz'], querystring: byChannel, response: answer('[{presetId, presetName}]') },
  'ptz.cruise': {
    summary: 'Cruise: add/remove a preset, speed, dwell time, start, stop (PTZCmd 84H-88H; stop = PTZ stop)',
    description: CHANNEL,
    tags: ['ptz'],
    querystring: query(
      {
        channelId: channel,
        action: enumParam(CRUISE_ACTIONS, 'what to do'),
        group,
        presetId: intParam(PRESET_MIN, PRESET_MAX, 'add/remove: the preset'),
        value: intParam(0, PTZ_VALUE_MAX, 'speed: cruise speed; dwell: seconds at each preset'),
      },
      ['channelId', 'action'],
    ),
    response: answer('command sent'),
  },
  'ptz.scan': {
    summary: 'Auto-scan: start, set left/right bound here, speed, stop (PTZCmd 89H/8AH; stop = PTZ stop)',
    description: CHANNEL,
    tags: ['ptz'],
    querystring: query({ channelId: channel, action: enumParam(SCAN_ACTIONS, 'what to do'), group, speed: intParam(0, PTZ_VALUE_MAX, 'speed: scan speed') }, ['channelId', 'action']),
    response: answer('command sent'),
  },
  'ptz.home': {
    summary: 'Home position (HomePosition DeviceControl): return to a preset after idle time, or off',
    description: CHANNEL,
    tags: ['ptz'],
    querystring: query(
      { channelId: channel, enabled: booleanParam('home position on'), resetTime: intParam(1, 86_400, 'idle seconds before returning'), presetIndex: intParam(PRESET_MIN, PRESET_MAX, 'the home preset (required when enabled)') },
      ['channelId', 'enabled'],
    ),
    response: answer('command sent'),
  },
  'ptz.dragzoom': {
    summary: 'Drag-to-zoom (DragZoomIn / DragZoomOut): zoom to or out of a rectangle drawn on the picture',
    description: CHANNEL,
    tags: ['ptz'],
    querystring: query(
      {
        channelId: channel,
        direction: enumParam(['in', 'out'], 'zoom in or out'),
        length: px('picture width in pixels'),
        width: px('picture height in pixels'),
        midPointX: px('rectangle centre x'),
        midPointY: px('rectangle centre y'),
        lengthX: px('rectangle width'),
        lengthY: px('rectangle height'),
      },
      ['channelId', 'direction', 'length', 'width', 'midPointX', 'midPointY', 'lengthX', 'lengthY'],
    ),
    response: answer('command sent'),
  },
  'device.config': {
    summary: 'DeviceConfig BasicParam: name, registration expiry, heartbeat interval and count (at least one)',
    description: DEVICE,
    tags: ['device control'],
    querystring: query(
      {
        deviceId: device,
        name: text('device name', 64),
        expiration: intParam(60, 604_800, 'registration expiry, seconds'),
        heartBeatInterval: intParam(5, 3600, 'heartbeat interval, seconds'),
        heartBeatCount: intParam(1, 100, 'missed heartbeats before offline'),
      },
      ['deviceId'],
    ),
    response: answer('the device answered Result OK (ERROR: 4607)'),
  },
  'device.config.download': {
    summary: 'ConfigDownload: read configuration sections (default BasicParam)',
    description: DEVICE,
    tags: ['device control'],
    querystring: query({ deviceId: device, configType: { type: 'string', maxLength: 256, description: 'BasicParam, VideoParamOpt, … joined by /' } }, ['deviceId']),
    response: answer('{deviceId, fields: {BasicParam: {...}, ...}}'),
  },
  'snapshot.take': {
    summary: 'Ask the camera for pictures (SnapShotConfig); they are uploaded to this instance and listed by GET /vms/device/snapshots',
    description: CHANNEL + V2022,
    tags: ['gb28181-2022'],
    querystring: query({ channelId: channel, count: intParam(1, 10, 'pictures (default 1)'), interval: intParam(1, 600, 'seconds between pictures (default 1)') }, ['channelId']),
    response: answer('{sessionId, uploadUrl, count}'),
  },
  'snapshot.list': { summary: 'Snapshot pictures kept for a device', description: DEVICE, tags: ['gb28181-2022'], querystring: byDevice, response: answer('[{name, channelId, sessionId, size, storedAt}]') },
  'snapshot.picture': {
    summary: 'One kept snapshot picture',
    description: DEVICE,
    tags: ['gb28181-2022'],
    querystring: query({ deviceId: device, name: { type: 'string', maxLength: 128, description: 'name from the list' } }, ['deviceId', 'name']),
    response: answer('{contentType, size, base64}'),
  },
  'device.upgrade': {
    summary: 'Firmware upgrade (DeviceUpgrade); the result arrives as DeviceUpgradeResult',
    description: DEVICE + V2022,
    tags: ['gb28181-2022'],
    querystring: query(
      { deviceId: device, firmware: text('target firmware version', 64), fileUrl: { type: 'string', maxLength: 1024, description: 'where the device downloads it (http, https, ftp)' }, manufacturer: text('manufacturer', 64) },
      ['deviceId', 'firmware', 'fileUrl'],
    ),
    response: answer('{deviceId, sessionId, firmware, state: running, startedAt}'),
  },
  'device.upgrade.state': { summary: 'The latest upgrade of the device and its result', description: DEVICE, tags: ['gb28181-2022'], querystring: byDevice, response: answer('{sessionId, state: running|done|failed, runningFirmware, reason} or null') },
  'device.sdcard': { summary: 'SD card status (SDCardStatus query)', description: DEVICE + V2022, tags: ['gb28181-2022'], querystring: byDevice, response: answer(DEVICE_ANSWER) },
  'device.sdcard.format': {
    summary: 'Format an SD card (FormatSDCard)',
    description: DEVICE + V2022,
    tags: ['gb28181-2022'],
    querystring: query({ deviceId: device, index: intParam(1, 16, 'card number (default 1)') }, ['deviceId']),
    response: answer('command sent'),
  },
  'ptz.precise': {
    summary: 'Precise PTZ (PTZPreciseCtrl): absolute pan, tilt, zoom',
    description: CHANNEL + V2022,
    tags: ['gb28181-2022'],
    querystring: query({ channelId: channel, pan: decimalParam('pan, degrees 0-360'), tilt: decimalParam('tilt, degrees -90-90'), zoom: decimalParam('zoom multiple 1-999') }, ['channelId', 'pan', 'tilt', 'zoom']),
    response: answer('command sent'),
  },
  'ptz.position': { summary: 'PTZ position (PTZPosition query)', description: CHANNEL + V2022, tags: ['gb28181-2022'], querystring: byChannel, response: answer(DEVICE_ANSWER) },
  'ptz.track': {
    summary: 'Target tracking (TargetTrack): auto, manual, stop',
    description: CHANNEL + V2022,
    tags: ['gb28181-2022'],
    querystring: query({ channelId: channel, mode: enumParam(TRACK_MODES, 'tracking mode') }, ['channelId', 'mode']),
    response: answer('command sent'),
  },
  'ptz.cruise.tracks': { summary: 'Cruise tracks (CruiseTrackListQuery)', description: CHANNEL + V2022, tags: ['gb28181-2022'], querystring: byChannel, response: answer(DEVICE_ANSWER) },
  'ptz.cruise.track': {
    summary: 'One cruise track (CruiseTrackQuery)',
    description: CHANNEL + V2022,
    tags: ['gb28181-2022'],
    querystring: query({ channelId: channel, number: intParam(0, 255, 'track number', false) }, ['channelId', 'number']),
    response: answer(DEVICE_ANSWER),
  },
  'ptz.home.query': { summary: 'Home position setting (HomePositionQuery)', description: CHANNEL + V2022, tags: ['gb28181-2022'], querystring: byChannel, response: answer(DEVICE_ANSWER) },
};

const NAME = (what: string): JsonSchema => ({ type: 'string', pattern: '^\\s*[A-Za-z0-9_.-]{1,64}\\s*$', description: `${what}: 1-64 characters of A-Z a-z 0-9 _ . -` });

export const BROADCAST_SCHEMAS: { readonly [K in 'broadcast.start' | 'broadcast.stop' | 'broadcast.list' | 'talk.start' | 'talk.stop' | 'talk.list']: RouteSchema } = {
  'broadcast.start': {
    summary: 'Voice broadcast: Notify/Broadcast to the channel, then the device’s audio INVITE is answered with the media node sending `app/stream` (G.711A)',
    description: `${CHANNEL} Answers once the device’s INVITE is answered (4606 when it never comes; 4609 when the node cannot send the stream).`,
    tags: ['voice'],
    querystring: query({ channelId: channel, mediaNodeId: NAME('media node holding the audio stream'), app: NAME('ZLM app of the audio stream'), stream: NAME('ZLM stream id of the audio') }, ['channelId', 'mediaNodeId', 'app', 'stream']),
    response: answer('{sessionId, deviceId, channelId, ssrc, mediaNodeId, deviceAudio, startedAt}'),
  },
  'broadcast.stop': { summary: 'End the channel’s voice broadcast (BYE, stopSendRtp)', description: CHANNEL, tags: ['voice'], querystring: byChannel, response: answer('null') },
  'broadcast.list': { summary: 'Voice broadcasts running to the device', description: DEVICE, tags: ['voice'], querystring: byDevice, response: answer('broadcasts') },
  'talk.start': {
    summary: 'Two-way talk (语音对讲): Notify/Broadcast to the channel, then the device’s sendrecv audio INVITE is answered with the media node sending `app/stream` and receiving the device’s audio on the same port',
    description: `${CHANNEL} The device’s audio appears on the media node as \`deviceStream\` (app \`rtp\`, stream \`talk_<channelId>\`). 4606 when the device never INVITEs; 4607 when it offers receive-only audio; 4609 when the node cannot send the stream.`,
    tags: ['voice'],
    querystring: query({ channelId: channel, mediaNodeId: NAME('media node holding the operator’s audio stream'), app: NAME('ZLM app of the operator’s audio'), stream: NAME('ZLM stream id of the operator’s audio') }, ['channelId', 'mediaNodeId', 'app', 'stream']),
    response: answer('{mode, sessionId, deviceId, channelId, ssrc, mediaNodeId, deviceAudio, deviceStream: {app, stream}, startedAt}'),
  },
  'talk.stop': { summary: 'End the channel’s talk (BYE, stopSendRtp, the received stream released)', description: CHANNEL, tags: ['voice'], querystring: byChannel, response: answer('null') },
  'talk.list': { summary: 'Talks running with the device', description: DEVICE, tags: ['voice'], querystring: byDevice, response: answer('talks') },
};

export const SNAPSHOT_UPLOAD_SCHEMA: Readonly<Record<string, unknown>> = {
  summary: 'A device uploads a snapshot picture (the UploadURL of SnapShotConfig)',
  description: 'No operator token: the token in the path, handed to the device in SnapShotConfig, authenticates the upload. Body: the JPEG bytes (any content type). 404: unknown, expired or full token; 413: over vms.limits.snapshot-max-bytes; 400: not a JPEG.',
  tags: ['gb28181-2022'],
  security: [],
  params: { type: 'object', properties: { token: { type: 'string', maxLength: 64, description: 'upload token (32 hexadecimal characters)' } }, required: ['token'] } satisfies JsonSchema,
  response: answers(anyData('{name, size}'), 'picture stored'),
};
