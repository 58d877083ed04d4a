// GET /vms/nodes in cluster mode (SPEC NODE-2, CASC-1): the node table read fresh through the tracker
// (which also refreshes its routing view), each node with its online device count, and the cascade
// leader. FAIL-4: with MySQL unreachable the last good listing is shown rather than an error.
import { MAX_DRAIN_PERIOD_MS, type NodeRegistry, type NodeRow } from '@vms/cluster';
import { StorageError } from '../errors/catalog.ts';
import type { NodeDirectory, NodeView } from '../nodes/node-directory.port.ts';
import type { NodeTracker } from './node-tracker.ts';

/**
 * Paced drain (issue 14): the period that releases `onlineDevices` at `rate` per second, at least 1 s (and at
 * most the table's longest), so the other shards take a drained shard's devices at a rate they absorb —
 * unpaced, all of them re-register within one keepalive interval, however many there are.
 */
export function defaultDrainPeriodMs(onlineDevices: number, rate: number): number {
  return Math.min(MAX_DRAIN_PERIOD_MS, Math.max(MIN_DRAIN_PERIOD_MS, Math.ceil((Math.max(0, onlineDevices) / rate) * 1000)));
}
export const MIN_DRAIN_PERIOD_MS = 1000;

export function createClusterNodeDirectory(tracker: NodeTracker, registry: NodeRegistry, o: { drainRate: number }): NodeDirectory {
  return {
    async listNodes() {
      let rows: readonly NodeRow[];
      try {
        rows = await tracker.refresh();
      } catch (err) {
        const last = tracker.snapshot;
        if (last === null) throw new StorageError('node table', { cause: err });
        rows = last.rows;
      }
      return { nodes: rows.map(nodeView), cascadeLeader: rows.some((r) => r.online) ? tracker.cascadeLeader : null };
    },
    async setDraining(nodeCode, draining, periodMs) {
      let known: boolean;
      let period = periodMs ?? 0;
      try {
        if (periodMs === undefined) {
          // NODE-2 counts at the nodes' last heartbeats. A drain releases the node's own devices; an undrain
          // gives it back its share of its group's (returningDevices), so a returning shard does not pull them
          // all within one keepalive interval either.
          // Unknown node: setDraining says so.
          const rows = await tracker.refresh();
          period = defaultDrainPeriodMs(draining ? (rows.find((r) => r.code === nodeCode)?.onlineDeviceCount ?? 0) : returningDevices(rows, nodeCode), o.drainRate);
        }
        known = await registry.setDraining(nodeCode, draining, period);
      } catch (err) {
        throw new StorageError('node table', { cause: err });
      }
      if (!known) return null;
      await tracker.refresh().catch(() => undefined); // this instance's placement sees it at once
      return period;
    },
  } satisfies NodeDirectory;
}

/**
 * The devices an undrained node takes back: its share of what the group's serving shards hold (their online
 * devices over them and it). Its own count is left out: devices that moved away still count as online there
 * until its offline scan, so it would count them twice.
 */
export function returningDevices(rows: readonly NodeRow[], code: string): number {
  const self = rows.find((r) => r.code === code);
  if (self === undefined) return 0;
  const serving = rows.filter((r) => r.online && !r.draining && r.code !== code && r.placementGroup === self.placementGroup);
  return Math.ceil(serving.reduce((n, r) => n + r.onlineDeviceCount, 0) / (serving.length + 1));
}

function nodeView(r: NodeRow): NodeView {
  return {
    nodeCode: r.code,
    sipAddress: `${r.sipHost.includes(':') ? `[${r.sipHost}]` : r.sipHost}:${r.sipPort}`,
    internalBaseUrl: r.internalBaseUrl,
    cascadeNode: r.cascadeNode,
    online: r.online,
    onlineDeviceCount: r.onlineDeviceCount,
    startedAt: r.startedAt.getTime(),
    lastHeartbeatAt: r.lastHeartbeat.getTime(),
    version: r.version,
    draining: r.draining,
    drainedShare: r.drainedShare,
    joinedShare: r.joinedShare,
  };
}
