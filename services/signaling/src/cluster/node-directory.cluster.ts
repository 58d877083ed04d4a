// GET /vms/nodes in cluster mode (SPEC NODE-2, CASC-1): the node table read fresh through the tracker
// (which also refreshes its routing view), each node with its online device count, and the cascade
// leader. FAIL-4: with MySQL unreachable the last good listing is shown rather than an error.
import type { NodeRegistry, NodeRow } from '@vms/cluster';
import { StorageError } from '../errors/catalog.ts';
import type { NodeDirectory, NodeView } from '../nodes/node-directory.port.ts';
import type { NodeTracker } from './node-tracker.ts';

export function createClusterNodeDirectory(tracker: NodeTracker, registry: NodeRegistry): NodeDirectory {
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
    async setDraining(nodeCode, draining) {
      let known: boolean;
      try {
        known = await registry.setDraining(nodeCode, draining);
      } catch (err) {
        throw new StorageError('node table', { cause: err });
      }
      if (known) await tracker.refresh().catch(() => undefined); // this instance's placement sees it at once
      return known;
    },
  } satisfies NodeDirectory;
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
  };
}
