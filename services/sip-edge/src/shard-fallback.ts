// What placement sees when a group's shards all miss the online window (issue 11 target 5, issue 14). An
// overloaded but live shard writes its heartbeat late (its event loop lags), and under a registration storm
// every shard of a group can lag past the window at once (fleet-kill at 20,000–25,000 devices: 5–10 s lag
// against a 15 s window, 83,735 devices answered 503 with every shard up). That every shard of a group died
// at once is far less likely than that the node table is late, so the edge keeps placing the group's devices
// over the last set that had eligible shards; a shard that really died is found as for one death among
// live ones: the forward gets no answer and its devices retransmit (and move once another shard beats).
// Pure: one call per node-table read, no I/O, no clock.
import { isEligibleShard, type Shard } from '@vms/routing';

export interface FallbackView {
  /** What placement picks among: the read, with each fallen-back group's last eligible set put back online. */
  readonly shards: readonly Shard[];
  /** Per group, its last set that had eligible shards (kept for the next read). */
  readonly lastEligible: ReadonlyMap<string, readonly Shard[]>;
  /** Groups placed over their last eligible set (none of their shards eligible in this read), sorted. */
  readonly fallbackGroups: readonly string[];
}

/**
 * A group with an eligible shard in `read` is taken as read (and remembered). A group with none — in the
 * read or only remembered (its rows gone) — is placed over its remembered set, except a remembered shard
 * the read shows draining: an operator's drain or a stop in progress (`leave`) is a live decision, never
 * undone here, so a group drained on purpose still ends in 503 as before.
 */
export function applyShardFallback(read: readonly Shard[], lastEligible: ReadonlyMap<string, readonly Shard[]>): FallbackView {
  const groups = new Map<string, Shard[]>();
  for (const s of read) {
    const g = groups.get(s.group);
    if (g === undefined) groups.set(s.group, [s]);
    else g.push(s);
  }
  const remembered = new Map<string, readonly Shard[]>();
  const revived: Shard[] = [];
  const fallbackGroups: string[] = [];
  for (const group of new Set([...groups.keys(), ...lastEligible.keys()])) {
    const members = groups.get(group) ?? [];
    const eligible = members.filter(isEligibleShard);
    if (eligible.length > 0) {
      remembered.set(group, eligible);
      continue;
    }
    const last = lastEligible.get(group);
    if (last === undefined) continue;
    remembered.set(group, last);
    const byCode = new Map(members.map((s) => [s.code, s]));
    const back = last.filter((s) => byCode.get(s.code)?.draining !== true);
    if (back.length === 0) continue;
    fallbackGroups.push(group);
    for (const s of back) revived.push({ ...s, online: true, draining: false });
  }
  if (revived.length === 0) return { shards: read, lastEligible: remembered, fallbackGroups };
  const revivedCodes = new Set(revived.map((s) => s.code));
  return {
    shards: [...read.filter((s) => !revivedCodes.has(s.code)), ...revived],
    lastEligible: remembered,
    fallbackGroups: fallbackGroups.sort(),
  };
}
