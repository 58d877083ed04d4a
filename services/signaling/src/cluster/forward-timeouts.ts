// Read timeout of a forward, per endpoint (ROUTE-5). An endpoint that waits on the device must give
// the owner time to answer with its own result (e.g. 4606 device did not answer): the forward's read
// timeout is longer than the owner's device timeout, so a slow device is reported as the owner sees
// it, not as an unreachable owner. Endpoints that only read the owner's memory get a short one.
// An endpoint missing here gets the default: adding a routed endpoint needs no entry.
import type { RouteId, RouteSpec } from '../http/route-table.ts';

export const DEFAULT_FORWARD_READ_TIMEOUT_MS = 10_000;

export const FORWARD_READ_TIMEOUT_MS: Partial<Readonly<Record<RouteId, number>>> = {
  // MESSAGE acknowledged within 8 s, then the Response within 10 s (sip/query-timeouts.ts)
  'device.info': 20_000,
  'device.status': 20_000,
  // the same two waits for the configuration and the queries of sip/sip-device-commands.ts
  'ptz.presets': 20_000,
  'device.config': 20_000,
  'device.config.download': 20_000,
  'snapshot.take': 20_000,
  'device.sdcard': 20_000,
  'ptz.position': 20_000,
  'ptz.cruise.tracks': 20_000,
  'ptz.cruise.track': 20_000,
  'ptz.home.query': 20_000,
  'broadcast.start': 20_000,
  'talk.start': 20_000,
  // INVITE answered within 8 s (media/media-wiring.ts), plus the media node's own calls
  'play.start': 15_000,
  'playback.start': 15_000,
  'download.start': 15_000,
  snapshot: 15_000,
  // INFO answered within 8 s (media/media-wiring.ts infoTimeoutMs = requestMs)
  'playback.control': 12_000,
  // the owner's memory only
  'catalog.progress': 3000,
  'record.result': 3000,
  'download.progress': 3000,
  'subscriptions.get': 3000,
  'snapshot.list': 3000,
  'device.upgrade.state': 3000,
};

export function forwardReadTimeoutMs(route: RouteSpec): number {
  return FORWARD_READ_TIMEOUT_MS[route.id as RouteId] ?? DEFAULT_FORWARD_READ_TIMEOUT_MS;
}
