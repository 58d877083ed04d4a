// The upstream's SUBSCRIBEs held by the cascade leader (SPEC CASC-2) and the NOTIFYs sent in them
// (CASC-3): catalog changes of shared channels, alarms, mobile positions, from a cascade event's
// by-value payload. Expired subscriptions are swept at the next expiry; all are dropped when
// leadership is lost (the upstream re-subscribes at the new leader after it registers).
import {
  alarmNotifyBody,
  catalogNotifyBody,
  mobilePositionNotifyBody,
  SubscriptionTable,
  subscriptionKindOf,
  type PlatformRepository,
  type SubscriptionKind,
  type UpstreamPlatform,
} from '@vms/cascade';
import type { CascadeEvent } from '@vms/cluster';
import { parseManscdp, type AlarmNotify, type CatalogEvent, type CatalogItem, type MobilePositionNotify, type SnGenerator } from '@vms/gb28181';
import { SipStatus, type Dialog, type ServerContext, type SipRequest } from '@vms/sip';
import { platformOfRequest } from './platform-of-request.ts';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../core/clock.ts';
import { MANSCDP_CONTENT_TYPE } from '../sip/device-side.types.ts';

/** RFC 6665 §4.2.1.1 / GB/T 28181 §9.11: the SUBSCRIBE's Expires when it has none, seconds. */
const DEFAULT_SUBSCRIBE_EXPIRES_S = 3600;

/** The Event header of each subscription kind (GB/T 28181-2016 §9.11, as captured platforms send it). */
const EVENT_HEADER: Readonly<Record<SubscriptionKind, string>> = { catalog: 'Catalog', alarm: 'Alarm', mobilePosition: 'MobilePosition' };

export interface UpstreamSubscriptionsOptions {
  readonly known: () => ReadonlyMap<string, UpstreamPlatform>;
  readonly platforms: PlatformRepository;
  readonly clock: Clock;
  readonly sn: SnGenerator;
  readonly log: Logger;
}

export class UpstreamSubscriptions {
  readonly #o: UpstreamSubscriptionsOptions;
  readonly #log: Logger;
  readonly #table: SubscriptionTable<Dialog>;
  #sweepTimer: TimerHandle | undefined;

  constructor(opts: UpstreamSubscriptionsOptions) {
    this.#o = opts;
    this.#log = opts.log.child({ component: 'upstream-subscriptions' });
    this.#table = new SubscriptionTable<Dialog>({ clock: opts.clock });
  }

  get size(): number {
    return this.#table.size;
  }

  /** For `stack.onRequest('SUBSCRIBE', …)`: SUBSCRIBEs from known upstream platforms. */
  readonly onSubscribe = (req: SipRequest, ctx: ServerContext): void => {
    const p = platformOfRequest(req, this.#o.known());
    if (p === undefined) {
      ctx.reply(SipStatus.Forbidden);
      return;
    }
    let cmdType: string;
    let sn: string;
    try {
      const msg = parseManscdp(req.body);
      cmdType = msg.cmdType;
      sn = msg.sn;
    } catch {
      ctx.reply(SipStatus.BadRequest);
      return;
    }
    const kind = subscriptionKindOf(cmdType);
    if (kind === null) {
      ctx.reply(SipStatus.BadEvent);
      return;
    }
    const raw = req.headers.get('Expires')?.trim();
    const expiresS = raw !== undefined && /^\d{1,9}$/.test(raw) ? Number(raw) : DEFAULT_SUBSCRIBE_EXPIRES_S;
    const key = `${p.serverId}:${kind}`;
    if (expiresS === 0) {
      this.#table.unsubscribe(key);
      ctx.reply(SipStatus.OK, { headers: { Expires: '0' } });
      return;
    }
    const granted = this.#table.grantedExpiresS(expiresS);
    const dialog = ctx.accept({ headers: { Expires: String(granted) } });
    // in-dialog refreshes (RFC 6665 §4.1.2.1): same key, new expiry; Expires 0 ends it
    dialog.on('subscribe', (r, c) => {
      const e = Number(r.headers.get('Expires')?.trim() ?? DEFAULT_SUBSCRIBE_EXPIRES_S);
      const ok = Number.isInteger(e) && e >= 0;
      c.reply(ok ? SipStatus.OK : SipStatus.BadRequest, ok ? { headers: { Expires: String(this.#table.grantedExpiresS(e)) } } : {});
      if (ok) this.#table.subscribe({ key, platformId: p.serverId, kind, dialog, expiresS: e, sn });
      this.#scheduleSweep();
    });
    const outcome = this.#table.subscribe({ key, platformId: p.serverId, kind, dialog, expiresS, sn });
    this.#log.info({ platformId: p.serverId, kind, expiresS: granted, outcome: outcome.type }, 'upstream subscribed');
    this.#scheduleSweep();
  };

  /** Executes a notify event here (this instance is the leader): NOTIFY in every matching subscription. */
  async execute(e: CascadeEvent): Promise<void> {
    switch (e.kind) {
      case 'notify.catalog': {
        const channel = e.payload.channel as unknown as CatalogItem;
        for (const share of await this.#o.platforms.sharesOf(e.payload.deviceId, channel.deviceId)) {
          const p = this.#o.known().get(share.platformId);
          if (p === undefined) continue;
          await this.#notify(p, 'catalog', (sn) => catalogNotifyBody(p, share, channel, e.payload.event as CatalogEvent, sn));
        }
        return;
      }
      case 'notify.alarm': {
        const alarm = e.payload.alarm as Omit<AlarmNotify, 'sn'>;
        for (const p of await this.#receivers(e.payload.deviceId, alarm.deviceId)) await this.#notify(p, 'alarm', (sn) => alarmNotifyBody(p, alarm, sn));
        return;
      }
      case 'notify.mobilePosition': {
        const position = e.payload.position as Omit<MobilePositionNotify, 'sn'>;
        for (const p of await this.#receivers(e.payload.deviceId, position.deviceId)) {
          await this.#notify(p, 'mobilePosition', (sn) => mobilePositionNotifyBody(p, position, sn));
        }
        return;
      }
      case 'control.upstream':
        return;
    }
  }

  /** Lost leadership or closing: forget every subscription (no final NOTIFY: the new leader takes over). */
  clear(): void {
    this.#table.clear();
    if (this.#sweepTimer !== undefined) this.#o.clock.clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
  }

  /** Platforms that receive the source (a shared channel, or any shared channel of the device itself). */
  async #receivers(deviceId: string, sourceId: string): Promise<UpstreamPlatform[]> {
    const ids = new Set((await this.#o.platforms.sharesOf(deviceId, sourceId)).map((s) => s.platformId));
    if (sourceId === deviceId) {
      for (const p of this.#o.known().values()) {
        if (!ids.has(p.serverId) && (await this.#o.platforms.listChannels(p.serverId)).some((c) => c.deviceId === deviceId)) ids.add(p.serverId);
      }
    }
    return [...ids].map((id) => this.#o.known().get(id)).filter((p): p is UpstreamPlatform => p !== undefined);
  }

  async #notify(p: UpstreamPlatform, kind: SubscriptionKind, body: (sn: number) => Buffer): Promise<void> {
    const now = this.#o.clock.now();
    for (const entry of this.#table.notifyTargets(kind, p.serverId)) {
      const remainingS = Math.max(0, Math.ceil((entry.expiresAt - now) / 1000));
      try {
        const res = await entry.dialog.request('NOTIFY', {
          body: body(this.#o.sn.next()),
          contentType: MANSCDP_CONTENT_TYPE,
          headers: { Event: EVENT_HEADER[kind], 'Subscription-State': `active;expires=${remainingS}` },
        });
        this.#log.info({ platformId: p.serverId, kind, status: res.status }, 'notify sent to upstream');
      } catch (err) {
        this.#log.warn({ err, platformId: p.serverId, kind }, 'notify to upstream failed');
      }
    }
  }

  #scheduleSweep(): void {
    if (this.#sweepTimer !== undefined) this.#o.clock.clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
    const at = this.#table.nextExpiryAt();
    if (at === null) return;
    this.#sweepTimer = this.#o.clock.setTimeout(
      () => {
        this.#sweepTimer = undefined;
        for (const gone of this.#table.sweep()) this.#log.info({ platformId: gone.platformId, kind: gone.kind }, 'upstream subscription expired');
        this.#scheduleSweep();
      },
      Math.max(0, at - this.#o.clock.now()),
    );
  }
}
