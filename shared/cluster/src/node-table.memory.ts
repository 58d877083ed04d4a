/** Embedded NodeRegistry for standalone mode and unit tests; "now" is the injected clock. */
import { systemClock, type Clock } from './clock.ts';
import { compareCodes } from './election.ts';
import { StoreClosedError } from './errors.ts';
import { MAX_DRAIN_PERIOD_MS, type NodeInfo, type NodeRegistry, type NodeRow } from './node-table.port.ts';

export interface MemoryNodeRegistryOptions {
  clock?: Clock;
}

export function createMemoryNodeRegistry(opts: MemoryNodeRegistryOptions = {}): NodeRegistry {
  const clock = opts.clock ?? systemClock;
  const rows = new Map<string, { info: NodeInfo; lastHeartbeat: number; onlineDeviceCount: number; left: boolean; draining: boolean; drainStart: number; drainPeriodMs: number; joinStart: number; joinPeriodMs: number; joinFrom: number }>();
  let closed = false;
  const open = (): void => {
    if (closed) throw new StoreClosedError('node registry is closed');
  };
  const drainedShare = (r: { left: boolean; drainStart: number; drainPeriodMs: number }): number =>
    r.left || r.drainPeriodMs === 0 ? 1 : Math.min(1, Math.max(0, (clock.now() - r.drainStart) / r.drainPeriodMs));
  const view = (code: string, windowMs: number): NodeRow | null => {
    const r = rows.get(code);
    if (r === undefined) return null;
    const online = !r.left && r.lastHeartbeat >= clock.now() - windowMs;
    return {
      ...r.info,
      lastHeartbeat: new Date(r.lastHeartbeat),
      onlineDeviceCount: r.onlineDeviceCount,
      online,
      draining: r.draining || r.left,
      drainedShare: r.draining || r.left ? drainedShare(r) : 0,
      joinedShare: r.draining || r.joinPeriodMs === 0 ? 1 : Math.min(1, Math.max(0, (clock.now() - r.joinStart) / r.joinPeriodMs)),
      joinFrom: r.draining ? 1 : r.joinFrom,
      placementGroup: r.info.placementGroup ?? 'default',
      offlineInMs: online ? r.lastHeartbeat + windowMs - clock.now() : 0,
    };
  };
  return {
    async heartbeat(self, onlineDeviceCount) {
      open();
      const was = rows.get(self.code);
      rows.set(self.code, { info: { ...self }, lastHeartbeat: clock.now(), onlineDeviceCount, left: false, draining: was?.draining ?? false, drainStart: was?.drainStart ?? 0, drainPeriodMs: was?.drainPeriodMs ?? 0, joinStart: was?.joinStart ?? 0, joinPeriodMs: was?.joinPeriodMs ?? 0, joinFrom: was?.joinFrom ?? 1 });
    },
    async listNodes(onlineWindowMs) {
      open();
      return [...rows.keys()].sort(compareCodes).map((code) => view(code, onlineWindowMs) as NodeRow);
    },
    async getNode(code, onlineWindowMs) {
      open();
      return view(code, onlineWindowMs);
    },
    async leave(code) {
      open();
      const r = rows.get(code);
      if (r !== undefined) r.left = true;
    },
    async setDraining(code, draining, periodMs = 0) {
      open();
      if (!Number.isInteger(periodMs) || periodMs < 0 || periodMs > MAX_DRAIN_PERIOD_MS) throw new RangeError(`drain period must be 0..${MAX_DRAIN_PERIOD_MS} ms, got ${periodMs}`);
      const r = rows.get(code);
      if (r === undefined) return false;
      if (draining) {
        if (!r.draining) r.drainStart = clock.now();
        r.drainPeriodMs = periodMs;
        r.joinPeriodMs = 0;
        r.joinFrom = 1;
      } else if (r.draining) {
        // paced return from where the drain had got (see the MySQL adapter)
        r.joinFrom = drainedShare({ left: false, drainStart: r.drainStart, drainPeriodMs: r.drainPeriodMs });
        r.joinStart = clock.now();
        r.joinPeriodMs = periodMs;
        r.drainPeriodMs = 0;
      }
      r.draining = draining;
      return true;
    },
    async close() {
      closed = true;
    },
  } satisfies NodeRegistry;
}
