// MESSAGEs from upstream platforms (SPEC CASC-2, CASC-3): recognised by the From user (an upstream's
// server id), answered 200 at once, then routed: catalog / device-info / device-status queries about
// this platform are answered here from the shared channels (paged, SumNum); requests for one of our
// devices go to `forDevice` (the device's owner sends them on). Catalog sends in flight are aborted
// when leadership is lost (`abortAll`).
import {
  buildCatalogAnswer,
  catalogItemsForPlatform,
  platformDeviceInfoAnswer,
  platformDeviceStatusAnswer,
  relayedResponseBody,
  routeUpstreamMessage,
  sendCatalogPages,
  upstreamAuth,
  upstreamMessage,
  type PlatformRepository,
  type UpstreamPlatform,
  type UpstreamSipClient,
} from '@vms/cascade';
import type { UpstreamResponsePayload } from '@vms/cluster';
import { parseManscdp, type CatalogItem, type ManscdpHeader } from '@vms/gb28181';
import { SipStatus, type ServerContext, type SipRequest } from '@vms/sip';
import { platformOfRequest } from './platform-of-request.ts';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import { itemFromChannel } from './channel-items.ts';

/** Pause between catalog pages (GB/T 28181 answers arrive as several MESSAGEs). */
const CATALOG_PAGE_INTERVAL_MS = 50;

export interface UpstreamMessagesOptions {
  /** Known upstream platforms by server id (kept current by the cascade wiring). */
  readonly known: () => ReadonlyMap<string, UpstreamPlatform>;
  readonly platforms: PlatformRepository;
  readonly devices: DeviceRepository;
  readonly sip: UpstreamSipClient;
  readonly clock: Clock;
  readonly log: Logger;
  readonly version: string;
  readonly utcOffsetMinutes: number;
  /** A request for one of our devices or channels (DeviceControl, PTZ…): the owner sends it on. */
  readonly forDevice: (p: UpstreamPlatform, targetDeviceId: string, req: SipRequest) => void;
}

export interface UpstreamMessages {
  /** For DeviceSide.interceptMessages: true when the MESSAGE came from a known upstream platform. */
  intercept(req: SipRequest, ctx: ServerContext): boolean;
  /** Lost leadership / closing: stop catalog sends in flight. */
  abortAll(): void;
  /** The leader sends a device's Response on to the upstream that asked (GB/T 28181 §9.5). Never rejects. */
  relayResponse(payload: UpstreamResponsePayload): Promise<void>;
}

export function createUpstreamMessages(o: UpstreamMessagesOptions): UpstreamMessages {
  const log = o.log.child({ component: 'upstream-messages' });
  const sends = new Set<AbortController>();

  const send = (p: UpstreamPlatform, body: Buffer): Promise<unknown> => o.sip.request(upstreamMessage(p, body), { auth: upstreamAuth(p) });

  const sharedItems = async (p: UpstreamPlatform): Promise<{ items: CatalogItem[]; channels: number }> => {
    const shared = await o.platforms.listChannels(p.serverId);
    const found = new Map<string, CatalogItem>();
    // SPEC SEC-2: only the platform's own tenant's channels, whatever was shared before (a device moved
    // to another tenant, shares older than V006 defaulted to tenant 000000)
    const tenantOf = new Map<string, string | null>();
    for (const s of shared) {
      if (!tenantOf.has(s.deviceId)) tenantOf.set(s.deviceId, (await o.devices.getDevice(s.deviceId))?.tenantId ?? null);
      if (tenantOf.get(s.deviceId) !== p.tenantId) continue;
      const c = await o.devices.getChannel(s.deviceId, s.channelId);
      if (c !== null) found.set(`${s.deviceId}/${s.channelId}`, itemFromChannel(c));
    }
    const items = catalogItemsForPlatform(p, shared, (k) => found.get(`${k.deviceId}/${k.channelId}`));
    return { items, channels: found.size };
  };

  const answerCatalog = async (p: UpstreamPlatform, query: ManscdpHeader): Promise<void> => {
    const { items } = await sharedItems(p);
    const pages = buildCatalogAnswer(p, query, items);
    const abort = new AbortController();
    sends.add(abort);
    try {
      const r = await sendCatalogPages(pages, (b) => send(p, b), { intervalMs: CATALOG_PAGE_INTERVAL_MS, signal: abort.signal });
      log.info({ platformId: p.serverId, sn: query.sn, sumNum: items.length, pages: r.sent, aborted: r.aborted }, 'catalog answered to upstream');
    } finally {
      sends.delete(abort);
    }
  };

  const handle = async (p: UpstreamPlatform, req: SipRequest): Promise<void> => {
    const route = routeUpstreamMessage(p, parseManscdp(req.body));
    switch (route.kind) {
      case 'catalog-query':
        return answerCatalog(p, route.query);
      case 'device-info-query': {
        const { channels } = await sharedItems(p);
        const identity = { deviceName: 'vms-signaling', manufacturer: 'vms', model: 'signaling-cluster', firmware: o.version };
        await send(p, platformDeviceInfoAnswer(p, route.query, identity, channels));
        return;
      }
      case 'device-status-query':
        await send(p, platformDeviceStatusAnswer(p, route.query, new Date(o.clock.now()), o.utcOffsetMinutes));
        return;
      case 'for-device':
        o.forDevice(p, route.targetDeviceId, req);
        return;
      case 'unsupported':
        return;
    }
  };

  return {
    intercept(req, ctx) {
      const p = platformOfRequest(req, o.known());
      if (p === undefined) return false; // devices' requests, and malformed ones, go to the device handlers
      ctx.reply(SipStatus.OK);
      handle(p, req).catch((err: unknown) => log.warn({ err, platformId: p.serverId }, 'upstream message not handled'));
      return true;
    },
    abortAll() {
      for (const a of sends) a.abort();
      sends.clear();
    },
    async relayResponse({ platformId, deviceId, cmdType, response }) {
      const p = o.known().get(platformId);
      if (p === undefined) {
        log.info({ platformId, deviceId, cmdType }, 'device response for an unknown upstream dropped');
        return;
      }
      try {
        const body = relayedResponseBody(p, cmdType, response);
        if (body === undefined) return;
        await send(p, body);
        log.debug({ platformId, deviceId, cmdType, sn: response.sn }, 'device response relayed to upstream');
      } catch (err) {
        log.warn({ err, platformId, deviceId, cmdType }, 'device response not relayed to upstream');
      }
    },
  };
}
