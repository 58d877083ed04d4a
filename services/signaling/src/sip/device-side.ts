// The GB28181 device side of one instance (SPEC §8): binds SIP, answers REGISTER and MESSAGE,
// runs the offline scan, and offers the DeviceControlService the HTTP API calls. createApp wires it;
// nothing here knows HTTP or the cluster.
import { DigestServer, ownUdpSocketInode, type ServerContext, type SipRequest, type SipStack } from '@vms/sip';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { SipSettings } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { DeviceId } from '../devices/device.types.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import { createDeviceFlows, type DeviceFlows } from './device-flows.ts';
import { createDeviceMessenger } from './device-messenger.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import { createManscdpUplink } from './manscdp-uplink.ts';
import { createMessageHandlers } from './message.handler.ts';
import { createOfflineScanner, type OfflineScanner } from './offline-scanner.ts';
import { PendingQueries } from './pending-queries.ts';
import { DEFAULT_QUERY_TIMEOUTS, type QueryTimeouts } from './query-timeouts.ts';
import { createRegisterAdmission } from './register-admission.ts';
import { createStatelessChallenge } from './register-challenge.ts';
import { createRegisterHandler } from './register.handler.ts';
import type { RegisterPlacement } from './register-placement.ts';
import { createSipDeviceControl, type SipDeviceControl, type SnIndex } from './sip-device-control.ts';
import { createSipDeviceCommands, type SipDeviceCommands } from './sip-device-commands.ts';
import { createDeviceExchange } from './device-exchange.ts';
import { createSipBroadcast, type AudioSender, type SipBroadcast } from './sip-broadcast.ts';
import { createSnapshotFiles } from '../commands/snapshot-files.fs.ts';
import { join } from 'node:path';
import { startSipServer, UDP_RECEIVE_BUFFER_BYTES, type SipServerOptions } from './sip-server.ts';
import { createDeviceNotifyHandlers } from './device-notify.handler.ts';
import { DeviceSubscriptions, type SubscriptionTiming } from './device-subscriptions.ts';
import { createMemoryReportStore } from '../reports/report-store.memory.ts';
import type { ReportStore } from '../reports/report-store.port.ts';
import type { LimitSettings } from '../config/config.types.ts';
import { deviceLimits, sipStackLimits } from '../config/limits.ts';
import type { AudioSnapshot } from '../recovery/audio-snapshot.ts';
import type { SessionJournal } from '../recovery/session-journal.ts';

export interface DeviceSideOptions {
  readonly sip: SipSettings;
  readonly devices: DeviceRepository;
  readonly events: DeviceEvents;
  readonly clock: Clock;
  readonly log: Logger;
  readonly utcOffsetMinutes: number;
  readonly userAgent: string;
  readonly timeouts?: Partial<QueryTimeouts>;
  readonly snIndex?: SnIndex;
  readonly sipTimers?: SipServerOptions['timers'];
  /** SPEC SEC-3 bounds (SIP transport, per device); default: the modules' defaults. */
  readonly limits?: LimitSettings;
  /** Where subscription settings are read (the owner of a device reads them); default: in memory. */
  readonly reports?: Pick<ReportStore, 'subscriptionSettings' | 'saveSubscriptionSettings'>;
  readonly subscriptionTiming?: Partial<SubscriptionTiming>;
  /** Snapshot pictures are kept in `<dataDir>/snapshots` (created with the first one); default the working directory. */
  /** Other instances write the same device store (MySQL); default true (see OfflineScanOptions.storeShared). */
  readonly storeShared?: boolean;
  readonly dataDir?: string;
  /** Issue 14: register redirect; absent = every device served here. */
  readonly placement?: RegisterPlacement;
}

/** Takes a MESSAGE that is not from a device (an upstream platform's, src/cascade): true = handled. */
export type MessageInterceptor = (req: SipRequest, ctx: ServerContext) => boolean;

export interface DeviceSide {
  /** SIP port actually bound (UDP and TCP). */
  readonly sipPort: number;
  /** The SIP stack, for INVITE dialogs to devices (src/media). */
  readonly stack: SipStack;
  readonly control: SipDeviceControl;
  /** Presets, cruise, scan, configuration and the 2022 commands (commands/device-commands.port.ts). */
  readonly commands: SipDeviceCommands;
  /** Voice broadcast over `sender` (the media plane); the caller closes it and routes device INVITEs to it. */
  openBroadcast(sender: AudioSender, journal?: SessionJournal<AudioSnapshot> | null): SipBroadcast;
  readonly flows: DeviceFlows;
  readonly scanner: OfflineScanner;
  /** The platform's catalog / alarm / position subscriptions to its devices (GB/T 28181 §9.11). */
  readonly subscriptions: DeviceSubscriptions;
  /** OWN-4: the device is now owned elsewhere; no request leaves for it from here any more. */
  forgetDevice(deviceId: DeviceId): void;
  /** MESSAGEs the interceptor takes never reach the device handlers (one interceptor; null removes it). */
  interceptMessages(interceptor: MessageInterceptor | null): void;
  /** Stops the scan and rejects waiting queries; SIP keeps answering. Idempotent. */
  quiesce(): Promise<void>;
  /** quiesce() and closes the SIP sockets. Idempotent. */
  close(): Promise<void>;
}

export async function startDeviceSide(o: DeviceSideOptions): Promise<DeviceSide> {
  const log = o.log.child({ component: 'sip' });
  const stack = await startSipServer({
    sip: o.sip,
    clock: o.clock,
    log,
    userAgent: o.userAgent,
    ...(o.sipTimers === undefined ? {} : { timers: o.sipTimers }),
    ...(o.limits === undefined ? {} : { limits: sipStackLimits(o.limits) }),
  });
  const flows = createDeviceFlows();
  const deps: DeviceSideDeps = {
    sip: o.sip,
    devices: o.devices,
    flows,
    events: o.events,
    clock: o.clock,
    log,
    utcOffsetMinutes: o.utcOffsetMinutes,
    ...(o.limits === undefined ? {} : { limits: deviceLimits(o.limits) }),
    ...(o.placement === undefined ? {} : { placement: o.placement }),
  };
  const timeouts: QueryTimeouts = { ...DEFAULT_QUERY_TIMEOUTS, ...o.timeouts };
  const pending = new PendingQueries({ clock: o.clock, log });
  const messenger = createDeviceMessenger({ stack, sip: o.sip, clock: o.clock, requestMs: timeouts.requestMs });
  const uplink = createManscdpUplink(deps, pending, messenger);
  // SEC-1: nonces are MAC'd (keyed SHA-256) with a per-process key over realm and device id, so an answer is valid on
  // this process, for that device, once. No other instance needs them: a device answers its 401 to
  // the instance that sent it (same flow); after a restart devices are simply challenged again.
  const digest = new DigestServer({ realm: o.sip.realm, secret: randomBytes(32), qop: o.sip.digestQop === 'auth' });

  // issue 11: past the ceiling, new REGISTERs get 503 + Retry-After on the shortcut instead of queueing;
  // the first leg's 401 is answered there too, statelessly (register-challenge.ts)
  const challenge = createStatelessChallenge({ password: o.sip.password, registerExpiresMin: o.sip.registerExpiresMin, digest, clock: o.clock });
  // where the socket's queue cannot be read from /proc (a namespace crowded with UDP sockets), its delay is probed
  const probe = await stack.openQueueProbe();
  if (probe === null) log.info('no queue probe reached the SIP socket: where its queue cannot be read, registration shedding decides by event-loop utilization');
  const admission = createRegisterAdmission({
    flows,
    log,
    sipPort: stack.port,
    ...(probe === null ? {} : { queueDelay: () => probe.sample() }),
    // instances sharing the port each have a socket and a queue of their own there: read this one's
    ...(o.sip.portSharing === null ? {} : { sipSocketInode: ownUdpSocketInode(stack.port) ?? undefined }),
    challenge,
    setReceiveBuffer: (bytes) => stack.setUdpReceiveBuffer(bytes),
    receiveBufferBytes: UDP_RECEIVE_BUFFER_BYTES,
    ...(o.limits === undefined ? {} : { policy: o.limits.registerShed }),
  });
  stack.onStatelessRequest('REGISTER', admission.stateless, { ordinary: admission.ordinary });
  stack.onRequest('REGISTER', admission.wrap(createRegisterHandler(deps, digest)));
  const messages = createMessageHandlers(deps, uplink, (deviceId, now) => digest.challengeHeader(now, { subject: deviceId }));
  stack.onStatelessRequest('MESSAGE', messages.keepalive);
  let intercept: MessageInterceptor | null = null;
  stack.onRequest('MESSAGE', (req, ctx) => (intercept?.(req, ctx) === true ? undefined : messages.message(req, ctx)));

  // §9.11: subscriptions to devices and their NOTIFYs (in our dialogs, or outside any from some devices)
  const notifies = createDeviceNotifyHandlers(deps, uplink, messages.intake);
  stack.onRequest('NOTIFY', notifies.outOfDialog);
  const subscriptions = new DeviceSubscriptions({
    stack,
    sip: o.sip,
    flows,
    clock: o.clock,
    log,
    store: o.reports ?? createMemoryReportStore(),
    onNotify: (deviceId, req, ctx) => notifies.inDialog(deviceId, req, ctx),
    ...(o.subscriptionTiming === undefined ? {} : { timing: o.subscriptionTiming }),
  });
  // A REGISTER (re)starts what is not held on the device's current flow; going offline forgets all.
  const offEvents = [
    // O(1) on the keepalive path: only a REGISTER goes on
    o.events.on('uplink', (e) => {
      if (e.kind !== 'register') return;
      subscriptions.registered(e.deviceId).catch((err: unknown) => log.warn({ err, deviceId: e.deviceId }, 'device subscriptions not started'));
    }),
    o.events.on('offline', (e) => subscriptions.forget(e.deviceId)),
  ];

  const control = createSipDeviceControl({ side: deps, pending, messenger, uplink, timeouts, ...(o.snIndex === undefined ? {} : { snIndex: o.snIndex }) });
  const exchange = createDeviceExchange({ side: deps, pending, messenger, uplink, responseMs: timeouts.deviceInfoMs });
  const files = createSnapshotFiles({ dir: join(o.dataDir ?? '.', 'snapshots'), maxFiles: o.limits?.snapshotMaxFiles ?? 1000 });
  await files.load();
  const commands = createSipDeviceCommands({ side: deps, exchange, files, uploadBaseUrl: o.sip.uploadBaseUrl });
  const scanner = createOfflineScanner({
    devices: o.devices,
    flows,
    events: o.events,
    clock: o.clock,
    log,
    keepaliveIntervalSec: o.sip.keepaliveIntervalSec,
    keepaliveTimeoutCount: o.sip.keepaliveTimeoutCount,
    periodSec: o.sip.offlineScanPeriodSec,
    ...(o.storeShared === undefined ? {} : { storeShared: o.storeShared }),
  });

  let quiesced: Promise<void> | null = null;
  let closed: Promise<void> | null = null;
  const quiesce = (): Promise<void> => {
    commands.close();
    admission.close();
    quiesced ??= Promise.all([scanner.close(), control.close(), messages.close()]).then(() => {
      for (const off of offEvents) off();
      subscriptions.close();
    });
    return quiesced;
  };

  return {
    sipPort: stack.port,
    stack,
    control,
    commands,
    openBroadcast: (sender, journal) => createSipBroadcast({ side: deps, exchange, sender, serverId: o.sip.serverId, inviteWaitMs: timeouts.deviceInfoMs, journal }),
    flows,
    scanner,
    subscriptions,
    forgetDevice(deviceId) {
      subscriptions.forget(deviceId);
      if (flows.forget(deviceId)) log.info({ deviceId }, 'device registration dropped: owned by another node now');
    },
    interceptMessages(interceptor) {
      intercept = interceptor;
    },
    quiesce,
    close() {
      closed ??= quiesce().then(() => stack.close());
      return closed;
    },
  };
}
