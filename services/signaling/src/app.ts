// createApp(config, deps) → { start, close }: wires one signaling instance. Phase 1: device store and
// the HTTP control API; the SIP side plugs in through `deps.control` (DeviceControlService).
import { createRegisterPlacement } from './sip/register-placement.ts';
import { createMysqlPool, migrate } from '@vms/cluster';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'mysql2/promise';
import type { Logger } from 'pino';
import pkg from '../package.json' with { type: 'json' };
import { openCascade, type CascadeWiring } from './cascade/cascade-wiring.ts';
import { createZlmAudioSender } from './media/audio-sender.zlm.ts';
import { openCluster } from './cluster/cluster-wiring.ts';
import type { NodeTableReadResult } from './cluster/node-tracker.ts';
import type { Config } from './config/config.types.ts';
import { envNameOf } from './config/schema.ts';
import { createUnavailableDeviceControl } from './control/device-control.unavailable.ts';
import { createDeviceEvents, type DeviceEvents } from './events/device-events.ts';
import { bridgeOwnership } from './events/ownership-bridge.ts';
import { openMedia, type MediaWiring } from './media/media-wiring.ts';
import { createMetrics } from './metrics/metrics.ts';
import { openRouting } from './routing/routing-wiring.ts';
import { httpGetProber, sipOptionsProber } from './routing/routing-probers.ts';
import { startDeviceSide, type DeviceSide } from './sip/device-side.ts';
import { attachReportRecorder } from './reports/report-recorder.ts';
import { createMemoryReportStore } from './reports/report-store.memory.ts';
import { createMysqlReportStore } from './reports/report-store.mysql.ts';
import type { ReportStore } from './reports/report-store.port.ts';
import { httpLimits, mysqlPoolLimits } from './config/limits.ts';
import { DEFAULT_QUERY_TIMEOUTS, type QueryTimeouts } from './sip/query-timeouts.ts';
import type { SipBroadcast } from './sip/sip-broadcast.ts';
import { openAudioContinuity } from './recovery/audio-continuity.ts';
import type { DeviceControlService } from './control/device-control.port.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { createMysqlDeviceRepository } from './devices/device-repository.mysql.ts';
import { createSqliteDeviceRepository } from './devices/device-repository.sqlite.ts';
import type { DeviceRepository } from './devices/device-repository.port.ts';
import { ShuttingDownError } from './errors/catalog.ts';
import { buildHttpApp } from './http/app.ts';
import type { OwnerRoutingHook, Readiness } from './http/handler.types.ts';
import { createLogger } from './logging/logger.ts';
import { createStandaloneNodeDirectory } from './nodes/node-directory.standalone.ts';
import type { NodeDirectory } from './nodes/node-directory.port.ts';
import { startHeapRelease, type CollectGarbage } from './memory/heap-release.ts';
import { createSelfOwnerDirectory } from './ownership/owner-directory.standalone.ts';
import type { OwnerDirectory } from './ownership/owner-directory.port.ts';
import { openEmbeddedStore, type EmbeddedDb, type EmbeddedStore } from './storage/embedded-store.sqlite.ts';
import { SQL_DIR } from './storage/sql-dir.ts';

export const SERVICE_VERSION: string = pkg.version;

/** Everything replaceable; defaults are the standalone implementations chosen from `config`. */
export interface AppDeps {
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly devices?: DeviceRepository;
  readonly control?: DeviceControlService;
  readonly nodes?: NodeDirectory;
  readonly owners?: OwnerDirectory;
  readonly ownerRouting?: OwnerRoutingHook;
  /** Platform UTC offset for zoned API times; default: this process's local offset. */
  readonly utcOffsetMinutes?: number;
  /** Device events ('online', 'offline', 'catalogChanged', …); default: a new emitter, see `App.events`. */
  readonly events?: DeviceEvents;
  /** Shorter device waits, for tests (src/sip/query-timeouts.ts). */
  readonly queryTimeouts?: Partial<QueryTimeouts>;
  /** Replaces the alarm / position / subscription-settings store (tests). */
  readonly reports?: ReportStore;
  /**
   * A full garbage collection (main.ts: V8's, memory/heap-release.ts `exposeCollector`): with it, the
   * heap is given back once a registration storm is over (memory/storm-release.ts); absent, V8 alone decides.
   */
  readonly collectGarbage?: CollectGarbage;
}

export interface RunningApp {
  readonly httpPort: number;
  /** Base URL of the control API as bound, e.g. http://127.0.0.1:18080. */
  readonly httpUrl: string;
  /** This node's internal base URL (the configured one, or derived from the bound port). */
  readonly internalBaseUrl: string;
  /** SIP port as bound (UDP and TCP); null when `deps.control` replaced the SIP side. */
  readonly sipPort: number | null;
}

export interface App {
  /** Opens stores, applies migrations, listens. Calling it again returns the same result. */
  start(): Promise<RunningApp>;
  /** Stops listening, flushes and closes stores. Idempotent; safe during or after a failed start. */
  close(): Promise<void>;
  /** Device events of this instance (src/events/device-events.ts): subscribe before or after start. */
  readonly events: DeviceEvents;
}

/** Non-secret settings and where they came from, for the start-up log line. */
function describe(config: Config): Record<string, unknown> {
  const { sip } = config;
  return {
    sipAddress: `${sip.host}:${sip.port}`,
    sipListen: `${sip.bindHost}:${sip.port}`,
    sipPortShared: sip.portSharing?.kind ?? 'no',
    serverId: sip.serverId,
    cascadeNode: sip.cascadeNode,
    forwarding: sip.nodeForwardSecret === null ? 'closed' : 'open',
    deviceAuth: sip.password === null ? 'none' : 'digest',
    keepalive: { intervalSec: sip.keepaliveIntervalSec, timeoutCount: sip.keepaliveTimeoutCount, offlineScanSec: sip.offlineScanPeriodSec },
    http: `${config.http.address}:${config.http.port}`,
    redis: config.redis?.mode ?? 'none',
    mysql: config.mysql === null ? 'none' : config.mysql.database,
    dataDir: config.mysql === null ? config.dataDir : null,
    configFile: config.configFile,
    sources: config.sources,
  };
}

export function createApp(config: Config, deps: AppDeps = {}): App {
  const clock = deps.clock ?? systemClock;
  const log = deps.logger ?? createLogger(config.log.level, config.sip.instanceId);
  const events = deps.events ?? createDeviceEvents(log);
  const utcOffsetMinutes = deps.utcOffsetMinutes ?? -new Date(clock.now()).getTimezoneOffset();
  const closers: (() => Promise<void>)[] = [];
  let started: Promise<RunningApp> | null = null;
  let closed: Promise<void> | null = null;
  let leaveCluster: (() => Promise<void>) | null = null;
  let phase: Readiness['phase'] = 'starting'; // /readyz

  // Without MySQL, devices, platforms and media nodes live in one SQLite file in the data directory,
  // opened at the first use (a test replacing the device store and the SIP side never opens it).
  let embedded: EmbeddedStore | null = null;
  const embeddedDb = (): EmbeddedDb => {
    if (embedded === null) {
      const store = openEmbeddedStore(config.dataDir);
      embedded = store;
      closers.push(async () => store.close()); // pushed first of its users: closed after them
      log.info({ file: store.file, applied: store.applied }, 'embedded store opened');
    }
    return embedded.db;
  };

  const openDevices = async (): Promise<DeviceRepository> => {
    if (deps.devices !== undefined) return deps.devices;
    if (config.mysql === null) {
      const repo = createSqliteDeviceRepository({
        db: embeddedDb(),
        clock,
        maxChannelsPerDevice: config.limits.deviceMaxChannels,
        onKeepaliveFlushError: (err, size) => log.warn({ err, size }, 'keepalive batch write failed, will retry'),
      });
      closers.push(() => repo.close());
      return repo;
    }
    const pool: Pool = createMysqlPool(config.mysql.url, mysqlPoolLimits(config.limits));
    closers.push(() => pool.end());
    devicePool = pool;
    const { applied } = await migrate(pool, SQL_DIR);
    if (applied.length > 0) log.info({ applied: applied.map((m) => m.version) }, 'schema migrations applied');
    const repo = createMysqlDeviceRepository({
      pool,
      clock,
      maxChannelsPerDevice: config.limits.deviceMaxChannels,
      onKeepaliveFlushError: (err, size) => log.warn({ err, size }, 'keepalive batch write failed, will retry'),
    });
    closers.push(() => repo.close());
    return repo;
  };

  // Cluster (MySQL): every instance reads what the owners wrote (V008); else this instance's memory.
  let devicePool: Pool | null = null;
  const openReports = async (): Promise<ReportStore> => deps.reports ?? (devicePool === null ? createMemoryReportStore() : createMysqlReportStore({ pool: devicePool }));

  const doStart = async (): Promise<RunningApp> => {
    if (config.auth.signingKeySource === 'dev-default') {
      log.warn(
        { key: 'vms.auth.signing-key', env: envNameOf('vms.auth.signing-key') },
        'NO SIGNING KEY CONFIGURED: operator tokens use the public development key; set one before exposing this instance',
      );
    }
    if (config.sip.portSharing !== null && (config.redis === null || config.mysql === null)) {
      // allowed (the SIP side works, each instance answering the devices the kernel gives it), but not one platform
      log.warn(
        { key: 'vms.gb28181.sip.reuse-port', sharing: config.sip.portSharing.kind, redis: config.redis !== null, mysql: config.mysql !== null },
        'the SIP port is shared with other instances without Redis and MySQL: each instance knows only the devices the kernel sends it, and the control API of one cannot reach the devices of another',
      );
    }
    log.info(describe(config), 'starting signaling instance');

    const devices = await openDevices();
    const startedAt = clock.now();
    // Ownership, owner routing, node table (SPEC §3-§5). The SIP side reports device traffic to
    // `cluster.recorder` (see cluster/ownership-recorder.ts).
    // Node-table reads also drive cascade leadership (CASC-1); the cascade opens once SIP is bound.
    let onNodeRead: ((read: NodeTableReadResult) => void) | null = null;
    const cluster = await openCluster({
      config,
      devices,
      clock,
      log,
      version: SERVICE_VERSION,
      startedAt,
      onNodeRead: (read) => onNodeRead?.(read),
    });
    closers.push(() => cluster.close());
    leaveCluster = () => cluster.leave();
    // Alarms, positions and subscription settings (GB/T 28181 §9.4, §9.11): bounded, on the owner.
    const reports = await openReports();
    closers.push(() => reports.close());
    const detachRecorder = attachReportRecorder(events, reports, log);
    closers.push(async () => detachRecorder());
    // The GB28181 device side (SPEC §8): SIP binds with the HTTP API; a test's `deps.control` replaces it.
    let side: DeviceSide | null = null;
    if (deps.control === undefined) {
      const opened = await startDeviceSide({
        sip: config.sip,
        devices,
        events,
        clock,
        log,
        utcOffsetMinutes,
        userAgent: `vms-signaling/${SERVICE_VERSION}`,
        snIndex: cluster.sns,
        limits: config.limits,
        reports,
        dataDir: config.dataDir,
        // the embedded store has no other writer; an injected repository may stand for a shared one
        storeShared: config.mysql !== null || deps.devices !== undefined,
        placement: createRegisterPlacement({ settings: config.placement, selfCode: config.sip.instanceId, shards: () => cluster.shards() }),
        ...(deps.queryTimeouts === undefined ? {} : { timeouts: deps.queryTimeouts }),
      });
      side = opened;
      closers.push(() => opened.close());
      // OWN-1..4. Standalone, routing never asks the recorder (ROUTE-8): keep it off the keepalive path.
      if (cluster.mode === 'cluster') {
        const detach = bridgeOwnership(events, cluster.recorder, (deviceId) => opened.forgetDevice(deviceId));
        closers.push(async () => detach());
      }
    }
    // Live view, playback, download (SPEC §8 media, §9): INVITEs go out of the device side's stack;
    // session ids are written to the cluster's session index so any instance routes them.
    // The routing engine (SPEC §10): the published table, reloaded without restart, drives node choices.
    // Without MySQL its tables live in the embedded store, opened here only when the SIP side is ours (as the
    // media and cascade stores are): a test that replaces the SIP side never opens the data directory.
    const routing = await openRouting({ config, redis: cluster.redis, clock, log, embedded: config.mysql === null && side !== null ? embeddedDb() : null });
    closers.push(() => routing.close());
    // Health probing of the table's destinations: SIP OPTIONS through the device side's stack, HTTP GET.
    routing.startHealth({ ...(side === null ? {} : { sip: sipOptionsProber(side.stack) }), http: httpGetProber() });
    let media: MediaWiring | undefined;
    if (side !== null) {
      const m = await openMedia({
        config,
        side,
        events,
        directory: cluster.sessions,
        cluster,
        clock,
        log,
        routing,
        embedded: config.mysql === null ? embeddedDb() : null,
        ...(cluster.mode === 'cluster' ? { ownedHere: (deviceId: string) => cluster.recorder.isLocallyOwned(deviceId) } : {}),
      });
      media = m;
      closers.push(() => m.close());
      // OWN-4 with SPEC §11: a device that moved to another live instance takes its streams with it
      if (cluster.mode === 'cluster') {
        const off = cluster.recorder.onMoved(({ deviceId, newOwner }) => void m.sessions.onDeviceMoved(deviceId, newOwner));
        closers.push(async () => off());
      }
      // SPEC §11: the holders whose sessions are orphaned are the nodes out of the online window
      const recovery = m.recovery;
      if (recovery !== null) onNodeRead = (read) => read.ok && recovery.setGoneHolders(read.rows.filter((r) => !r.online).map((r) => r.code));
    }
    // Cascade (SPEC §6): upstream platforms, leadership, the leader's upstream registrations. Opened
    // after the SIP side, so it closes first: registrations stop before the stack does.
    // Voice broadcast (GB/T 28181 §9.12): the device's audio INVITE is answered with the media node's side.
    // SPEC §11: its dialogs are journaled and recovered by the device's next owner (recovery/audio-continuity.ts).
    let broadcast: SipBroadcast | null = null;
    if (side !== null && media !== undefined) {
      const audio = openAudioContinuity({
        config,
        redis: cluster.redis,
        stack: side.stack,
        flows: side.flows,
        events,
        plane: media.plane,
        ...(cluster.mode === 'cluster' ? { ownedHere: (deviceId: string) => cluster.recorder.isLocallyOwned(deviceId) } : {}),
        inviteWaitMs: deps.queryTimeouts?.deviceInfoMs ?? DEFAULT_QUERY_TIMEOUTS.deviceInfoMs,
        clock,
        log,
      });
      closers.push(() => audio.close()); // after the broadcast's close (closers run in reverse)
      const sender = createZlmAudioSender(media.plane);
      const b = side.openBroadcast(sender, audio.journal);
      broadcast = b;
      closers.push(() => b.close());
      audio.start(b, sender);
      if (cluster.mode === 'cluster') {
        const off = cluster.recorder.onMoved(({ deviceId, newOwner }) => void b.onDeviceMoved(deviceId, newOwner));
        closers.push(async () => off());
      }
      const previous = onNodeRead;
      onNodeRead = (read) => {
        audio.onNodeRead(read);
        previous?.(read);
      };
    }
    let cascade: CascadeWiring | null = null;
    let controlApi: FastifyInstance | null = null; // the upstream's live view plays through it (CASC-6)
    if (side !== null && media !== undefined) {
      const c = await openCascade({
        config,
        sip: side.stack,
        flows: side.flows,
        events,
        clock,
        log,
        devices,
        version: SERVICE_VERSION,
        utcOffsetMinutes,
        media: media.plane,
        api: () => controlApi,
        queries: side.control,
        embedded: config.mysql === null ? embeddedDb() : null,
        routing,
        ...(broadcast === null ? {} : { deviceInvites: broadcast.onInvite }),
        redis: cluster.redis,
      });
      cascade = c;
      closers.push(() => c.close());
      const previous = onNodeRead;
      onNodeRead = (read) => {
        c.onNodeRead(read);
        previous?.(read);
      };
      side.interceptMessages(c.upstreamMessages);
    }
    // Prometheus metrics (docs/metrics.md): subscribers only; nothing on the hot paths changes.
    const metrics = createMetrics({
      instanceId: config.sip.instanceId,
      version: SERVICE_VERSION,
      events,
      devicesOnline: cluster.mode === 'cluster' ? () => cluster.recorder.localCount() : () => devices.countOnlineDevices(),
      isLeader: () => cluster.cascadeLeader() === config.sip.instanceId,
      media: () => media?.sessions.stats ?? null,
    });
    closers.push(async () => metrics.close());
    let boundPort = config.http.port;
    const internalBaseUrl = (): string =>
      config.sources['vms.gb28181.sip.internal-base-url'] === 'default' && config.http.port === 0
        ? config.sip.internalBaseUrl.replace(/:0$/, `:${boundPort}`)
        : config.sip.internalBaseUrl;

    const http: FastifyInstance = buildHttpApp({
      instanceId: config.sip.instanceId,
      signingKey: config.auth.signingKey,
      storage: config.mysql === null ? 'embedded' : 'mysql',
      devices,
      control: deps.control ?? side?.control ?? createUnavailableDeviceControl(),
      ...(side === null ? {} : { commands: side.commands }),
      ...(broadcast === null ? {} : { broadcast }),
      snapshotBodyLimit: config.limits.snapshotMaxBytes,
      nodes:
        deps.nodes ??
        cluster.nodes ??
        createStandaloneNodeDirectory({
          nodeCode: config.sip.instanceId,
          sipAddress: `${config.sip.host}:${config.sip.port}`,
          internalBaseUrl,
          cascadeNode: config.sip.cascadeNode,
          version: SERVICE_VERSION,
          startedAt,
          clock,
          devices,
        }),
      owners: deps.owners ?? cluster.owners ?? createSelfOwnerDirectory(config.sip.instanceId),
      readiness: () => ({ phase, redis: cluster.redis?.status ?? null }),
      metrics,
      clock,
      logger: log,
      utcOffsetMinutes,
      ownerRouting: deps.ownerRouting ?? cluster.ownerRouting,
      edgeRouting: deps.ownerRouting === undefined ? cluster.edgeRouting : null, // a replaced hook replaces the edge too
      isVerifiedForward: (request) => cluster.inbound(request) === 'forwarded',
      ...(media === undefined ? {} : { media }),
      ...(cascade === null ? {} : { platforms: cascade }),
      limits: httpLimits(config.limits),
      routing,
      reports,
      ...(side === null ? {} : { subscriptions: side.subscriptions }),
    });
    controlApi = http;
    // On close HTTP stops taking requests first; then waiting device queries are rejected (answered
    // 503) so they do not hold the close, and their keep-alive connections end with the answer.
    let draining = false;
    http.addHook('onSend', async (_request, reply) => {
      if (draining) void reply.header('connection', 'close');
    });
    const quiescing = side;
    closers.push(async () => {
      draining = true;
      const closing = http.close();
      await quiescing?.quiesce();
      await closing;
    });
    // Closed before HTTP (closers run in reverse): upstream live views leave their streams through it.
    const liveViews = cascade;
    if (liveViews !== null) closers.push(() => liveViews.closeLiveViews());
    await http.listen({ port: config.http.port, host: config.http.address });
    const address = http.server.address();
    boundPort = typeof address === 'object' && address !== null ? address.port : config.http.port;
    const host = config.http.address === '0.0.0.0' || config.http.address === '::' ? '127.0.0.1' : config.http.address;
    const running: RunningApp = {
      httpPort: boundPort,
      httpUrl: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`,
      internalBaseUrl: internalBaseUrl(),
      sipPort: side?.sipPort ?? null,
    };
    side?.scanner.start();
    if (deps.collectGarbage !== undefined && side !== null) {
      const heap = startHeapRelease({ events, clock, log, collect: deps.collectGarbage });
      closers.push(() => heap.close());
    }
    await cluster.startHeartbeat(internalBaseUrl); // NODE-1: own row upserted before we report started
    if (cluster.nodes === null) cascade?.observeStandalone(); // no node table: alone, so leader (CASC-5)
    if (closed === null) phase = 'ready';
    log.info(running, 'signaling instance started');
    return running;
  };

  return {
    events,
    start() {
      if (closed !== null) return Promise.reject(new ShuttingDownError());
      started ??= doStart();
      return started;
    },
    close() {
      phase = 'draining';
      closed ??= (async () => {
        await started?.catch(() => {}); // a failed start is reported by start(); close what it opened
        // First tell the cluster (node table): the others move on while this instance drains.
        await leaveCluster?.().catch((err: unknown) => log.warn({ err }, 'error while leaving the cluster'));
        // Reverse order of opening: HTTP first, then the stores it used.
        for (const close of closers.reverse()) {
          try {
            await close();
          } catch (err) {
            log.warn({ err }, 'error while closing');
          }
        }
        log.info('signaling instance stopped');
      })();
      return closed;
    },
  };
}
