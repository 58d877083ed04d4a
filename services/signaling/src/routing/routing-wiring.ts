// The routing engine on this instance (SPEC §10): its store (MySQL when configured, else the embedded SQLite
// store of vms.data-dir, else memory), the reloader that keeps the published table in force (poll of
// routing_current every vms.routing.poll-interval, and at once on the Redis nudge when Redis is configured),
// the shadow table with its comparison report, and the health of the table's destinations.
import { createMysqlPool, subscriberConnection, type RedisClient } from '@vms/cluster';
import {
  createMemoryHealthStore,
  createWorkerTableBuilder,
  keepBuildThreadWarm,
  mysqlVersionSource,
  createMemoryRoutingStore,
  createRedisHealthStore,
  createMysqlRoutingStore,
  publishRoutingNudge,
  publishRoutingPrepare,
  RoutingHealthMonitor,
  RoutingReloader,
  ShadowComparator,
  subscribeHealthChanges,
  subscribeRoutingNudges,
  type DestinationState,
  type HealthStore,
  type Prober,
  type RoutingStore,
  type RoutingTable,
  type TableIssue,
  type WorkerBuildOptions,
  type WorkerTableBuilder,
} from '@vms/routing';
import type { Logger } from 'pino';
import type { Config } from '../config/config.types.ts';
import type { EmbeddedDb } from '../storage/embedded-store.sqlite.ts';
import { createSqliteRoutingStore } from './routing-store.sqlite.ts';
import type { Clock } from '../core/clock.ts';

export interface ShadowState {
  /** The table deciding beside the live one, if shadow mode is on. */
  table(): RoutingTable | undefined;
  readonly comparator: ShadowComparator;
  /** Loads a published version as the shadow table; its issues when it does not compile. */
  start(version: number): Promise<{ ok: true } | { ok: false; issues: readonly TableIssue[] }>;
  stop(): void;
}

export interface RoutingWiring {
  readonly store: RoutingStore;
  readonly reloader: RoutingReloader;
  readonly shadow: ShadowState;
  readonly timeZone: string;
  /** The published table's builder: its build thread (started and warmed up at start unless vms.routing.build-thread-idle is set). */
  readonly builder: Pick<WorkerTableBuilder, 'threads' | 'running' | 'last' | 'lastWarm' | 'deaths' | 'warm' | 'keptWarm'>;
  /** The instance clock's now (decisions explained by the API use it, like real ones). */
  now(): number;
  /** The published table, or undefined while nothing is published (callers keep their built-in choice). */
  published(): RoutingTable | undefined;
  /** Health of the table's destinations (shared through Redis when configured); probing starts with startHealth. */
  readonly health: RoutingHealthMonitor;
  /**
   * Destinations known elsewhere than in the table (the media nodes): an operator may override their health
   * too. Returns the unregister.
   */
  addKnownDestinations(known: (id: string) => boolean): () => void;
  /** A destination of the table in force, or one known through addKnownDestinations. */
  isKnownDestination(id: string): boolean;
  /** What decisions read: the destination's state (active until probed or reported otherwise). */
  state(destinationId: string): DestinationState;
  /** Starts probing with these probers (the SIP side's OPTIONS needs its stack, so it comes later). */
  startHealth(probers: Partial<Record<'sip' | 'http', Prober>>): void;
  /** Tells every instance to check the version table now (no-op without Redis). */
  nudge(version: number): Promise<void>;
  /**
   * A version of `ruleCount` rules has validated and is being written (called before its commit): when it is
   * large enough to keep a build thread for (keepBuildThreadWarm), this instance's build thread is started and
   * warmed up now, and every other instance is told to do the same (Redis), so the build that follows the
   * commit pays no thread start. Never rejects; returns at once.
   */
  prepareBuild(ruleCount: number): void;
  close(): Promise<void>;
}

export async function openRouting(d: { config: Config; redis: RedisClient | null; clock: Clock; log: Logger; embedded?: EmbeddedDb | null }): Promise<RoutingWiring> {
  const log = d.log.child({ component: 'routing' });
  const closers: (() => Promise<void>)[] = [];
  // vms.routing.*: zone of rule time windows (the platform's), poll and probe periods
  const { timeZone, pollIntervalMs, probeIntervalMs, probeTimeoutMs, buildThreadIdleMs } = d.config.routing;
  let store: RoutingStore;
  let source: WorkerBuildOptions['source'];
  if (d.config.mysql !== null) {
    const pool = createMysqlPool(d.config.mysql.url, { connectionLimit: 2 });
    closers.push(() => pool.end());
    store = createMysqlRoutingStore(pool); // deploy/sql V007, migrated at start
    // the build thread reads the version through a connection of its own: no row touches this thread
    source = mysqlVersionSource(d.config.mysql.url);
  } else if (d.embedded !== undefined && d.embedded !== null) {
    store = createSqliteRoutingStore(d.embedded, d.clock); // the embedded store's schema version 3
  } else {
    store = createMemoryRoutingStore(d.clock);
  }
  const s = store;
  closers.push(() => s.close());
  // Every store's versions are built on a worker thread (one build path): a million rules cost this event
  // loop a few milliseconds of wrapping instead of seconds of slices (docs/routing.md). The embedded SQLite
  // store (opened EXCLUSIVE: one connection) and the memory store are read here, page by page, and the
  // pages posted to the thread. The shadow table has a builder of its own: a build supersedes the one
  // running on the same builder, and a shadow start must not cancel a reload.
  const builderOptions = source !== undefined ? { source } : { reader: s };
  // The published table's build thread (vms.routing.build-thread-idle unset): kept for the process's
  // lifetime once the table served has KEEP_WARM_RULES rules or more, so every later reload of a large table
  // builds on a warm thread (a new thread's start and cold code cost ~1 s of a 1,000,000-rule build), and
  // replaced if it dies; with a smaller table it is ended after 5 idle minutes, so an instance with a few
  // rules does not hold the idle thread's 30–50 MB (docs/routing.md). Set: always ended after that idle time.
  const builder = createWorkerTableBuilder({ ...builderOptions, clock: d.clock, log, ...(buildThreadIdleMs === null ? {} : { idleMs: buildThreadIdleMs }) });
  const shadowBuilder = createWorkerTableBuilder({ ...builderOptions, idleMs: 60_000, clock: d.clock, log });
  closers.push(() => builder.close());
  closers.push(() => shadowBuilder.close());
  const keepThreadFor = (table: RoutingTable): void => {
    if (buildThreadIdleMs === null) builder.setKeepWarm(keepBuildThreadWarm(table.ruleCount));
  };
  const reloader = new RoutingReloader({
    store,
    clock: d.clock,
    timeZone,
    defaults: { destinations: [], sets: [], rules: [] },
    pollMs: pollIntervalMs,
    log,
    build: (version, zone) => builder.build(version, zone),
    onSwap: keepThreadFor,
  });
  closers.push(async () => reloader.close());
  await reloader.start();

  const healthStore: HealthStore = d.redis !== null ? createRedisHealthStore(d.redis) : createMemoryHealthStore();
  const probers: Partial<Record<'sip' | 'http', Prober>> = {};
  const health = new RoutingHealthMonitor({
    store: healthStore,
    clock: d.clock,
    probers,
    destinations: () => reloader.table.destinations(),
    intervalMs: probeIntervalMs,
    timeoutMs: probeTimeoutMs,
    log,
  });
  closers.push(async () => health.close());

  // a large version is on its way (published here, or the hint from the instance publishing it)
  const warmFor = (ruleCount: number): void => {
    if (keepBuildThreadWarm(ruleCount)) void builder.warm();
  };

  let subscriber: RedisClient | null = null;
  if (d.redis !== null) {
    // a connection of its own: a subscribed connection takes no other command. With an offline queue and
    // resubscription (subscriberConnection): the command client's settings refuse a SUBSCRIBE sent before
    // the connection is up, which silently left every instance without the nudge and the health channel.
    const sub = subscriberConnection(d.redis, `vms-signaling:${d.config.sip.instanceId}:routing`);
    subscriber = sub;
    closers.push(async () => sub.disconnect());
    subscribeRoutingNudges(sub, () => reloader.nudge(), warmFor).catch((err: unknown) =>
      log.warn({ err }, 'routing nudge subscription failed; new versions arrive by polling'),
    );
    // another instance changed a destination's health: re-read now (else at the next round)
    subscribeHealthChanges(sub, () => void health.refresh()).catch((err: unknown) =>
      log.warn({ err }, 'routing health subscription failed; states are re-read every probe round'),
    );
  }

  let shadowTable: RoutingTable | undefined;
  const comparator = new ShadowComparator();
  const shadow: ShadowState = {
    table: () => shadowTable,
    comparator,
    async start(version) {
      const r = await shadowBuilder.build(version, timeZone);
      if (r === undefined) return { ok: false, issues: [{ path: 'version', message: `version ${version} does not exist` }] };
      if (!r.ok) return { ok: false, issues: r.issues };
      shadowTable = r.table;
      comparator.reset();
      log.info({ version }, 'routing shadow table on');
      return { ok: true };
    },
    stop() {
      shadowTable = undefined;
      log.info({}, 'routing shadow table off');
    },
  };

  const known = new Set<(id: string) => boolean>();
  return {
    store,
    reloader,
    shadow,
    addKnownDestinations(k) {
      known.add(k);
      return () => known.delete(k);
    },
    isKnownDestination(id) {
      if (reloader.table.destination(id) !== undefined) return true;
      for (const k of known) if (k(id)) return true;
      return false;
    },
    timeZone,
    builder,
    now: () => d.clock.now(),
    published: () => (reloader.table.version > 0 ? reloader.table : undefined),
    health,
    state: health.state,
    startHealth(given) {
      Object.assign(probers, given);
      // not awaited: a first round waits up to a probe timeout, start-up does not
      health.start().catch((err: unknown) => log.warn({ err }, 'routing health probing did not start'));
    },
    async nudge(version) {
      if (d.redis === null || subscriber === null) return;
      await publishRoutingNudge(d.redis, version).catch((err: unknown) => log.warn({ err, version }, 'routing nudge not sent; instances will poll'));
    },
    prepareBuild(ruleCount) {
      if (!keepBuildThreadWarm(ruleCount)) return;
      warmFor(ruleCount);
      if (d.redis === null || subscriber === null) return;
      publishRoutingPrepare(d.redis, ruleCount).catch((err: unknown) => log.warn({ err, ruleCount }, 'routing prepare hint not sent; instances build on a cold thread'));
    },
    async close() {
      for (const c of closers.reverse()) await c().catch((err: unknown) => log.warn({ err }, 'error while closing routing'));
    },
  };
}
