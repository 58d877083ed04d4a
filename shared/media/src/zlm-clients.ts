/**
 * One ZlmClient (and so one connection pool) per media node, rebuilt when the node's API URL or
 * secret changes in the registry. The signaling service keeps one of these for its lifetime.
 */
import { MediaError } from './errors.ts';
import type { MediaNode } from './media-node.port.ts';
import { createZlmClient, type ZlmClient, type ZlmClientOptions } from './zlm-client.ts';

export interface ZlmClients {
  clientFor(node: Pick<MediaNode, 'id' | 'apiBaseUrl' | 'secret'>): ZlmClient;
  /** Closes and forgets the client of a node that was removed. */
  drop(nodeId: string): Promise<void>;
  /** Idempotent; closes every client. */
  close(): Promise<void>;
}

interface Entry {
  client: ZlmClient;
  apiBaseUrl: string;
  secret: string;
}

export function createZlmClients(opts: ZlmClientOptions = {}): ZlmClients {
  const entries = new Map<string, Entry>();
  let closed = false;
  const drop = async (nodeId: string): Promise<void> => {
    const e = entries.get(nodeId);
    entries.delete(nodeId);
    await e?.client.close();
  };
  return {
    clientFor(node) {
      if (closed) throw new MediaError('MEDIA_ERR_CLOSED', 'ZLM clients are closed');
      const e = entries.get(node.id);
      if (e !== undefined && e.apiBaseUrl === node.apiBaseUrl && e.secret === node.secret) return e.client;
      // configuration changed (secret rotated, node moved): calls still in flight on the old client
      // reject with MEDIA_ERR_CLOSED; close() never rejects, so nothing is left floating
      if (e !== undefined) void e.client.close();
      const client = createZlmClient(node, opts);
      entries.set(node.id, { client, apiBaseUrl: node.apiBaseUrl, secret: node.secret });
      return client;
    },
    drop,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...entries.keys()].map(drop));
    },
  };
}
