// The platform's subscriptions to the devices it owns (GB/T 28181-2016 §9.11, RFC 6665 §4.1): catalog,
// alarm and mobile position, each turned on per device (the settings live in the report store, so a
// device's next owner reads them). A subscription is opened when the device registers here (again on a
// new flow, or after coming back online: a rebooted device forgot it), refreshed before it expires,
// and dropped without a word when the device goes offline or its ownership moves (OWN-4: the new owner
// subscribes when the device registers there). NOTIFYs in the dialog go to the device-notify handler.
//
// Bounds (SPEC SEC-3): at most three subscriptions per device (one per kind); every deadline of every
// device sits in one due-queue behind one timer (no timer per device); at most `maxInFlight` SUBSCRIBEs
// wait for an answer at once, the rest are postponed. A device that never answers (sample 13: Ellean
// ignores SUBSCRIBE) costs one SIP transaction until Timer F; our wait for it ends after `answerMs`,
// the subscription reads `unanswered` and is tried again after `retryMs`. A 2xx arriving after that is
// torn down locally.
import { buildAlarmQuery, buildCatalogQuery, buildMobilePositionQuery } from '@vms/gb28181';
import { flowKey, type Dialog, type RequestContext, type SipRequest, type SipResponse, type SipStack } from '@vms/sip';
import type { Logger } from 'pino';
import type { SipSettings } from '../config/config.types.ts';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { DeviceId } from '../devices/device.types.ts';
import { SUBSCRIPTION_KINDS, type DeviceSubscriptionKind, type ReportStore, type SubscriptionSettings } from '../reports/report-store.port.ts';
import type { DeviceFlows, DeviceSession } from './device-flows.ts';
import { MANSCDP_CONTENT_TYPE } from './device-side.types.ts';
import { DueQueue } from './due-queue.ts';

export type SubscriptionState = 'pending' | 'active' | 'unanswered' | 'refused' | 'failed';

export interface SubscriptionView {
  readonly kind: DeviceSubscriptionKind;
  readonly state: SubscriptionState;
  /** Epoch ms the device's grant ends (active only). */
  readonly expiresAt: number | null;
  /** Epoch ms of the next refresh or retry. */
  readonly nextAt: number | null;
  readonly lastError: string | null;
}

export interface DeviceSubscriptionsView {
  readonly deviceId: DeviceId;
  readonly settings: SubscriptionSettings;
  readonly subscriptions: readonly SubscriptionView[];
}

export interface SubscriptionTiming {
  /** Expires we ask for, seconds (RFC 6665 §4.1.2.1; the device may grant less). */
  readonly expiresS: number;
  /** How long we wait for the device's answer to a SUBSCRIBE. */
  readonly answerMs: number;
  /** Next attempt after an unanswered, refused or failed SUBSCRIBE, or a subscription the device ended. */
  readonly retryMs: number;
  readonly maxInFlight: number;
}

export const DEFAULT_SUBSCRIPTION_TIMING: SubscriptionTiming = { expiresS: 3600, answerMs: 5000, retryMs: 300_000, maxInFlight: 64 };

/** How long before the grant ends a refresh goes out: a quarter of the grant, at most 60 s. */
export const refreshLeadMs = (grantedS: number): number => Math.min(60_000, (grantedS * 1000) / 4);

/**
 * Event header per kind: `Catalog` (§9.11.1); alarm and mobile position subscriptions carry
 * `presence` in the 2016 text and in what devices expect (sample 15's notes, WVP); the body's
 * CmdType tells the kinds apart.
 */
const EVENT: Readonly<Record<DeviceSubscriptionKind, string>> = { catalog: 'Catalog', alarm: 'presence', mobileposition: 'presence' };

export interface DeviceSubscriptionsOptions {
  readonly stack: Pick<SipStack, 'createUAC'>;
  readonly sip: Pick<SipSettings, 'serverId' | 'realm'>;
  readonly flows: DeviceFlows;
  readonly clock: Clock;
  readonly log: Logger;
  readonly store: Pick<ReportStore, 'subscriptionSettings' | 'saveSubscriptionSettings'>;
  /** A NOTIFY in one of our subscription dialogs (answered there). */
  readonly onNotify: (deviceId: DeviceId, req: SipRequest, ctx: RequestContext) => void;
  readonly timing?: Partial<SubscriptionTiming>;
}

interface Held {
  readonly deviceId: DeviceId;
  readonly kind: DeviceSubscriptionKind;
  state: SubscriptionState;
  dialog: Dialog | null;
  flow: string;
  expiresAt: number | null;
  nextAt: number | null;
  lastError: string | null;
  /** Bumped by every start/stop: an async outcome for an older attempt is dropped. */
  attempt: number;
  intervalS: number;
}

const keyOf = (deviceId: DeviceId, kind: DeviceSubscriptionKind): string => `${deviceId}/${kind}`;

class NoAnswer extends Error {}

export class DeviceSubscriptions {
  readonly #o: DeviceSubscriptionsOptions;
  readonly #t: SubscriptionTiming;
  readonly #log: Logger;
  readonly #held = new Map<string, Held>();
  readonly #due = new DueQueue();
  #timer: TimerHandle | undefined;
  #timerAt = Infinity;
  #inFlight = 0;
  #sn = 1;
  #closed = false;

  constructor(o: DeviceSubscriptionsOptions) {
    this.#o = o;
    this.#t = { ...DEFAULT_SUBSCRIPTION_TIMING, ...o.timing };
    this.#log = o.log.child({ component: 'device-subscriptions' });
  }

  /** Subscriptions held or being tried, over all devices. */
  get size(): number {
    return this.#held.size;
  }

  /**
   * The device registered here: kinds turned on and not held on its current flow are (re)started (a
   * device back from offline or from another owner holds none here; one that moved to a new port
   * forgot them). A refresh REGISTER on the same flow changes nothing.
   */
  async registered(deviceId: DeviceId): Promise<void> {
    const settings = await this.#o.store.subscriptionSettings(deviceId);
    const session = this.#o.flows.get(deviceId);
    if (session === undefined || this.#closed) return;
    const flow = flowKey(session.flow);
    for (const kind of SUBSCRIPTION_KINDS) {
      if (!settings[kind]) continue;
      const h = this.#held.get(keyOf(deviceId, kind));
      if (h !== undefined && h.flow === flow && h.state !== 'failed') continue;
      this.#drop(deviceId, kind, false);
      this.#begin(deviceId, kind, settings.intervalS).catch((err: unknown) => this.#log.warn({ err, deviceId, kind }, 'device subscription not started'));
    }
  }

  /** The device went offline here or is owned elsewhere now: forget its subscriptions, send nothing. */
  forget(deviceId: DeviceId): void {
    for (const kind of SUBSCRIPTION_KINDS) this.#drop(deviceId, kind, false);
  }

  /** Turns one kind on or off for a device this instance owns; waits for the first outcome when on. */
  async set(deviceId: DeviceId, kind: DeviceSubscriptionKind, enabled: boolean, intervalS?: number): Promise<DeviceSubscriptionsView> {
    const current = await this.#o.store.subscriptionSettings(deviceId);
    const next: SubscriptionSettings = { ...current, [kind]: enabled, ...(intervalS === undefined ? {} : { intervalS }) };
    await this.#o.store.saveSubscriptionSettings(deviceId, next);
    this.#drop(deviceId, kind, true);
    if (enabled) await this.#begin(deviceId, kind, next.intervalS);
    return this.view(deviceId, next);
  }

  async view(deviceId: DeviceId, known?: SubscriptionSettings): Promise<DeviceSubscriptionsView> {
    const settings = known ?? (await this.#o.store.subscriptionSettings(deviceId));
    const subscriptions: SubscriptionView[] = [];
    for (const kind of SUBSCRIPTION_KINDS) {
      const h = this.#held.get(keyOf(deviceId, kind));
      if (h !== undefined) subscriptions.push({ kind, state: h.state, expiresAt: h.expiresAt, nextAt: h.nextAt, lastError: h.lastError });
    }
    return { deviceId, settings, subscriptions };
  }

  /** Stops the timer and forgets every subscription locally (the devices' grants run out). Idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const h of [...this.#held.values()]) this.#drop(h.deviceId, h.kind, false);
  }

  // ---- one subscription ----

  #begin(deviceId: DeviceId, kind: DeviceSubscriptionKind, intervalS: number): Promise<void> {
    const h: Held = { deviceId, kind, state: 'pending', dialog: null, flow: '', expiresAt: null, nextAt: null, lastError: null, attempt: 0, intervalS };
    this.#held.set(keyOf(deviceId, kind), h);
    return this.#subscribe(h);
  }

  async #subscribe(h: Held): Promise<void> {
    const session = this.#o.flows.get(h.deviceId);
    const now = this.#o.clock.now();
    if (session === undefined || session.expiresAt <= now) {
      this.#fail(h, 'failed', 'device not registered here');
      return;
    }
    if (this.#inFlight >= this.#t.maxInFlight) {
      h.state = 'pending';
      this.#schedule(h, now + Math.min(1000, this.#t.answerMs));
      return;
    }
    const attempt = ++h.attempt;
    h.state = 'pending';
    h.flow = flowKey(session.flow);
    this.#inFlight++;
    const uac = this.#o.stack.createUAC({
      method: 'SUBSCRIBE',
      uri: `sip:${h.deviceId}@${hostPart(session.flow.remoteAddress)}:${session.flow.remotePort}${session.flow.transport === 'tcp' ? ';transport=tcp' : ''}`,
      headers: {
        From: `<sip:${this.#o.sip.serverId}@${this.#o.sip.realm}>`,
        To: `<sip:${h.deviceId}@${this.#o.sip.realm}>`,
        Event: EVENT[h.kind],
        Expires: String(this.#t.expiresS),
        // Issue 14: behind a SIP edge, through the Path it recorded (RFC 3327 §5)
        ...(session.path === null ? {} : { Route: session.path }),
      },
      body: this.#body(h, session),
      contentType: MANSCDP_CONTENT_TYPE,
      target: session.flow,
    });
    uac.then(
      ({ dialog }) => {
        // Answered after we stopped waiting, or for an attempt superseded since: not ours to keep.
        if (h.attempt !== attempt || this.#held.get(keyOf(h.deviceId, h.kind)) !== h || this.#closed) void dialog.destroy();
      },
      () => undefined,
    );
    try {
      const { dialog, response } = await this.#withDeadline(uac);
      if (h.attempt !== attempt) return;
      this.#activate(h, dialog, response);
    } catch (err) {
      if (h.attempt !== attempt) return;
      // an answer arriving from now on belongs to an abandoned attempt: torn down when it comes
      h.attempt++;
      if (err instanceof NoAnswer) this.#fail(h, 'unanswered', `no answer in ${this.#t.answerMs} ms`);
      else if (isRejected(err)) this.#fail(h, 'refused', `SIP ${err.response.status} ${err.response.reason}`.trim());
      else this.#fail(h, 'failed', err instanceof Error ? err.message : String(err));
    } finally {
      this.#inFlight--;
    }
  }

  #activate(h: Held, dialog: Dialog, response: SipResponse): void {
    h.dialog = dialog;
    h.state = 'active';
    h.lastError = null;
    dialog.on('notify', (req, ctx) => this.#o.onNotify(h.deviceId, req, ctx));
    dialog.once('terminated', (reason) => {
      if (h.dialog !== dialog || reason === 'local' || reason === 'closed') return;
      h.dialog = null;
      this.#fail(h, 'failed', `subscription ended by the device (${reason})`);
    });
    this.#granted(h, response);
    this.#log.info({ deviceId: h.deviceId, kind: h.kind, expiresAt: h.expiresAt }, 'subscribed to device');
  }

  #granted(h: Held, response: SipResponse): void {
    const raw = Number(response.headers.get('Expires')?.trim());
    const granted = Number.isInteger(raw) && raw > 0 ? Math.min(raw, this.#t.expiresS) : this.#t.expiresS;
    const now = this.#o.clock.now();
    h.expiresAt = now + granted * 1000;
    this.#schedule(h, h.expiresAt - refreshLeadMs(granted));
  }

  async #refresh(h: Held): Promise<void> {
    const dialog = h.dialog;
    const session = this.#o.flows.get(h.deviceId);
    if (dialog === null || dialog.terminated || session === undefined) return this.#subscribe(h);
    const attempt = ++h.attempt;
    try {
      const res = await this.#withDeadline(
        dialog.request('SUBSCRIBE', { headers: { Event: EVENT[h.kind], Expires: String(this.#t.expiresS) }, body: this.#body(h, session), contentType: MANSCDP_CONTENT_TYPE }),
      );
      if (h.attempt !== attempt) return;
      if (res.status >= 200 && res.status < 300) {
        this.#granted(h, res);
        return;
      }
      h.lastError = `refresh answered SIP ${res.status}`;
    } catch (err) {
      if (h.attempt !== attempt) return;
      h.lastError = err instanceof NoAnswer ? 'refresh unanswered' : 'refresh failed';
    }
    // RFC 6665 §4.1.2.2: a failed refresh ends the subscription; start a new one at once.
    h.dialog = null;
    void dialog.destroy();
    this.#log.info({ deviceId: h.deviceId, kind: h.kind, reason: h.lastError }, 'device subscription refresh failed, subscribing again');
    await this.#subscribe(h);
  }

  #fail(h: Held, state: SubscriptionState, reason: string): void {
    h.state = state;
    h.lastError = reason;
    h.expiresAt = null;
    this.#log.info({ deviceId: h.deviceId, kind: h.kind, state, reason }, 'device subscription not held');
    this.#schedule(h, this.#o.clock.now() + this.#t.retryMs);
  }

  /** Removes one subscription; `unsubscribe`: tell the device (Expires 0, RFC 6665 §4.1.2.3), not awaited. */
  #drop(deviceId: DeviceId, kind: DeviceSubscriptionKind, unsubscribe: boolean): void {
    const key = keyOf(deviceId, kind);
    const h = this.#held.get(key);
    if (h === undefined) return;
    this.#held.delete(key);
    this.#due.cancel(key);
    h.attempt++;
    const dialog = h.dialog;
    h.dialog = null;
    if (dialog === null || dialog.terminated) return;
    if (!unsubscribe) {
      void dialog.destroy();
      return;
    }
    this.#withDeadline(dialog.request('SUBSCRIBE', { headers: { Event: EVENT[kind], Expires: '0' } })).then(
      () => void dialog.destroy(),
      () => void dialog.destroy(),
    );
  }

  #body(h: Held, session: DeviceSession): Buffer {
    const sn = String(this.#sn++);
    const opts = { charset: session.charset };
    switch (h.kind) {
      case 'catalog':
        return buildCatalogQuery({ sn, deviceId: h.deviceId }, opts);
      case 'alarm':
        // §A.2.4: priority 0 and method 0 = every alarm
        return buildAlarmQuery({ sn, deviceId: h.deviceId, startAlarmPriority: '0', endAlarmPriority: '0', alarmMethod: '0' }, opts);
      case 'mobileposition':
        return buildMobilePositionQuery({ sn, deviceId: h.deviceId, interval: String(h.intervalS) }, opts);
    }
  }

  #withDeadline<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.#o.clock.setTimeout(() => reject(new NoAnswer()), this.#t.answerMs);
      work.then(
        (v) => {
          this.#o.clock.clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          this.#o.clock.clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  // ---- the one timer ----

  #schedule(h: Held, at: number): void {
    if (this.#closed) return;
    h.nextAt = at;
    this.#due.schedule(keyOf(h.deviceId, h.kind), at);
    this.#arm();
  }

  #arm(): void {
    const next = this.#due.nextDueAt();
    if (next === null || next >= this.#timerAt) return;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timerAt = next;
    this.#timer = this.#o.clock.setTimeout(() => this.#fire(), Math.max(0, next - this.#o.clock.now()));
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    if (this.#closed) return;
    for (const key of this.#due.takeDue(this.#o.clock.now())) {
      const h = this.#held.get(key);
      if (h === undefined) continue;
      h.nextAt = null;
      const work = h.state === 'active' ? this.#refresh(h) : this.#subscribe(h);
      work.catch((err: unknown) => this.#log.warn({ err, deviceId: h.deviceId, kind: h.kind }, 'device subscription step failed'));
    }
    this.#arm();
  }
}

const hostPart = (address: string): string => (address.includes(':') ? `[${address}]` : address);

function isRejected(err: unknown): err is Error & { response: SipResponse } {
  return err instanceof Error && err.name === 'SipRejectedError' && 'response' in err;
}
