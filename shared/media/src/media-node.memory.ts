/** MediaNodeRegistry kept in process memory: single-instance mode without MySQL, and tests. */
import { MediaError } from './errors.ts';
import type { MediaNode, MediaNodeRegistry } from './media-node.port.ts';
import { validateMediaNode } from './media-node.validate.ts';

export function createMemoryMediaNodeRegistry(initial: readonly MediaNode[] = []): MediaNodeRegistry {
  const nodes = new Map<string, MediaNode>();
  for (const n of initial) nodes.set(n.id, copy(validateMediaNode(n)));
  let closed = false;
  const open = (): void => {
    if (closed) throw new MediaError('MEDIA_ERR_CLOSED', 'media node registry is closed');
  };
  const sorted = (): MediaNode[] => [...nodes.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    listEnabled: async () => (open(), sorted().filter((n) => n.enabled)),
    listAll: async () => (open(), sorted()),
    get: async (id) => (open(), nodes.get(id) ?? null),
    async upsert(node) {
      open();
      nodes.set(node.id, copy(validateMediaNode(node)));
    },
    remove: async (id) => (open(), nodes.delete(id)),
    async close() {
      closed = true;
    },
  } satisfies MediaNodeRegistry;
}

// Stored and handed out frozen, so a caller mutating its object cannot change the registry.
function copy(n: MediaNode): MediaNode {
  return Object.freeze({ ...n, rtpPortRange: Object.freeze({ ...n.rtpPortRange }) });
}
