// The routing engine on this instance (SPEC §10): its store (MySQL when configured, else memory), the
// reloader that keeps the published table in force (poll of routing_current every ROUTING_POLL_MS, and
// at once on the Redis nudge when Redis is configured), and the shadow table with its comparison report.
import { createMysqlPool, createRedisClient, type RedisClient } from '@vms/cluster';
import {
  compileTableSliced,
  createMemoryRoutingStore,
  createMysqlRoutingStore,
  publishRoutingNudge,
  RoutingReloader,
  ShadowComparator,
  subscribeRoutingNudges,
  type RoutingStore,
  type RoutingTable,
  type TableIssue,
} from '@vms/routing';
import type { Logger } from 'pino';
import type { Config } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';

/** Poll period of the version table (the write-up's 5–10 s; the nudge makes it a fallback). */
export const ROUTING_POLL_MS = 5000;
/** Zone of rule time windows: the platform's (GB/T 28181 deployments keep China Standard Time). */
export const ROUTING_TIME_ZONE = 'Asia/Shanghai';

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
  /** The instance clock's now (decisions explained by the API use it, like real ones). */
  now(): number;
  /** The published table, or undefined while nothing is published (callers keep their built-in choice). */
  published(): RoutingTable | undefined;
  /** Tells every instance to check the version table now (no-op without Redis). */
  nudge(version: number): Promise<void>;
  close(): Promise<void>;
}

export async function openRouting(d: { config: Config; redis: RedisClient | null; clock: Clock; log: Logger }): Promise<RoutingWiring> {
  const log = d.log.child({ component: 'routing' });
  const closers: (() => Promise<void>)[] = [];
  let store: RoutingStore;
  if (d.config.mysql !== null) {
    const pool = createMysqlPool(d.config.mysql.url, { connectionLimit: 2 });
    closers.push(() => pool.end());
    store = createMysqlRoutingStore(pool); // deploy/sql V007, migrated at start
  } else {
    store = createMemoryRoutingStore(d.clock);
  }
  const s = store;
  closers.push(() => s.close());
  const reloader = new RoutingReloader({
    store,
    clock: d.clock,
    timeZone: ROUTING_TIME_ZONE,
    defaults: { destinations: [], sets: [], rules: [] },
    pollMs: ROUTING_POLL_MS,
    log,
  });
  closers.push(async () => reloader.close());
  await reloader.start();

  let subscriber: RedisClient | null = null;
  if (d.config.redis !== null) {
    // a connection of its own: a subscribed connection takes no other command
    const sub = createRedisClient(d.config.redis.url, { connectionName: `vms-signaling:${d.config.sip.instanceId}:routing` });
    subscriber = sub;
    closers.push(async () => sub.disconnect());
    subscribeRoutingNudges(sub, () => reloader.nudge()).catch((err: unknown) =>
      log.warn({ err }, 'routing nudge subscription failed; new versions arrive by polling'),
    );
  }

  let shadowTable: RoutingTable | undefined;
  const comparator = new ShadowComparator();
  const shadow: ShadowState = {
    table: () => shadowTable,
    comparator,
    async start(version) {
      const data = await s.loadVersion(version);
      if (data === undefined) return { ok: false, issues: [{ path: 'version', message: `version ${version} does not exist` }] };
      const r = await compileTableSliced({ ...data, timeZone: ROUTING_TIME_ZONE });
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

  return {
    store,
    reloader,
    shadow,
    timeZone: ROUTING_TIME_ZONE,
    now: () => d.clock.now(),
    published: () => (reloader.table.version > 0 ? reloader.table : undefined),
    async nudge(version) {
      if (d.redis === null || subscriber === null) return;
      await publishRoutingNudge(d.redis, version).catch((err: unknown) => log.warn({ err, version }, 'routing nudge not sent; instances will poll'));
    },
    async close() {
      for (const c of closers.reverse()) await c().catch((err: unknown) => log.warn({ err }, 'error while closing routing'));
    },
  };
}
