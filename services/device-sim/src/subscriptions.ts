// SUBSCRIBE from the platform (GB/T 28181-2016 §9.11, RFC 6665): Catalog, Alarm and MobilePosition.
// Accepted with a Response/<CmdType> Result OK body; then NOTIFYs in the dialog — the catalog at once
// (Event ADD, paged), positions every <Interval> s, alarms when raised — until the subscription
// expires, is refreshed with Expires 0, or the device closes.
import {
  buildAlarmNotify, buildCatalogNotify, buildMobilePositionNotify, buildResultResponse, formatGbTime, isGbError,
  parseManscdpCommand, RESULT_OK, type AlarmNotify, type ManscdpCommand, type SnGenerator,
} from '@vms/gb28181';
import { SipStatus, type Dialog, type RequestContext, type ServerContext, type SipLogger, type SipRequest, type TimerHandle } from '@vms/sip';
import { catalogItems, pages, type SimChannel } from './channels.ts';
import type { ResolvedDeviceOptions } from './options.ts';
import { MANSCDP_CONTENT_TYPE } from './protocol.ts';

export type SubscriptionKind = 'Catalog' | 'Alarm' | 'MobilePosition';
/** RFC 6665 §4.2.1.1 leaves the default to the event package; GB platforms send Expires anyway. */
const DEFAULT_SUBSCRIBE_EXPIRES_S = 3600;
/** §9.11 MobilePosition: a device reports every 5 s when the query names no interval. */
const DEFAULT_POSITION_INTERVAL_S = 5;

export interface SubscriptionDeps {
  o: ResolvedDeviceOptions;
  channels: readonly SimChannel[];
  sn: SnGenerator;
  sipPort: () => number;
  log: SipLogger;
  track: (work: Promise<unknown>) => void;
}

export class Subscription {
  #expiryTimer: TimerHandle | undefined;
  #intervalTimer: TimerHandle | undefined;
  #expiresAt: number;
  notifiesSent = 0;
  /** In-dialog SUBSCRIBE refreshes received (Expires 0 included). */
  refreshes = 0;

  constructor(
    readonly kind: SubscriptionKind,
    readonly dialog: Dialog,
    private readonly event: string,
    expiresS: number,
    private readonly deps: SubscriptionDeps,
  ) {
    this.#expiresAt = deps.o.clock.now() + expiresS * 1000;
    this.#armExpiry();
    dialog.on('subscribe', (req, ctx) => this.#refresh(req, ctx));
    dialog.once('terminated', () => this.#stopTimers());
  }

  get active(): boolean {
    return !this.dialog.terminated;
  }

  /** Sends one NOTIFY with a MANSCDP body in the dialog. */
  notify(body: Buffer, state = 'active'): Promise<void> {
    const remaining = Math.max(0, Math.round((this.#expiresAt - this.deps.o.clock.now()) / 1000));
    const subState = state === 'active' ? `active;expires=${remaining}` : state;
    this.notifiesSent++;
    return this.dialog
      .request('NOTIFY', { headers: { Event: this.event, 'Subscription-State': subState }, body, contentType: MANSCDP_CONTENT_TYPE })
      .then((res) => {
        if (res.status >= 300) this.deps.log.debug({ status: res.status, kind: this.kind }, 'device NOTIFY refused');
      });
  }

  /** MobilePosition: a NOTIFY every `intervalS`. */
  startPositionReports(intervalS: number): void {
    const tick = (): void => {
      this.#intervalTimer = this.deps.o.clock.setTimeout(() => {
        if (!this.active) return;
        this.deps.track(this.notify(positionBody(this.deps)).catch((err: unknown) => this.deps.log.debug({ err }, 'device position NOTIFY failed')));
        tick();
      }, intervalS * 1000);
    };
    tick();
  }

  close(): void {
    this.#stopTimers();
  }

  #refresh(req: SipRequest, ctx: RequestContext): void {
    this.refreshes++;
    const expires = grantOf(this.deps.o, expiresOf(req));
    ctx.reply(SipStatus.OK, { headers: { Expires: String(expires) } });
    if (expires === 0) return; // the dialog ends itself (RFC 6665 §4.2.1.2)
    this.#expiresAt = this.deps.o.clock.now() + expires * 1000;
    this.#armExpiry();
  }

  #armExpiry(): void {
    const { clock } = this.deps.o;
    if (this.#expiryTimer !== undefined) clock.clearTimeout(this.#expiryTimer);
    this.#expiryTimer = clock.setTimeout(() => {
      this.#stopTimers();
      // RFC 6665 §4.2.2: a final NOTIFY with Subscription-State: terminated ends the subscription.
      this.deps.track(this.notify(Buffer.alloc(0), 'terminated;reason=timeout').catch(() => undefined));
    }, this.#expiresAt - clock.now());
  }

  #stopTimers(): void {
    const { clock } = this.deps.o;
    if (this.#expiryTimer !== undefined) clock.clearTimeout(this.#expiryTimer);
    if (this.#intervalTimer !== undefined) clock.clearTimeout(this.#intervalTimer);
    this.#expiryTimer = undefined;
    this.#intervalTimer = undefined;
  }
}

/** Accepts a SUBSCRIBE for one of the three packages; 489 Bad Event otherwise, 400 for a bad body. */
export function handleSubscribe(deps: SubscriptionDeps, req: SipRequest, ctx: ServerContext): Subscription | undefined {
  let cmd: ManscdpCommand;
  try {
    cmd = parseManscdpCommand(req.body);
  } catch (err) {
    if (!isGbError(err)) throw err;
    ctx.reply(SipStatus.BadRequest);
    return undefined;
  }
  const kind = cmd.kind === 'Query/Catalog' ? 'Catalog' : cmd.kind === 'Query/MobilePosition' ? 'MobilePosition' : kindOfGeneric(cmd);
  if (kind === undefined) {
    ctx.reply(SipStatus.BadEvent);
    return undefined;
  }
  const { o } = deps;
  const expires = grantOf(o, expiresOf(req));
  const ack = buildResultResponse(kind, { sn: cmd.body.sn, deviceId: o.deviceId, result: RESULT_OK }, { charset: o.charset });
  const dialog = ctx.accept({ headers: { Expires: String(expires) }, body: ack, contentType: MANSCDP_CONTENT_TYPE });
  const sub = new Subscription(kind, dialog, req.headers.get('Event') ?? kind, expires, deps);
  const sn = cmd.body.sn;
  if (kind === 'Catalog') {
    const items = catalogItems(o, deps.channels, { sipPort: deps.sipPort(), event: 'ADD' });
    const bodies = pages(items, o.catalogPageSize).map((page) =>
      buildCatalogNotify({ sn, deviceId: o.deviceId, sumNum: items.length, items: page }, { charset: o.charset }),
    );
    deps.track(sendInOrder(sub, bodies).catch((err: unknown) => deps.log.debug({ err }, 'device catalog NOTIFY failed')));
  } else if (kind === 'MobilePosition') {
    const interval = cmd.kind === 'Query/MobilePosition' ? Number(cmd.body.interval ?? DEFAULT_POSITION_INTERVAL_S) : DEFAULT_POSITION_INTERVAL_S;
    sub.startPositionReports(Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_POSITION_INTERVAL_S);
  }
  return sub;
}

export function alarmBody(deps: Pick<SubscriptionDeps, 'o' | 'sn'>, alarm: Omit<AlarmNotify, 'sn'>): Buffer {
  return buildAlarmNotify({ ...alarm, sn: String(deps.sn.next()) }, { charset: deps.o.charset });
}

function kindOfGeneric(cmd: ManscdpCommand): SubscriptionKind | undefined {
  return cmd.kind === 'generic' && cmd.body.root === 'Query' && cmd.body.cmdType === 'Alarm' ? 'Alarm' : undefined;
}

/** RFC 6665 §4.2.1.1: the notifier may shorten the subscription, never lengthen it; 0 stays 0. */
function grantOf(o: ResolvedDeviceOptions, asked: number): number {
  return o.subscriptionMaxExpiresS === undefined ? asked : Math.min(asked, o.subscriptionMaxExpiresS);
}

function expiresOf(req: SipRequest): number {
  const raw = Number(req.headers.get('Expires') ?? DEFAULT_SUBSCRIBE_EXPIRES_S);
  return Number.isInteger(raw) && raw >= 0 ? raw : DEFAULT_SUBSCRIBE_EXPIRES_S;
}

async function sendInOrder(sub: Subscription, bodies: readonly Buffer[]): Promise<void> {
  for (const body of bodies) await sub.notify(body);
}

function positionBody(deps: SubscriptionDeps): Buffer {
  const { o } = deps;
  const t = o.clock.now() / 1000;
  return buildMobilePositionNotify(
    {
      sn: String(deps.sn.next()),
      deviceId: o.deviceId,
      time: formatGbTime(new Date(o.clock.now()), o.utcOffsetMinutes),
      // A slow circle around Tiananmen: enough movement to see updates.
      longitude: (116.397 + 0.001 * Math.cos(t / 60)).toFixed(6),
      latitude: (39.908 + 0.001 * Math.sin(t / 60)).toFixed(6),
      speed: '10.0',
      direction: String(Math.round(((t / 60) * 180) / Math.PI) % 360),
      altitude: '50',
    },
    { charset: o.charset },
  );
}
