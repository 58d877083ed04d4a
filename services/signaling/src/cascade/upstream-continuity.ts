// Wiring of session continuity for the cascade (SPEC §11 for CASC-6): the journal of the upstream dialogs this
// instance accepts (Redis, key prefix vms:casc-rec:, same atomic snapshot + index + tombstone scripts as the
// device dialogs) and, while it leads, the recovery of those a crashed leader held (upstream-recovery.ts).
// Only with Redis and vms.recovery.enabled: a standalone instance has nobody to hand its dialogs to.
import type { RedisClient } from '@vms/cluster';
import type { SipStack } from '@vms/sip';
import { nanoid } from 'nanoid';
import type { Logger } from 'pino';
import type { NodeTableReadResult } from '../cluster/node-tracker.ts';
import type { Config } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import { snapshotTtlMs, ZLM_API_TIMEOUT_MS } from '../media/media-wiring.ts';
import { publishSessionRecovery } from '../metrics/channels.ts';
import { createSessionJournal, type SessionJournal } from '../recovery/session-journal.ts';
import { createRedisSnapshotStore } from '../recovery/session-snapshots.redis.ts';
import type { StreamProbe } from './live-view-watch.ts';
import type { LiveSource, RtpForwarder } from './upstream-live.port.ts';
import type { AdoptedView } from './upstream-live.ts';
import { createUpstreamRecovery, REINVITE_TIMEOUT_MS, type UpstreamRecovery } from './upstream-recovery.ts';
import { UPSTREAM_SNAPSHOT_CODEC, type UpstreamSnapshot } from './upstream-snapshot.ts';

export const UPSTREAM_SNAPSHOT_PREFIX = 'vms:casc-rec:';

export interface UpstreamContinuityDeps {
  readonly config: Config;
  readonly redis: RedisClient | null;
  readonly stack: Pick<SipStack, 'restoreDialog'>;
  readonly forwarder: RtpForwarder;
  readonly probe: StreamProbe;
  readonly source: Pick<LiveSource, 'stop'>;
  readonly isLeader: () => boolean;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface UpstreamContinuity {
  /** For UpstreamLiveViews: null when no continuity. */
  readonly journal: { readonly journal: SessionJournal<UpstreamSnapshot>; readonly clock: Clock } | null;
  /** Starts the recovery, which hands recovered views to `views`. */
  start(views: { adopt(a: AdoptedView): boolean }): void;
  onNodeRead(read: NodeTableReadResult): void;
  becameLeader(): void;
  /** Idempotent; the journal keeps its snapshots (to be recovered). */
  close(): Promise<void>;
}

export function openUpstreamContinuity(d: UpstreamContinuityDeps): UpstreamContinuity {
  const off: UpstreamContinuity = { journal: null, start: () => undefined, onNodeRead: () => undefined, becameLeader: () => undefined, close: async () => undefined };
  if (d.redis === null || !d.config.recovery.enabled) return off;
  const store = createRedisSnapshotStore(d.redis, UPSTREAM_SNAPSHOT_PREFIX, UPSTREAM_SNAPSHOT_CODEC);
  const self = d.config.sip.instanceId;
  const journal = createSessionJournal<UpstreamSnapshot>({ store, holder: self, run: nanoid(), ttlMs: snapshotTtlMs(d.config), clock: d.clock, log: d.log });
  let recovery: UpstreamRecovery | null = null;
  return {
    journal: { journal, clock: d.clock },
    start(views) {
      recovery ??= createUpstreamRecovery({
        store,
        self,
        run: journal.run,
        isLeader: d.isLeader,
        stack: d.stack,
        forwarder: d.forwarder,
        probe: d.probe,
        source: d.source,
        views,
        giveUpMs: Math.round(d.config.recovery.giveUpSec * 1000),
        scanPeriodMs: Math.round(d.config.sip.nodeHeartbeatIntervalSec * 1000),
        // one recovery: media node calls, the re-INVITE's bound, the BYE, with room to spare
        lockTtlMs: REINVITE_TIMEOUT_MS + 4 * ZLM_API_TIMEOUT_MS + 10_000,
        clock: d.clock,
        log: d.log,
        onOutcome: (o) => publishSessionRecovery({ outcome: o.outcome, reason: o.outcome === 'recovered' ? 'upstream' : `upstream: ${o.reason}` }),
      });
      recovery.start();
    },
    onNodeRead(read) {
      if (read.ok) recovery?.setGoneHolders(read.rows.filter((r) => !r.online).map((r) => r.code));
    },
    becameLeader() {
      recovery?.scanSoon();
    },
    async close() {
      await recovery?.close();
      await journal.close();
    },
  };
}
