/** Embedded NodeRegistry for standalone mode and unit tests; "now" is the injected clock. */
import { systemClock, type Clock } from './clock.ts';
import { compareCodes } from './election.ts';
import { StoreClosedError } from './errors.ts';
import type { NodeInfo, NodeRegistry, NodeRow } from './node-table.port.ts';

export interface MemoryNodeRegistryOptions {
  clock?: Clock;
}

export function createMemoryNodeRegistry(opts: MemoryNodeRegistryOptions = {}): NodeRegistry {
  const clock = opts.clock ?? systemClock;
  const rows = new Map<string, { info: NodeInfo; lastHeartbeat: number; onlineDeviceCount: number; left: boolean; draining: boolean }>();
  let closed = false;
  const open = (): void => {
    if (closed) throw new StoreClosedError('node registry is closed');
  };
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
      placementGroup: r.info.placementGroup ?? 'default',
      offlineInMs: online ? r.lastHeartbeat + windowMs - clock.now() : 0,
    };
  };
  return {
    async heartbeat(self, onlineDeviceCount) {
      open();
      rows.set(self.code, { info: { ...self }, lastHeartbeat: clock.now(), onlineDeviceCount, left: false, draining: rows.get(self.code)?.draining ?? false });
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
    async setDraining(code, draining) {
      open();
      const r = rows.get(code);
      if (r === undefined) return false;
      r.draining = draining;
      return true;
    },
    async close() {
      closed = true;
    },
  } satisfies NodeRegistry;
}
