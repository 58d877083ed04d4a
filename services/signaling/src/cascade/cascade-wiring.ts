// The cascade side of one instance (SPEC §6, FAIL-2): the upstream platform store, leadership from
// the node table (CASC-1) and the leader's upstream registrations (CASC-2).
//  - with MySQL: platforms in MySQL (deploy/sql/V004), leadership follows every node-table read
//    (`onNodeRead`, fed by the cluster's node heartbeat);
//  - standalone: platforms in the embedded store (SQLite in the data directory), and `observeStandalone()` elects self once (CASC-5).
// Leadership changes are logged and counted. close(): registrations, then the platform store.
import {
  CASCADE_EVENT_VERSION,
  LeadershipTracker,
  createMemoryCascadeBus,
  createMysqlPool,
  createRedisCascadeBus,
  createRedisClient,
  receivedAction,
  routeCascadeAction,
  type CascadeBusProblem,
  type CascadeEvent,
  type CascadeEventBus,
  type CascadeEventData,
  type CascadeRouteContext,
  type LeadershipEvent,
} from '@vms/cluster';
import {
  createMemoryPlatformRepository,
  createMysqlPlatformRepository,
  type PlatformRepository,
  type UpstreamPlatform,
} from '@vms/cascade';
import { createSnGenerator } from '@vms/gb28181';
import type { ServerContext, SipRequest, SipStack } from '@vms/sip';
import type { RedisClient } from '@vms/cluster';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { NodeTableReadResult } from '../cluster/node-tracker.ts';
import type { Config } from '../config/config.types.ts';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { DeviceRepository } from '../devices/device-repository.port.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import type { DeviceFlows } from '../sip/device-flows.ts';
import { createDeviceMessenger } from '../sip/device-messenger.ts';
import { DEFAULT_QUERY_TIMEOUTS } from '../sip/query-timeouts.ts';
import type { MessageInterceptor } from '../sip/device-side.ts';
import type { MediaPlane } from '../media/media-plane.ts';
import { attachCascadeTriggers } from './cascade-triggers.ts';
import { createHttpLiveSource } from './live-source.http.ts';
import { createZlmRtpForwarder } from './rtp-forwarder.zlm.ts';
import type { PlatformAdmin } from './platform-admin.port.ts';
import type { SipDeviceControl } from '../sip/sip-device-control.ts';
import { createSqlitePlatformRepository } from './platform-repository.sqlite.ts';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';
import { createUpstreamControl } from './upstream-control.ts';
import { createUpstreamMessages } from './upstream-messages.ts';
import { UpstreamRegistrations } from './upstream-registrations.ts';
import { chooseUpstreams } from './upstream-choice.ts';
import { followUpstreamHealth, registrationOutcome } from './upstream-failover.ts';
import type { RoutingWiring } from '../routing/routing-wiring.ts';
import { UpstreamLiveViews } from './upstream-live.ts';
import { openUpstreamContinuity } from './upstream-continuity.ts';
import { UpstreamSubscriptions } from './upstream-subscriptions.ts';
import { mysqlPoolLimits } from '../config/limits.ts';

/** How often the platform list is re-read (edits made through another instance's API), ms. */
export const PLATFORM_RESYNC_MS = 30_000;

export interface CascadeWiringDeps {
  readonly config: Config;
  /** The instance's SIP stack: REGISTER and MESSAGEs to upstreams leave from the instance's SIP address. */
  readonly sip: SipStack;
  readonly events: DeviceEvents;
  /** The devices registered here: this instance owns exactly these (OWN-4 drops moved ones). */
  readonly flows: DeviceFlows;
  readonly clock: Clock;
  readonly log: Logger;
  readonly devices: DeviceRepository;
  readonly version: string;
  readonly utcOffsetMinutes: number;
  /** The media nodes: where an upstream's live view is sent from (CASC-6). */
  readonly media: Pick<MediaPlane, 'node' | 'client' | 'callResult'>;
  /** This instance's control API once built (the upstream's live view takes the play path through it). */
  readonly api: () => Pick<FastifyInstance, 'inject'> | null;
  /** The device side's queries: an upstream's query for a device registered here is relayed through them. */
  readonly queries: Pick<SipDeviceControl, 'relayQuery'>;
  /** Without MySQL: the embedded store platforms are kept in; null with MySQL (or in memory for tests). */
  readonly embedded?: EmbeddedDb | null;
  /** The routing engine: which upstream of a redundancy group to register with (upstream-choice.ts). */
  readonly routing?: (Pick<RoutingWiring, 'published' | 'state' | 'now'> & Partial<Pick<RoutingWiring, 'health'>>) | undefined;
  /** INVITEs from devices (voice broadcast, sip/sip-broadcast.ts), tried first: true = taken. */
  readonly deviceInvites?: (req: SipRequest, ctx: ServerContext) => boolean;
  /** Cluster: the upstream dialogs' snapshots (SPEC §11), recovered by the next leader after a crash. */
  readonly redis?: RedisClient | null;
}

export interface CascadeStats {
  /** Leadership transitions seen by this instance (became-leader, lost-leadership, leader-changed). */
  readonly leadershipChanges: number;
  /** Cascade actions handed to the bus by this instance. */
  readonly published: number;
  /** Cascade actions executed here (local triggers and received events). */
  readonly executed: number;
  /** Upstream live views being served (CASC-6). */
  readonly upstreamLiveViews: number;
}

export interface CascadeWiring extends PlatformAdmin {
  readonly platforms: PlatformRepository;
  readonly leadership: LeadershipTracker;
  readonly registrations: UpstreamRegistrations;
  /** For DeviceSide.interceptMessages: MESSAGEs from known upstream platforms. */
  readonly upstreamMessages: MessageInterceptor;
  /** A platform was created, edited or deleted here: refresh the known set, restart its registration. */
  platformChanged(serverId: string): Promise<void>;
  /** Feed of the node heartbeat: every node-table read (CASC-1; FAIL-4 on a failed read). */
  onNodeRead(read: NodeTableReadResult): void;
  /** No node table: this instance is alone and leads (CASC-1 last resort, CASC-5). */
  observeStandalone(): void;
  stats(): CascadeStats;
  /** BYE the upstream live views and leave their streams: call while the control API still answers. */
  closeLiveViews(): Promise<void>;
  /** Idempotent. */
  close(): Promise<void>;
}

export async function openCascade(d: CascadeWiringDeps): Promise<CascadeWiring> {
  const log = d.log.child({ component: 'cascade' });
  const closers: (() => Promise<void>)[] = [];
  let platforms: PlatformRepository;
  if (d.config.mysql !== null) {
    const pool = createMysqlPool(d.config.mysql.url, { connectionLimit: 2, ...mysqlPoolLimits(d.config.limits) });
    closers.push(() => pool.end());
    platforms = createMysqlPlatformRepository(pool); // schema applied by the device store's migration
  } else if (d.embedded !== undefined && d.embedded !== null) {
    platforms = createSqlitePlatformRepository(d.embedded);
  } else {
    platforms = createMemoryPlatformRepository();
  }
  const repo = platforms;
  closers.push(() => repo.close());

  const sn = createSnGenerator();
  const routing = d.routing;
  const registrations = new UpstreamRegistrations({
    platforms,
    sip: d.sip,
    clock: d.clock,
    sn,
    log,
    // redundancy groups of the routing table: one registration per group (upstream-choice.ts)
    choose: routing === undefined ? undefined : (enabled) => chooseUpstreams(enabled, routing.published(), routing.state, routing.now()),
    // REGISTER outcomes count against the platform's shared health (upstream-failover.ts)
    onEvent: (serverId, e) => {
      const ok = registrationOutcome(e);
      if (ok !== undefined && routing?.health !== undefined) {
        routing.health.reportBusiness(serverId, ok).catch((err: unknown) => log.debug({ err, platformId: serverId }, 'upstream outcome not counted in routing health'));
      }
    },
  });
  let leadershipChanges = 0;
  let published = 0;
  let executed = 0;
  let closed: Promise<void> | null = null;

  // Upstream platforms by server id: how an upstream's MESSAGE is told from a device's (From user).
  let known = new Map<string, UpstreamPlatform>();
  const refreshKnown = async (): Promise<void> => {
    try {
      known = new Map((await repo.listAll()).map((p) => [p.serverId, p]));
    } catch (err) {
      log.warn({ err }, 'upstream platforms unreadable: keeping the last known list');
    }
  };
  await refreshKnown();
  const subscriptions = new UpstreamSubscriptions({ known: () => known, platforms, clock: d.clock, sn, log });
  d.sip.onRequest('SUBSCRIBE', subscriptions.onSubscribe);

  // Cascade event bus (CASC-3): Redis pub/sub in a cluster, in-process alone (CASC-5: never used then).
  const instanceId = d.config.sip.instanceId;
  const onProblem = (p: CascadeBusProblem): void => {
    if (p.kind === 'publish-failed') log.warn({ err: p.error, kind: p.event.kind, eventId: p.event.id }, 'cascade event dropped: publish failed');
    else if (p.kind === 'malformed') log.warn({ reason: p.reason, detail: p.detail, bytes: p.bytes }, 'malformed cascade event dropped');
    else if (p.kind === 'handler-failed') log.warn({ err: p.error, kind: p.event.kind, eventId: p.event.id }, 'cascade event handling failed');
    else log.warn({ err: p.error }, 'cascade bus subscriber down, reconnecting');
  };
  let bus: CascadeEventBus;
  if (d.config.redis !== null) {
    let failing = false;
    const client = createRedisClient(d.config.redis.url, {
      connectionName: `vms-cascade:${instanceId}`,
      onConnectionError: (err) => {
        if (failing) return;
        failing = true;
        log.warn({ err }, 'cascade redis connection lost, reconnecting in the background');
      },
    });
    client.on('ready', () => {
      failing = false;
    });
    closers.push(async () => {
      await client.quit().catch(() => client.disconnect());
    });
    bus = createRedisCascadeBus(client, { instanceId, clock: d.clock, onProblem });
  } else {
    bus = createMemoryCascadeBus({ instanceId, clock: d.clock, onProblem });
  }
  const openBus = bus;
  closers.push(() => openBus.close());

  // owner: this instance when the device is registered here; otherwise unknown, so a trigger publishes
  const routeContext = (): CascadeRouteContext => ({
    selfId: instanceId,
    leaderId: leadership.leader,
    ownerOf: (deviceId) => (d.flows.get(deviceId) !== undefined ? instanceId : null),
  });
  const control = createUpstreamControl({
    flows: d.flows,
    messenger: createDeviceMessenger({ stack: d.sip, sip: d.config.sip, clock: d.clock, requestMs: DEFAULT_QUERY_TIMEOUTS.requestMs }),
    queries: d.queries,
    answer: (payload) => route({ kind: 'response.upstream', payload }),
    devices: d.devices,
    routeTrigger: (targetDeviceId) => routeCascadeAction({ stage: 'trigger', kind: 'control.upstream', targetDeviceId }, routeContext()),
    publish: (data) => {
      if (closed !== null) return;
      published++;
      void bus.publish(data);
    },
    log,
  });
  const execute = async (e: CascadeEvent): Promise<void> => {
    executed++;
    if (e.kind === 'control.upstream') await control.execute(e.payload);
    else if (e.kind === 'response.upstream') await messages.relayResponse(e.payload);
    else await subscriptions.execute(e);
  };
  // CASC-3: at the trigger, run here when this instance is the right one, else publish by value
  const route = (data: CascadeEventData): void => {
    if (closed !== null || data.kind === 'control.upstream') return;
    if (routeCascadeAction({ stage: 'trigger', kind: data.kind }, routeContext()) === 'local') {
      const e = { ...data, v: CASCADE_EVENT_VERSION, id: 'local', origin: instanceId, at: d.clock.now() } as CascadeEvent;
      execute(e).catch((err: unknown) => log.warn({ err, kind: data.kind }, 'cascade action failed'));
    } else {
      published++;
      void bus.publish(data); // never rejects; a failure is reported through onProblem (CASC-4)
    }
  };
  // every instance receives every event and decides now, from current leadership/ownership
  const unsubscribeBus = bus.subscribe((e) => (routeCascadeAction(receivedAction(e), routeContext()) === 'local' ? execute(e) : undefined));
  const detachTriggers = attachCascadeTriggers({ events: d.events, devices: d.devices, platforms, route, log });

  // Platform edits made on another instance reach this one within PLATFORM_RESYNC_MS.
  let resyncTimer: TimerHandle | undefined;
  const resync = (): void => {
    resyncTimer = d.clock.setTimeout(() => {
      void (async () => {
        await refreshKnown();
        await registrations.reconcile().catch((err: unknown) => log.warn({ err }, 'upstream platforms unreadable: registrations unchanged'));
        if (closed === null) resync();
      })();
    }, PLATFORM_RESYNC_MS);
  };
  resync();
  // A health change of an upstream platform makes the choice per redundancy group again at once, not at
  // the next resync: the chosen one going inactive fails over, its return fails back (upstream-failover.ts)
  const stopFollowing =
    routing?.health === undefined
      ? () => undefined
      : followUpstreamHealth({ onChange: (l) => routing.health!.onChange(l), isPlatform: (id) => known.has(id), reconcile: () => registrations.reconcile(), log });
  const messages = createUpstreamMessages({
    known: () => known,
    platforms,
    devices: d.devices,
    sip: d.sip,
    clock: d.clock,
    log,
    version: d.version,
    utcOffsetMinutes: d.utcOffsetMinutes,
    forDevice: (p, targetId, req) => {
      control.forDevice(p, targetId, req).catch((err: unknown) => log.warn({ err, platformId: p.serverId, targetId }, 'upstream control failed'));
    },
  });

  const onLeadership = (e: LeadershipEvent): void => {
    leadershipChanges++;
    log.info({ event: e.type, leader: e.leader, previous: e.previous }, 'cascade leadership changed');
    if (closed !== null) return;
    if (e.type === 'became-leader') {
      void registrations.activate(); // FAIL-2: register at once
      void refreshKnown();
      continuity.becameLeader(); // SPEC §11: the upstream views the previous leader held
    } else if (e.type === 'lost-leadership') {
      registrations.deactivate();
      messages.abortAll();
      subscriptions.clear();
    }
  };
  const leadership = new LeadershipTracker({ selfId: d.config.sip.instanceId, clock: d.clock, onEvent: onLeadership });

  // CASC-6: the upstream's INVITEs for shared channels, served by the leader through the play path.
  const forwarder = createZlmRtpForwarder({ plane: d.media, clock: d.clock });
  const source = createHttpLiveSource({ api: d.api, signingKey: d.config.auth.signingKey, clock: d.clock });
  const isLeader = (): boolean => leadership.leader === instanceId;
  const continuity = openUpstreamContinuity({ config: d.config, redis: d.redis ?? null, stack: d.sip, forwarder, probe: forwarder.probe, source, isLeader, clock: d.clock, log });
  const live = new UpstreamLiveViews({
    known: () => known,
    platforms,
    devices: d.devices,
    isLeader,
    source,
    forwarder,
    watch: { probe: forwarder.probe, clock: d.clock },
    journal: continuity.journal,
    log,
  });
  continuity.start(live);
  d.sip.onRequest('INVITE', (req, ctx) => (d.deviceInvites?.(req, ctx) === true ? undefined : live.onInvite(req, ctx)));

  return {
    platforms,
    localId: d.config.sip.serverId,
    leadership,
    registrations,
    upstreamMessages: (req, ctx) => messages.intercept(req, ctx),
    async platformChanged(serverId) {
      await refreshKnown();
      await registrations.platformChanged(serverId);
    },
    onNodeRead(read) {
      if (closed !== null) return;
      if (read.ok) leadership.observe(read.rows);
      else leadership.observeFailure(read.error);
      continuity.onNodeRead(read);
    },
    observeStandalone() {
      if (closed === null) leadership.observe([]);
    },
    stats: () => ({ leadershipChanges, published, executed, upstreamLiveViews: live.size }),
    closeLiveViews: () => live.close(),
    close() {
      closed ??= (async () => {
        if (resyncTimer !== undefined) d.clock.clearTimeout(resyncTimer);
        stopFollowing();
        await continuity.close(); // no recovery while closing
        await live.close(); // normally done already (closeLiveViews), while the control API answered
        registrations.deactivate(); // SPEC §6: stop upstream traffic first, no unregister
        messages.abortAll();
        subscriptions.clear();
        detachTriggers();
        unsubscribeBus();
        for (const close of closers.reverse()) {
          try {
            await close();
          } catch (err) {
            log.warn({ err }, 'error while closing cascade resources');
          }
        }
      })();
      return closed;
    },
  };
}
