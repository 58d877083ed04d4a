// The shards as the edge sees them (issue 14): the signaling node table (MySQL, SPEC NODE-1), read every
// `pollMs`. "Online" is the database's judgement over the window, "draining" an operator's or a stop in
// progress: placement skips both, so a dead shard's devices are re-placed at their next message after
// its last heartbeat leaves the window. A failed read keeps the last good listing (FAIL-4). A group with no
// eligible shard at all is placed over its last eligible set (shard-fallback.ts): late heartbeats, not a
// dead group.
import type { NodeRegistry, NodeRow } from '@vms/cluster';
import { isEligibleShard, type Shard } from '@vms/routing';
import { applyShardFallback } from './shard-fallback.ts';

export interface ShardSource {
  /**
   * What placement picks among: the last good listing, with the last eligible set of each group that has
   * no eligible shard put back online (shard-fallback.ts). Empty before the first read.
   */
  current(): readonly Shard[];
  /** The last good listing as read (the node table's own judgement). */
  listed(): readonly Shard[];
  /** Groups currently placed over their last eligible set (none of their shards eligible in the table). */
  fallbackGroups(): number;
  /** Times a group started being placed over its last eligible set since start. */
  fallbacks(): number;
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

/** Logs each group entering or leaving the fallback; returns how many entered. */
function logFallbackChange(log: ShardLog, before: readonly string[], after: readonly string[], view: readonly Shard[]): number {
  let entered = 0;
  for (const group of after) {
    if (before.includes(group)) continue;
    entered++;
    const shards = view.filter((s) => s.group === group).length;
    log.warn({ group, shards }, 'no eligible shard in the node table for a placement group; placing over its last eligible set');
  }
  for (const group of before) if (!after.includes(group)) log.warn({ group }, 'placement group has eligible shards in the node table again; fallback over');
  return entered;
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
  let listed: readonly Shard[] = [];
  let shards: readonly Shard[] = [];
  let lastEligible: ReadonlyMap<string, readonly Shard[]> = new Map();
  let fallbackGroups: readonly string[] = [];
  let fallbacks = 0;
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
          listed = rows.map(shardOf);
          const view = applyShardFallback(listed, lastEligible);
          fallbacks += logFallbackChange(o.log, fallbackGroups, view.fallbackGroups, view.shards);
          ({ shards, lastEligible, fallbackGroups } = view);
          // on the view: a fallback keeps the set placement picks from, so it moves no device
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
    listed: () => listed,
    fallbackGroups: () => fallbackGroups.length,
    fallbacks: () => fallbacks,
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
  return { current: () => shards, listed: () => shards, fallbackGroups: () => 0, fallbacks: () => 0, refresh: async () => undefined, changes: () => 0, close: () => undefined };
}
