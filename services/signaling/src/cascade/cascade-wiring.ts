// The cascade side of one instance (SPEC §6, FAIL-2): the upstream platform store, leadership from
// the node table (CASC-1) and the leader's upstream registrations (CASC-2).
//  - with MySQL: platforms in MySQL (deploy/sql/V004), leadership follows every node-table read
//    (`onNodeRead`, fed by the cluster's node heartbeat);
//  - standalone: platforms in memory, and `observeStandalone()` elects self once (CASC-5).
// Leadership changes are logged and counted. close(): registrations, then the platform store.
import { LeadershipTracker, createMysqlPool, type LeadershipEvent } from '@vms/cluster';
import { createMemoryPlatformRepository, createMysqlPlatformRepository, type PlatformRepository, type UpstreamSipClient } from '@vms/cascade';
import { createSnGenerator } from '@vms/gb28181';
import type { Logger } from 'pino';
import type { NodeTableReadResult } from '../cluster/node-tracker.ts';
import type { Config } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import { UpstreamRegistrations } from './upstream-registrations.ts';

export interface CascadeWiringDeps {
  readonly config: Config;
  /** The instance's SIP stack: REGISTER and MESSAGEs to upstreams leave from the instance's SIP address. */
  readonly sip: UpstreamSipClient;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface CascadeStats {
  /** Leadership transitions seen by this instance (became-leader, lost-leadership, leader-changed). */
  readonly leadershipChanges: number;
}

export interface CascadeWiring {
  readonly platforms: PlatformRepository;
  readonly leadership: LeadershipTracker;
  readonly registrations: UpstreamRegistrations;
  /** Feed of the node heartbeat: every node-table read (CASC-1; FAIL-4 on a failed read). */
  onNodeRead(read: NodeTableReadResult): void;
  /** No node table: this instance is alone and leads (CASC-1 last resort, CASC-5). */
  observeStandalone(): void;
  stats(): CascadeStats;
  /** Idempotent. */
  close(): Promise<void>;
}

export function openCascade(d: CascadeWiringDeps): CascadeWiring {
  const log = d.log.child({ component: 'cascade' });
  const closers: (() => Promise<void>)[] = [];
  let platforms: PlatformRepository;
  if (d.config.mysql !== null) {
    const pool = createMysqlPool(d.config.mysql.url, { connectionLimit: 2 });
    closers.push(() => pool.end());
    platforms = createMysqlPlatformRepository(pool); // schema applied by the device store's migration
  } else {
    platforms = createMemoryPlatformRepository();
  }
  const repo = platforms;
  closers.push(() => repo.close());

  const registrations = new UpstreamRegistrations({ platforms, sip: d.sip, clock: d.clock, sn: createSnGenerator(), log });
  let leadershipChanges = 0;
  let closed: Promise<void> | null = null;

  const onLeadership = (e: LeadershipEvent): void => {
    leadershipChanges++;
    log.info({ event: e.type, leader: e.leader, previous: e.previous }, 'cascade leadership changed');
    if (closed !== null) return;
    if (e.type === 'became-leader') void registrations.activate(); // FAIL-2: register at once
    else if (e.type === 'lost-leadership') registrations.deactivate();
  };
  const leadership = new LeadershipTracker({ selfId: d.config.sip.instanceId, clock: d.clock, onEvent: onLeadership });

  return {
    platforms,
    leadership,
    registrations,
    onNodeRead(read) {
      if (closed !== null) return;
      if (read.ok) leadership.observe(read.rows);
      else leadership.observeFailure(read.error);
    },
    observeStandalone() {
      if (closed === null) leadership.observe([]);
    },
    stats: () => ({ leadershipChanges }),
    close() {
      closed ??= (async () => {
        registrations.deactivate(); // SPEC §6: stop upstream traffic first, no unregister
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
