// One schema per route of the route table (route-table.ts): what fastify validates before the owner
// routing hook and the handler run, and what /openapi.json publishes. A route missing here fails to
// type-check; a route fastify serves that the document lacks fails http/openapi.test.ts.
import { MAX_DRAIN_PERIOD_MS } from '@vms/cluster';
import { DEVICE_ACTIONS, PTZ_COMMANDS, PTZ_SPEED_MAX, PTZ_SPEED_MIN } from '../../control/device-control.port.ts';
import { PLAYBACK_ACTIONS, STREAM_MODES } from '../../media/media-session.types.ts';
import type { RouteId } from '../route-table.ts';
import { SUBSCRIPTION_KINDS } from '../../reports/report-store.port.ts';
import { POSITION_INTERVAL_MAX_S, POSITION_INTERVAL_MIN_S } from '../routes/reports.ts';
import { OPTIONAL_ID_PREFIX_PATTERN, OPTIONAL_TENANT_ID_PATTERN } from './patterns.ts';
import {
  anyData,
  answers,
  booleanParam,
  enumParam,
  gbIdParam,
  intParam,
  PAGING_PROPERTIES,
  pageOf,
  query,
  serialParam,
  sessionIdParam,
  timeParam,
  type JsonSchema,
  type RouteSchema,
} from './common.ts';
import { ROUTING_SCHEMAS } from './routing.ts';
import { BROADCAST_SCHEMAS, COMMAND_SCHEMAS } from './commands.ts';
import { PLATFORM_BODY, PLATFORM_CHANNELS_BODY, PLATFORM_PATCH_BODY, SERVER_ID_PARAMS } from './platforms.ts';

export type { RouteSchema };

const TENANT_QUERY: JsonSchema = {
  type: 'string',
  pattern: OPTIONAL_TENANT_ID_PATTERN,
  description: 'tenant id; a tenant token may name only its own (else 403)',
};
const channel = gbIdParam('channel id');
const device = gbIdParam('device id');
const streamMode = enumParam(STREAM_MODES, 'how the device sends RTP (default udp)', true);
const range = { startTime: timeParam('start of the range'), endTime: timeParam('end of the range') };
const byDevice = query({ deviceId: device }, ['deviceId']);
const bySession = query({ sessionId: sessionIdParam }, ['sessionId']);
const session = (what: string): Readonly<Record<string, JsonSchema>> => answers(anyData(what), what);

const ROUTING = {
  channel: 'Owner-routed by channelId: runs on the instance owning the channel’s device (forwarded there from any other).',
  session: 'Owner-routed by sessionId: runs on the instance holding the session.',
  device: 'Owner-routed by deviceId: runs on the instance owning the device.',
  sn: 'Owner-routed by sn: runs on the instance that sent the query.',
};

export const ROUTE_SCHEMAS: { readonly [K in RouteId]: RouteSchema } = {
  health: { summary: 'Liveness and storage kind of this instance', tags: ['instance'], response: answers(anyData('{status, instanceId, storage}'), 'instance is up'), security: [] },
  ready: {
    summary: 'Readiness: 200 once started, 503 while starting or draining (load balancers, orchestrators)',
    tags: ['instance'],
    response: answers(anyData('{status, instanceId, redis}'), 'ready'),
    security: [],
  },
  'devices.list': {
    summary: 'Devices of the operator’s tenant, ordered by id',
    tags: ['devices'],
    description: 'A tenant token lists its own tenant’s devices; the operator role lists every tenant’s, or one tenant’s with tenantId.',
    querystring: query({
      online: booleanParam('only online (true) or offline (false) devices'),
      tenantId: TENANT_QUERY,
      idPrefix: { type: 'string', pattern: OPTIONAL_ID_PREFIX_PATTERN, description: 'search: only devices whose id starts with these digits' },
      ...PAGING_PROPERTIES,
    }),
    response: answers(pageOf('devices (with owner node and online flag)'), 'a page of devices'),
  },
  'devices.create': {
    summary: 'Provision a device: create it (offline) or update the given fields (operator role only)',
    tags: ['devices'],
    description:
      'Its tenant, label and per-device digest password, before or after it registers; fields not given stay. ' +
      'Fields are checked by the handler, which names the bad one. Bulk: `npm run import -- devices.csv`.',
    body: {
      type: 'object',
      required: ['deviceId'],
      properties: {
        deviceId: { description: 'required: the 20-digit device id' },
        tenantId: { description: 'owning tenant, 1-12 characters of A-Z a-z 0-9 _ -; default: kept, or 000000 for a new device' },
        name: { description: 'label, 1-255 characters without control characters, or null' },
        password: { description: 'per-device digest password (1-64 characters), or null for the platform password; never echoed' },
        charset: { description: 'GB2312 or UTF-8 (MANSCDP bodies)' },
      },
    },
    response: answers(anyData('the device (hasPassword, never the password) and created: true when it is new'), 'provisioned'),
  },
  'devices.get': {
    summary: 'One device',
    tags: ['devices'],
    params: { type: 'object', properties: { deviceId: device }, required: ['deviceId'] },
    response: answers(anyData('the device, with its owner node'), 'the device'),
  },
  'channels.list': {
    summary: 'Channels of a device, ordered by id',
    tags: ['devices'],
    querystring: query({ deviceId: device, ...PAGING_PROPERTIES }, ['deviceId']),
    response: answers(pageOf('channels'), 'a page of channels'),
  },
  'nodes.list': { summary: 'The node table: instances, their online devices, the cascade leader', tags: ['instance'], response: answers(anyData('{cascadeLeader, nodes}'), 'the node table') },
  'nodes.drain': {
    summary: 'Drain (or undrain) a shard: device placement gives it no device; its devices move, paced, at their next registration',
    description:
      'Operator role. `draining=false` undrains. Paced: the shard releases its devices evenly over `periodS` (default: its online devices / `vms.placement.drain-rate`, at least 1 s; 0 = all at once); all have moved within the period + one device keepalive interval + one registration; `GET /vms/nodes` shows `drainedShare`. Draining again keeps the drain’s start. Undraining paces the shard’s return the same way: it takes back its share of its group’s devices over `periodS` (default: that share / the drain rate, at least 1 s; 0 = all at once; a drain stopped halfway gives back only what it had released), `GET /vms/nodes` shows `joinedShare`. 400 (nodeCode) for a node not in the node table or without one (standalone).',
    tags: ['instance'],
    querystring: query(
      {
        nodeCode: { type: 'string', minLength: 1, maxLength: 64, description: 'node code (instance-id)' },
        draining: booleanParam('drain (true) or undrain (false)'),
        periodS: intParam(0, MAX_DRAIN_PERIOD_MS / 1000, 'seconds over which the devices are released (default from the drain rate)'),
      },
      ['nodeCode', 'draining'],
    ),
    response: answers(anyData('{nodeCode, draining, periodMs}'), 'the node’s new draining flag and the drain period applied (0 when undrained)'),
  },
  'device.info': { summary: 'Ask the device for its DeviceInfo', description: ROUTING.device, tags: ['device control'], querystring: byDevice, response: answers(anyData('what the device answered'), 'DeviceInfo') },
  'device.status': { summary: 'Ask the device for its DeviceStatus', description: ROUTING.device, tags: ['device control'], querystring: byDevice, response: answers(anyData('what the device answered'), 'DeviceStatus') },
  'catalog.sync': { summary: 'Start a catalog query; channels are stored as the answers arrive', description: ROUTING.device, tags: ['device control'], querystring: byDevice, response: answers(anyData('sync progress'), 'catalog sync started') },
  'catalog.progress': { summary: 'Progress of the device’s catalog sync', description: ROUTING.device, tags: ['device control'], querystring: byDevice, response: answers(anyData('sync progress'), 'progress') },
  'device.control': {
    summary: 'Device command (reboot, guard, record…)',
    description: ROUTING.device,
    tags: ['device control'],
    querystring: query({ deviceId: device, action: enumParam(DEVICE_ACTIONS, 'command') }, ['deviceId', 'action']),
    response: answers(anyData('the device’s answer'), 'command sent'),
  },
  'ptz.control': {
    summary: 'PTZ command on a channel',
    description: ROUTING.channel,
    tags: ['device control'],
    querystring: query({ channelId: channel, command: enumParam(PTZ_COMMANDS, 'movement'), speed: intParam(PTZ_SPEED_MIN, PTZ_SPEED_MAX, 'speed (default 128)') }, ['channelId', 'command']),
    response: answers(anyData('null'), 'command sent'),
  },
  'record.query': {
    summary: 'Start a RecordInfo query; fetch the result with GET /vms/record/result?sn=',
    description: ROUTING.channel,
    tags: ['records'],
    querystring: query({ channelId: channel, ...range }, ['channelId', 'startTime', 'endTime']),
    response: answers(anyData('{sn}'), 'query started'),
  },
  'record.result': { summary: 'Result (so far) of a record query', description: ROUTING.sn, tags: ['records'], querystring: query({ sn: serialParam }, ['sn']), response: answers(anyData('record items'), 'records') },
  'play.start': {
    summary: 'Start (or join) the live view of a channel',
    description: ROUTING.channel,
    tags: ['media'],
    querystring: query({ channelId: channel, streamMode }, ['channelId']),
    response: session('session id, media node and play URLs'),
  },
  'play.stop': { summary: 'Leave a live view', description: ROUTING.session, tags: ['media'], querystring: bySession, response: session('viewers left') },
  'playback.start': {
    summary: 'Start playback of recorded video',
    description: ROUTING.channel,
    tags: ['media'],
    querystring: query({ channelId: channel, streamMode, ...range }, ['channelId', 'startTime', 'endTime']),
    response: session('session id, media node and play URLs'),
  },
  'playback.control': {
    summary: 'Pause, resume, seek or change the speed of a playback',
    description: ROUTING.session,
    tags: ['media'],
    querystring: query(
      { sessionId: sessionIdParam, action: enumParam(PLAYBACK_ACTIONS, 'action'), value: { type: 'string', maxLength: 16, description: 'seek: seconds from the start of the range; speed: 0.25, 0.5, 1, 2, 4, 8 or 16' } },
      ['sessionId', 'action'],
    ),
    response: session('null'),
  },
  'playback.stop': { summary: 'Stop a playback', description: ROUTING.session, tags: ['media'], querystring: bySession, response: session('null') },
  'download.start': {
    summary: 'Start a download of recorded video',
    description: ROUTING.channel,
    tags: ['media'],
    querystring: query({ channelId: channel, streamMode, ...range, speed: intParam(1, 16, 'download speed (default 1)') }, ['channelId', 'startTime', 'endTime']),
    response: session('session id, media node and file URL'),
  },
  'download.progress': { summary: 'Progress of a download', description: ROUTING.session, tags: ['media'], querystring: bySession, response: session('progress') },
  'download.stop': { summary: 'Stop a download', description: ROUTING.session, tags: ['media'], querystring: bySession, response: session('null') },
  'alarms.list': {
    summary: 'Alarms a device reported (MESSAGE or NOTIFY), newest first; bounded history',
    description: 'Answered from the report store on any instance. Times filter on when the platform received the alarm.',
    tags: ['alarms and positions'],
    querystring: query(
      {
        deviceId: device,
        startTime: timeParam('received at or after'),
        endTime: timeParam('received at or before'),
        alarmMethod: { type: 'string', pattern: '^(\\d{1,4})?$', description: 'AlarmMethod (1 phone, 2 device, 3 SMS, 4 GPS, 5 video, 6 fault, 7 other)' },
        alarmType: { type: 'string', pattern: '^(\\d{1,4})?$', description: 'AlarmType (sub-type per method, GB/T 28181 §A.2.5)' },
        alarmPriority: { type: 'string', pattern: '^(\\d{1,4})?$', description: 'AlarmPriority 1 (highest) to 4' },
        ...PAGING_PROPERTIES,
      },
      ['deviceId'],
    ),
    response: answers(pageOf('alarms'), 'a page of alarms'),
  },
  'positions.latest': {
    summary: 'Latest mobile position a device reported (null when none)',
    description: 'Answered from the report store on any instance.',
    tags: ['alarms and positions'],
    querystring: byDevice,
    response: answers(anyData('{deviceId, sourceId, receivedAt, time, longitude, latitude, speed, direction, altitude} or null'), 'the latest position'),
  },
  'positions.track': {
    summary: 'Mobile position track of a device, oldest first; bounded history',
    description: 'Answered from the report store on any instance. Times filter on when the platform received the position.',
    tags: ['alarms and positions'],
    querystring: query({ deviceId: device, startTime: timeParam('received at or after'), endTime: timeParam('received at or before'), ...PAGING_PROPERTIES }, ['deviceId']),
    response: answers(pageOf('positions'), 'a page of positions'),
  },
  'subscriptions.get': {
    summary: 'The platform’s catalog / alarm / mobile-position subscriptions to a device, and their state',
    description: ROUTING.device,
    tags: ['device control'],
    querystring: byDevice,
    response: answers(anyData('{deviceId, settings, subscriptions: [{kind, state, expiresAt, nextAt, lastError}]}'), 'subscriptions'),
  },
  'subscriptions.set': {
    summary: 'Turn one subscription to a device on or off (kept for the device across re-registration and owner moves)',
    description: `${ROUTING.device} Turning one on waits for the device’s first answer (state active, unanswered or refused).`,
    tags: ['device control'],
    querystring: query(
      {
        deviceId: device,
        kind: enumParam(SUBSCRIPTION_KINDS, 'what to subscribe to'),
        enabled: booleanParam('on or off'),
        interval: intParam(POSITION_INTERVAL_MIN_S, POSITION_INTERVAL_MAX_S, 'mobile position report interval in seconds (default 5)'),
      },
      ['deviceId', 'kind', 'enabled'],
    ),
    response: answers(anyData('{deviceId, settings, subscriptions}'), 'subscriptions after the change'),
  },
  snapshot: {
    summary: 'JPEG snapshot of a channel being viewed live',
    description: ROUTING.channel,
    tags: ['media'],
    querystring: query({ channelId: channel }, ['channelId']),
    response: answers(anyData('{contentType, size, base64}'), 'the picture'),
  },
  'platforms.list': {
    summary: 'Upstream platforms (passwords masked)',
    description: 'A tenant token lists its own tenant’s platforms; the operator role lists every tenant’s, or one tenant’s with tenantId.',
    tags: ['cascade'],
    querystring: query({ tenantId: TENANT_QUERY }),
    response: answers(anyData('platform records'), 'platforms'),
  },
  'platforms.create': { summary: 'Create or replace an upstream platform', tags: ['cascade'], body: PLATFORM_BODY, response: answers(anyData('the platform (password masked)'), 'saved') },
  'platforms.update': { summary: 'Edit an upstream platform (fields not given stay)', tags: ['cascade'], params: SERVER_ID_PARAMS, body: PLATFORM_PATCH_BODY, response: answers(anyData('the platform (password masked)'), 'saved') },
  'platforms.delete': { summary: 'Delete an upstream platform and its channel list', tags: ['cascade'], params: SERVER_ID_PARAMS, response: answers(anyData('{removed}'), 'deleted') },
  'platforms.channels': { summary: 'Channels shared with an upstream platform', tags: ['cascade'], params: SERVER_ID_PARAMS, response: answers(anyData('shared channels'), 'the list') },
  'platforms.channels.replace': {
    summary: 'Replace the channels shared with an upstream platform',
    tags: ['cascade'],
    params: SERVER_ID_PARAMS,
    body: PLATFORM_CHANNELS_BODY,
    response: answers(anyData('shared channels'), 'the new list'),
  },
  ...ROUTING_SCHEMAS,
  ...COMMAND_SCHEMAS,
  ...BROADCAST_SCHEMAS,
};
