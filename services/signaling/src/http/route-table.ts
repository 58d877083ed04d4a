// Every control endpoint, declared once (SPEC ROUTE-1). Registration (`app.ts`) reads this table:
// adding an endpoint is one line here plus its handler. `routedBy` says how the owner-routing hook
// finds the device: by channelId, sessionId, deviceId or SN; null = answered locally from the database.

export type RoutedBy = 'channel' | 'session' | 'device' | 'sn';

/** The request parameter that carries the routing key of each kind. */
export const ROUTING_PARAM: { readonly [K in RoutedBy]: string } = {
  channel: 'channelId',
  session: 'sessionId',
  device: 'deviceId',
  sn: 'sn',
};

export interface RouteSpec {
  readonly id: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Canonical path (microservice form); the `/blade-iot` form is normalised onto it. */
  readonly path: string;
  readonly routedBy: RoutedBy | null;
  /** `none`: no operator token (health, media-node webhooks). */
  readonly auth: 'operator' | 'none';
}

export const ROUTES = [
  { id: 'health', method: 'GET', path: '/healthz', routedBy: null, auth: 'none' },
  { id: 'ready', method: 'GET', path: '/readyz', routedBy: null, auth: 'none' },
  { id: 'devices.list', method: 'GET', path: '/vms/devices', routedBy: null, auth: 'operator' },
  { id: 'devices.create', method: 'POST', path: '/vms/devices', routedBy: null, auth: 'operator' },
  { id: 'devices.get', method: 'GET', path: '/vms/devices/:deviceId', routedBy: null, auth: 'operator' },
  { id: 'channels.list', method: 'GET', path: '/vms/channels', routedBy: null, auth: 'operator' },
  { id: 'nodes.list', method: 'GET', path: '/vms/nodes', routedBy: null, auth: 'operator' },
  { id: 'nodes.drain', method: 'POST', path: '/vms/nodes/drain', routedBy: null, auth: 'operator' },
  { id: 'device.info', method: 'GET', path: '/vms/device/info', routedBy: 'device', auth: 'operator' },
  { id: 'device.status', method: 'GET', path: '/vms/device/status', routedBy: 'device', auth: 'operator' },
  { id: 'catalog.sync', method: 'POST', path: '/vms/device/catalog/sync', routedBy: 'device', auth: 'operator' },
  { id: 'catalog.progress', method: 'GET', path: '/vms/device/catalog/sync', routedBy: 'device', auth: 'operator' },
  { id: 'device.control', method: 'POST', path: '/vms/device/control', routedBy: 'device', auth: 'operator' },
  { id: 'ptz.control', method: 'POST', path: '/vms/ptz/control', routedBy: 'channel', auth: 'operator' },
  { id: 'record.query', method: 'POST', path: '/vms/record/query', routedBy: 'channel', auth: 'operator' },
  { id: 'record.result', method: 'GET', path: '/vms/record/result', routedBy: 'sn', auth: 'operator' },
  { id: 'play.start', method: 'POST', path: '/vms/play/start', routedBy: 'channel', auth: 'operator' },
  { id: 'play.stop', method: 'POST', path: '/vms/play/stop', routedBy: 'session', auth: 'operator' },
  { id: 'playback.start', method: 'POST', path: '/vms/playback/start', routedBy: 'channel', auth: 'operator' },
  { id: 'playback.control', method: 'POST', path: '/vms/playback/control', routedBy: 'session', auth: 'operator' },
  { id: 'playback.stop', method: 'POST', path: '/vms/playback/stop', routedBy: 'session', auth: 'operator' },
  { id: 'download.start', method: 'POST', path: '/vms/download/start', routedBy: 'channel', auth: 'operator' },
  { id: 'download.progress', method: 'GET', path: '/vms/download/progress', routedBy: 'session', auth: 'operator' },
  { id: 'download.stop', method: 'POST', path: '/vms/download/stop', routedBy: 'session', auth: 'operator' },
  // what devices reported (GB/T 28181 §9.4, §9.11), from the report store; subscriptions on the owner
  { id: 'alarms.list', method: 'GET', path: '/vms/alarms', routedBy: null, auth: 'operator' },
  { id: 'positions.latest', method: 'GET', path: '/vms/positions/latest', routedBy: null, auth: 'operator' },
  { id: 'positions.track', method: 'GET', path: '/vms/positions', routedBy: null, auth: 'operator' },
  { id: 'subscriptions.get', method: 'GET', path: '/vms/device/subscriptions', routedBy: 'device', auth: 'operator' },
  { id: 'subscriptions.set', method: 'POST', path: '/vms/device/subscriptions', routedBy: 'device', auth: 'operator' },
  { id: 'snapshot', method: 'GET', path: '/vms/snapshot', routedBy: 'channel', auth: 'operator' },
  // PTZ beyond moves and device configuration (GB/T 28181-2016 Annex A.3.4-A.3.6, §A.2.3, §A.2.4)
  { id: 'ptz.preset', method: 'POST', path: '/vms/ptz/preset', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.presets', method: 'GET', path: '/vms/ptz/presets', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.cruise', method: 'POST', path: '/vms/ptz/cruise', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.scan', method: 'POST', path: '/vms/ptz/scan', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.home', method: 'POST', path: '/vms/ptz/home', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.dragzoom', method: 'POST', path: '/vms/ptz/dragzoom', routedBy: 'channel', auth: 'operator' },
  { id: 'device.config', method: 'POST', path: '/vms/device/config', routedBy: 'device', auth: 'operator' },
  { id: 'device.config.download', method: 'GET', path: '/vms/device/config', routedBy: 'device', auth: 'operator' },
  // GB/T 28181-2022 commands: 4610 for a device that does not speak 2022 (sip/gb-version.ts). The
  // devices' picture uploads (`POST /vms/snapshot/upload/:token`) are registered beside the table.
  { id: 'snapshot.take', method: 'POST', path: '/vms/device/snapshot', routedBy: 'channel', auth: 'operator' },
  { id: 'snapshot.list', method: 'GET', path: '/vms/device/snapshots', routedBy: 'device', auth: 'operator' },
  { id: 'snapshot.picture', method: 'GET', path: '/vms/device/snapshots/picture', routedBy: 'device', auth: 'operator' },
  { id: 'device.upgrade', method: 'POST', path: '/vms/device/upgrade', routedBy: 'device', auth: 'operator' },
  { id: 'device.upgrade.state', method: 'GET', path: '/vms/device/upgrade', routedBy: 'device', auth: 'operator' },
  { id: 'device.sdcard', method: 'GET', path: '/vms/device/sdcard', routedBy: 'device', auth: 'operator' },
  { id: 'device.sdcard.format', method: 'POST', path: '/vms/device/sdcard/format', routedBy: 'device', auth: 'operator' },
  { id: 'ptz.precise', method: 'POST', path: '/vms/ptz/precise', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.position', method: 'GET', path: '/vms/ptz/position', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.track', method: 'POST', path: '/vms/ptz/track', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.cruise.tracks', method: 'GET', path: '/vms/ptz/cruise/tracks', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.cruise.track', method: 'GET', path: '/vms/ptz/cruise/track', routedBy: 'channel', auth: 'operator' },
  { id: 'ptz.home.query', method: 'GET', path: '/vms/ptz/home', routedBy: 'channel', auth: 'operator' },
  // voice broadcast (GB/T 28181-2016 §9.12): Notify/Broadcast, then the device's audio INVITE
  { id: 'broadcast.start', method: 'POST', path: '/vms/broadcast/start', routedBy: 'channel', auth: 'operator' },
  { id: 'broadcast.stop', method: 'POST', path: '/vms/broadcast/stop', routedBy: 'channel', auth: 'operator' },
  { id: 'broadcast.list', method: 'GET', path: '/vms/broadcast', routedBy: 'device', auth: 'operator' },
  // two-way talk (语音对讲): the same §9.12 signalling, audio both ways through the media node
  { id: 'talk.start', method: 'POST', path: '/vms/talk/start', routedBy: 'channel', auth: 'operator' },
  { id: 'talk.stop', method: 'POST', path: '/vms/talk/stop', routedBy: 'channel', auth: 'operator' },
  { id: 'talk.list', method: 'GET', path: '/vms/talk', routedBy: 'device', auth: 'operator' },
  // upstream platforms and their shared channels (SPEC CASC-2): database administration, any instance
  { id: 'platforms.list', method: 'GET', path: '/vms/platforms', routedBy: null, auth: 'operator' },
  { id: 'platforms.create', method: 'POST', path: '/vms/platforms', routedBy: null, auth: 'operator' },
  { id: 'platforms.update', method: 'PUT', path: '/vms/platforms/:serverId', routedBy: null, auth: 'operator' },
  { id: 'platforms.delete', method: 'DELETE', path: '/vms/platforms/:serverId', routedBy: null, auth: 'operator' },
  { id: 'platforms.channels', method: 'GET', path: '/vms/platforms/:serverId/channels', routedBy: null, auth: 'operator' },
  { id: 'platforms.channels.replace', method: 'PUT', path: '/vms/platforms/:serverId/channels', routedBy: null, auth: 'operator' },
  // the routing engine (SPEC §10): operator role, any instance, answered from the routing store
  { id: 'routing.draft', method: 'GET', path: '/vms/routing/draft', routedBy: null, auth: 'operator' },
  { id: 'routing.destinations.put', method: 'PUT', path: '/vms/routing/destinations/:destinationId', routedBy: null, auth: 'operator' },
  { id: 'routing.destinations.delete', method: 'DELETE', path: '/vms/routing/destinations/:destinationId', routedBy: null, auth: 'operator' },
  { id: 'routing.sets.put', method: 'PUT', path: '/vms/routing/sets/:setId', routedBy: null, auth: 'operator' },
  { id: 'routing.sets.delete', method: 'DELETE', path: '/vms/routing/sets/:setId', routedBy: null, auth: 'operator' },
  { id: 'routing.rules.create', method: 'POST', path: '/vms/routing/rules', routedBy: null, auth: 'operator' },
  { id: 'routing.rules.update', method: 'PUT', path: '/vms/routing/rules/:ruleId', routedBy: null, auth: 'operator' },
  { id: 'routing.rules.delete', method: 'DELETE', path: '/vms/routing/rules/:ruleId', routedBy: null, auth: 'operator' },
  { id: 'routing.validate', method: 'POST', path: '/vms/routing/validate', routedBy: null, auth: 'operator' },
  { id: 'routing.publish', method: 'POST', path: '/vms/routing/publish', routedBy: null, auth: 'operator' },
  { id: 'routing.rollback', method: 'POST', path: '/vms/routing/rollback', routedBy: null, auth: 'operator' },
  { id: 'routing.versions', method: 'GET', path: '/vms/routing/versions', routedBy: null, auth: 'operator' },
  { id: 'routing.decide', method: 'GET', path: '/vms/routing/decide', routedBy: null, auth: 'operator' },
  { id: 'routing.shadow.start', method: 'POST', path: '/vms/routing/shadow', routedBy: null, auth: 'operator' },
  { id: 'routing.shadow.stop', method: 'DELETE', path: '/vms/routing/shadow', routedBy: null, auth: 'operator' },
  { id: 'routing.shadow.report', method: 'GET', path: '/vms/routing/shadow', routedBy: null, auth: 'operator' },
  { id: 'routing.health.list', method: 'GET', path: '/vms/routing/health', routedBy: null, auth: 'operator' },
  { id: 'routing.health.set', method: 'PUT', path: '/vms/routing/health/:destinationId', routedBy: null, auth: 'operator' },
  // `POST /vms/webhook/:hook` (media-node hooks) is registered beside the table: no token, no routing,
  // ZLM's reply envelope (routes/webhook.ts).
] as const satisfies readonly RouteSpec[];

export type RouteId = (typeof ROUTES)[number]['id'];

/** The routing key of a request (ROUTE-1): the value of the route's routing parameter, if present. */
export function routingKeyOf(route: RouteSpec, query: Readonly<Record<string, unknown>>): string | undefined {
  if (route.routedBy === null) return undefined;
  const value = query[ROUTING_PARAM[route.routedBy]];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
