// One simulated GB/T 28181 device (IPC, or NVR with several channels) on its own SIP stack:
// registration, keepalive, MANSCDP answers, media sessions, subscriptions. `start()` / `close()`;
// what the platform asked is kept in `commands`, `controls`, `sessions`, `subscriptions` for tests.
import { EventEmitter } from 'node:events';
import { buildCatalogNotify, buildMediaStatusNotify, createSnGenerator, formatGbTime, makeSsrc, MEDIA_STATUS_END_OF_FILE, type AlarmNotify } from '@vms/gb28181';
import { createSipStack, rawResponder, SipStatus, type Dialog, type SipLogger, type SipStack } from '@vms/sip';
import { settleWithin } from './bounded.ts';
import { buildChannels, catalogItems, type SimChannel } from './channels.ts';
import { handleManscdpMessage, type ReceivedCommand, type RecordedControl } from './commands.ts';
import { deviceClosedError } from './errors.ts';
import { handleInvite } from './invite.ts';
import { Keepalive } from './keepalive.ts';
import { resolveDeviceOptions, type ResolvedDeviceOptions, type SimulatedDeviceOptions } from './options.ts';
import { PlatformLink } from './platform-link.ts';
import { PtzState } from './ptz-state.ts';
import { answerBroadcast, type AudioCall } from './broadcast.ts';
import { Registration } from './registration.ts';
import type { MediaSession } from './session.ts';
import { alarmBody, handleSubscribe, type Subscription, type SubscriptionDeps } from './subscriptions.ts';

/** How long close() waits for BYEs to active sessions before closing the stack anyway. */
const CLOSE_BYE_TIMEOUT_MS = 1000;

export interface SimulatedDeviceEvents {
  registered: [expiresS: number];
  'registration-failed': [err: Error];
  unregistered: [];
  /** A keepalive got this final status, or none (undefined). */
  keepalive: [status: number | undefined];
  command: [command: ReceivedCommand];
  control: [control: RecordedControl];
  session: [session: MediaSession];
  /** MediaStatus 121 sent for a playback/download whose range ended. */
  'media-status': [session: MediaSession];
  subscription: [subscription: Subscription];
}

export interface AlarmInput {
  /** Channel (or device) raising it; default the device. */
  deviceId?: string;
  /** 1 (highest) .. 4. Default 1. */
  priority?: string;
  /** AlarmMethod: 2 = device alarm (default), 5 = video alarm... (§A.2.5). */
  method?: string;
  description?: string;
  alarmType?: string;
}

type DeviceState = 'new' | 'starting' | 'running' | 'closing' | 'closed';

const OWN_SSRC_SEQUENCE_BASE = 7000;

export class SimulatedDevice extends EventEmitter<SimulatedDeviceEvents> {
  readonly options: ResolvedDeviceOptions;
  readonly channels: readonly SimChannel[];
  /** Every MANSCDP request/notification the platform sent, in arrival order. */
  readonly commands: ReceivedCommand[] = [];
  /** DeviceControl commands, PTZCmd decoded. */
  readonly controls: RecordedControl[] = [];
  /** Every media session, ended ones included. */
  readonly sessions: MediaSession[] = [];
  /**
   * Quirk of some lower platforms: answer INVITEs with an SSRC of our own (from our own domain) instead of
   * echoing the offer's y=, and send RTP with it.
   */
  answersOwnSsrc = false;
  /**
   * Quirk seen in captures (sample 13: Ellean logs 'Unsupported method: SUBSCRIBE'): SUBSCRIBEs get no
   * answer at all; the platform must give up waiting on its own. Counted in `ignoredSubscribes`.
   */
  ignoresSubscribe = false;
  ignoredSubscribes = 0;
  /**
   * Quirk of capture 05 (Ellean): the 200 to the platform's MESSAGEs carries no To-tag (RFC 3261
   * §8.2.6.2 requires one). Counted in `untaggedAnswers`.
   */
  answersWithoutToTag = false;
  untaggedAnswers = 0;
  /**
   * Quirk (issue 16 item 15): the MESSAGEs the device sends announce their body length in
   * characters, as firmware writing `Content-Length: xml.length` does — short of the bytes as soon
   * as a Chinese name is in the body.
   */
  countsCharacters = false;
  /**
   * Two-way talk (语音对讲): the broadcast INVITE offers `a=sendrecv` and the device sends G.711A back to
   * the answer's port (`audioCalls[i].sent`). Off: the INVITE offers `recvonly`, as a speaker-only device.
   */
  talks = false;
  readonly subscriptions: Subscription[] = [];
  /** Resolves when the device closes: what an ignored request's handler waits for (no answer until then). */
  readonly #closedSignal: { promise: Promise<void>; resolve: () => void } = (() => {
    let resolve = (): void => {};
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  })();
  /** Presets, cruise tracks, home position, position, BasicParam, firmware, SD cards as the platform left them. */
  readonly state: PtzState;
  /** Voice broadcasts (Notify/Broadcast → our audio INVITE), ended ones included. */
  readonly audioCalls: AudioCall[] = [];
  /** Snapshot uploads (SnapShotConfig): HTTP status per picture (0 = no answer). */
  readonly uploads: { url: string; status: number; bytes: number }[] = [];
  readonly #log: SipLogger;
  readonly #sn = createSnGenerator();
  readonly #dialogs = new Map<MediaSession, Dialog>();
  readonly #pending = new Set<Promise<unknown>>();
  #ssrcSequence = 0;
  #state: DeviceState = 'new';
  #starting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #stack: SipStack | undefined;
  #link: PlatformLink | undefined;
  #registration: Registration | undefined;
  #keepalive: Keepalive | undefined;

  constructor(opts: SimulatedDeviceOptions) {
    super();
    this.options = resolveDeviceOptions(opts);
    this.channels = buildChannels(this.options);
    const o = this.options;
    this.state = new PtzState({ name: o.name, firmware: o.firmware, expiration: o.registerExpiresS, heartBeatInterval: o.keepaliveIntervalS, heartBeatCount: o.keepaliveMaxFailures });
    this.#log = this.options.logger.child({ deviceId: this.options.deviceId });
  }

  get deviceId(): string {
    return this.options.deviceId;
  }
  get channelIds(): string[] {
    return this.channels.map((c) => c.id);
  }
  get registered(): boolean {
    return this.#registration?.registered ?? false;
  }
  /** Successful REGISTERs so far (refreshes and re-registrations included). */
  get registrationCount(): number {
    return this.#registration?.count ?? 0;
  }
  /** The SIP port bound (0 before start). */
  get sipPort(): number {
    return this.#stack?.port ?? 0;
  }
  get activeSessions(): MediaSession[] {
    return this.sessions.filter((s) => s.state !== 'closed' && s.state !== 'failed');
  }

  /** Binds the SIP stack and registers; resolves after the first REGISTER attempt (failures are retried). */
  start(): Promise<void> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    if (this.#state !== 'new') throw deviceClosedError();
    this.#state = 'starting';
    const o = this.options;
    const stack = await createSipStack({
      host: o.localHost,
      port: o.localPort,
      transports: [o.transport],
      userAgent: o.userAgent,
      clock: o.clock,
      logger: this.#log,
      timers: o.sipTimers,
    });
    this.#stack = stack;
    if (this.#state !== 'starting') throw deviceClosedError(); // close() ran meanwhile and closes the stack
    const link = new PlatformLink(stack, o, () => this.countsCharacters);
    this.#link = link;
    this.#installHandlers(stack, link);
    const registration = new Registration({ stack, link, o, log: this.#log });
    registration.on('registered', (s) => this.emit('registered', s));
    registration.on('failed', (e) => this.emit('registration-failed', e));
    registration.on('unregistered', () => this.emit('unregistered'));
    this.#registration = registration;
    this.#keepalive = new Keepalive({ o, link, registration, sn: this.#sn, log: this.#log, onResult: (s) => this.emit('keepalive', s) });
    this.#state = 'running';
    await registration.start();
    if (this.#state === 'running') this.#keepalive.start();
  }

  /** Alarm (§9.4): NOTIFY to alarm subscriptions if there are any, else a MESSAGE to the platform. */
  async raiseAlarm(input: AlarmInput = {}): Promise<void> {
    const link = this.#link;
    if (link === undefined || this.#state !== 'running') throw deviceClosedError();
    const alarm: Omit<AlarmNotify, 'sn'> = {
      deviceId: input.deviceId ?? this.deviceId,
      alarmPriority: input.priority ?? '1',
      alarmMethod: input.method ?? '2',
      alarmTime: formatNow(this.options),
      alarmDescription: input.description ?? '模拟报警',
    };
    if (input.alarmType !== undefined) alarm.alarmType = input.alarmType;
    const subs = this.subscriptions.filter((s) => s.kind === 'Alarm' && s.active);
    if (subs.length === 0) {
      await link.sendManscdp(alarmBody({ o: this.options, sn: this.#sn }, alarm));
      return;
    }
    await Promise.all(subs.map((s) => s.notify(alarmBody({ o: this.options, sn: this.#sn }, alarm))));
  }

  /** Catalog NOTIFY (§9.11.1) of one channel's change (ON, OFF, ADD, DEL, UPDATE…) in every catalog subscription. */
  async notifyCatalog(event: string, channelIndex = 0): Promise<number> {
    if (this.#state !== 'running') throw deviceClosedError();
    const items = catalogItems(this.options, this.channels, { sipPort: this.#stack?.port ?? 0, event }).slice(channelIndex, channelIndex + 1);
    const subs = this.subscriptions.filter((s) => s.kind === 'Catalog' && s.active);
    const body = (): Buffer => buildCatalogNotify({ sn: String(this.#sn.next()), deviceId: this.deviceId, sumNum: items.length, items }, { charset: this.options.charset });
    await Promise.all(subs.map((s) => s.notify(body())));
    return subs.length;
  }

  /** Idempotent: BYE to active sessions, unregister, stop timers, close the stack. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /**
   * Power loss (a reboot, a move to another platform address): nothing more is sent — no BYE, no unregister —,
   * media stops and the stack closes, as when the camera loses power. Idempotent with close().
   */
  powerOff(): Promise<void> {
    this.#closing ??= this.#close(true);
    return this.#closing;
  }

  async #close(silent = false): Promise<void> {
    const was = this.#state;
    this.#state = 'closing';
    // Binding the stack is quick; the first REGISTER is not waited for (registration.stop() bounds it).
    if (was === 'starting') await this.#starting?.catch(() => undefined);
    this.#keepalive?.stop();
    if (silent) this.#registration?.halt();
    else if (this.#registration !== undefined) {
      await settleWithin(this.options.clock, Promise.all([...this.#dialogs.values()].map((d) => d.destroy())), CLOSE_BYE_TIMEOUT_MS);
      await this.#registration?.stop();
    }
    for (const s of this.subscriptions) s.close();
    this.#closedSignal.resolve();
    if (!silent) await settleWithin(this.options.clock, Promise.all(this.audioCalls.filter((c) => !c.ended).map((c) => c.hangUp())), CLOSE_BYE_TIMEOUT_MS);
    await this.#stack?.close();
    for (const s of this.sessions) s.close('closed');
    await Promise.allSettled([...this.#pending]);
    this.#state = 'closed';
  }

  #installHandlers(stack: SipStack, link: PlatformLink): void {
    const o = this.options;
    const sipPort = (): number => stack.port;
    const track = (work: Promise<unknown>): void => {
      this.#pending.add(work);
      void work.finally(() => this.#pending.delete(work));
    };
    stack.onRequest('MESSAGE', (req, ctx) =>
      handleManscdpMessage(
        {
          o,
          link,
          channels: this.channels,
          sipPort,
          log: this.#log,
          track,
          state: this.state,
          sn: this.#sn,
          onUpload: (u) => this.uploads.push(u),
          replyOk: (ctx) => {
            if (!this.answersWithoutToTag) {
              ctx.reply(SipStatus.OK);
              return;
            }
            const raw = rawResponder(ctx);
            if (raw === undefined) throw new Error('answersWithoutToTag needs the stack’s own request context');
            const res = raw.buildResponse(SipStatus.OK);
            res.headers.set('To', ctx.request.headers.get('To') ?? '');
            this.untaggedAnswers++;
            raw.send(res);
          },
          onBroadcast: async (n) => {
            const call = await answerBroadcast({ o, stack, link, log: this.#log, sequence: () => ++this.#ssrcSequence, talks: this.talks }, n);
            this.audioCalls.push(call);
          },
          onCommand: (c) => {
            this.commands.push(c);
            this.emit('command', c);
          },
          onControl: (c) => {
            this.controls.push(c);
            this.emit('control', c);
          },
        },
        req,
        ctx,
      ),
    );
    stack.onRequest('INVITE', (req, ctx) =>
      handleInvite(
        {
          o,
          channels: this.channels,
          log: this.#log,
          makeSsrc: (history) =>
            this.answersOwnSsrc
              ? // our own domain, and sequences far from a platform's first ones, so the answer really differs
                makeSsrc({ history, domain: o.deviceId.slice(0, 10), sequence: OWN_SSRC_SEQUENCE_BASE + ++this.#ssrcSequence })
              : makeSsrc({ history, domain: o.server.domain, sequence: ++this.#ssrcSequence }),
          answersOwnSsrc: () => this.answersOwnSsrc,
          onSession: (session, dialog) => this.#adoptSession(session, dialog, link, track),
        },
        req,
        ctx,
      ),
    );
    const subDeps: SubscriptionDeps = { o, channels: this.channels, sn: this.#sn, sipPort, log: this.#log, track };
    stack.onRequest('SUBSCRIBE', (req, ctx) => {
      if (this.ignoresSubscribe) {
        this.ignoredSubscribes++;
        return this.#closedSignal.promise; // the transaction stays unanswered while the device lives
      }
      const sub = handleSubscribe(subDeps, req, ctx);
      if (sub === undefined) return;
      this.subscriptions.push(sub);
      this.emit('subscription', sub);
    });
  }

  #adoptSession(session: MediaSession, dialog: Dialog, link: PlatformLink, track: (w: Promise<unknown>) => void): void {
    this.sessions.push(session);
    this.#dialogs.set(session, dialog);
    session.once('closed', () => this.#dialogs.delete(session));
    session.once('range-end', () => {
      // §9.8: MediaStatus NotifyType 121 when the file has been sent; platforms match it by Call-ID.
      const body = buildMediaStatusNotify(
        { sn: String(this.#sn.next()), deviceId: session.channelId, notifyType: MEDIA_STATUS_END_OF_FILE },
        { charset: this.options.charset },
      );
      track(
        link.sendManscdp(body, { callId: session.callId }).then(
          () => this.emit('media-status', session),
          (err: unknown) => this.#log.debug({ err, callId: session.callId }, 'device MediaStatus not delivered'),
        ),
      );
    });
    this.emit('session', session);
  }
}

export function createSimulatedDevice(opts: SimulatedDeviceOptions): SimulatedDevice {
  return new SimulatedDevice(opts);
}

function formatNow(o: ResolvedDeviceOptions): string {
  return formatGbTime(new Date(o.clock.now()), o.utcOffsetMinutes);
}
