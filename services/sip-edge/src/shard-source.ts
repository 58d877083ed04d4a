// The shards as the edge sees them (issue 14): the signaling node table (MySQL, SPEC NODE-1), read every
// `pollMs`. "Online" is the database's judgement over the window, "draining" an operator's or a stop in
// progress: placement skips both, so a dead shard's devices are re-placed at their next message after
// its last heartbeat leaves the window. A failed read keeps the last good listing (FAIL-4).
import type { NodeRegistry, NodeRow } from '@vms/cluster';
import { isEligibleShard, type Shard } from '@vms/routing';

export interface ShardSource {
  /** The last good listing (empty before the first read). */
  current(): readonly Shard[];
  /** Reads now; resolves after the read (errors are kept, not thrown). */
  refresh(): Promise<void>;
  /**
   * Times the set of shards placement may pick (online, not draining, per group) changed since start: each
   * change re-places the devices of the shards that left or the share a new one takes.
   */
  changes(): number;
  close(): void;
}

/** The eligible shards as one comparable string (group, code, address), in a stable order. */
export function eligibleSignature(shards: readonly Shard[]): string {
  return shards
    .filter(isEligibleShard)
    .map((s) => `${s.group}/${s.code}@${s.sipHost}:${s.sipPort}`)
    .sort()
    .join(',');
}

export interface ShardLog {
  warn(obj: object, msg: string): void;
}

export const shardOf = (r: NodeRow): Shard => ({
  code: r.code,
  sipHost: r.sipHost,
  sipPort: r.sipPort,
  group: r.placementGroup,
  online: r.online,
  draining: r.draining,
  // paced drain: the share released as of this read (the next read, one poll later, moves it on)
  drainedShare: r.drainedShare,
  // paced return after an undrain, the same way
  joinedShare: r.joinedShare,
  joinFrom: r.joinFrom,
});

export function createPolledShardSource(o: { registry: NodeRegistry; onlineWindowMs: number; pollMs: number; log: ShardLog }): ShardSource {
  let shards: readonly Shard[] = [];
  let signature = '';
  let changes = 0;
  let read0 = true;
  let failing = false;
  let closed = false;
  let inFlight: Promise<void> | null = null;
  const read = (): Promise<void> =>
    (inFlight ??= o.registry
      .listNodes(o.onlineWindowMs)
      .then(
        (rows) => {
          shards = rows.map(shardOf);
          const next = eligibleSignature(shards);
          if (next !== signature && !read0) changes++;
          signature = next;
          read0 = false;
          failing = false;
        },
        (err: unknown) => {
          if (!failing) o.log.warn({ err }, 'node table read failed; keeping the last listing');
          failing = true;
        },
      )
      .finally(() => {
        inFlight = null;
      }));
  const timer = setInterval(() => {
    if (!closed) void read();
  }, o.pollMs);
  timer.unref();
  return {
    current: () => shards,
    refresh: read,
    changes: () => changes,
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}

/** A fixed list (tests, or a deployment without a node table): every shard online, none draining. */
export function createStaticShardSource(shards: readonly Shard[]): ShardSource {
  return { current: () => shards, refresh: async () => undefined, changes: () => 0, close: () => undefined };
}
